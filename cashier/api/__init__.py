"""The cashier's REST API: wallet, ledger, deposits and withdrawals (amounts in cents)."""
