"""The cashier: a double-entry chip ledger in integer cents, deposits and withdrawals."""
