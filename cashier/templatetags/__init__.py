"""Template filters of the cashier."""
