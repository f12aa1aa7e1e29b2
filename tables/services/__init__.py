"""The only code that changes table state.

Every public function is one table command. It runs in one transaction that first locks
the table row (`locking.table_lock`), loads what it needs, applies the engine, saves the
hand and its events, and broadcasts only after commit (`tables.events`). Lock order:
table row, then (through the cashier) ledger accounts by id. Seat and hand rows are only
ever changed under their table's lock, so they need no lock of their own.
"""
