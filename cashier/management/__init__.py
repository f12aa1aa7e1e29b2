"""Management commands of the cashier."""
