"""The only code that changes table state.

Every public command is one table command, written as a `@table_command` body (the
timer loop's as a `@room_command` one; `command.py`): it runs in one durable transaction
that first locks the table row, loads what it needs once, checks, applies the engine,
and at the end saves the hand, its seats and its events and broadcasts only after
commit (`tables.events`), all in one place. (A mute is the player's setting, not the
table's: `chat.chat_mute_set` locks no table.)
Lock order: table row, then (through the cashier) ledger accounts by id. Seat and hand
rows are only ever changed under their table's lock, so they need no lock of their own.

Modules import downwards only: `command` <- `dealing` <- `blind_options` <- `hands` <-
`play`, `seating`; `advance` and `admin` use `command` alone.
"""
