"""Bots that play the room over its public APIs: the demo filler and the load test's base.

`run_bots(url, tables, players_per_table, hands, ...) -> BotReport` (tables.bots.runner)
creates or reuses bot players and bot tables (ORM, as an admin would), then plays: each
bot logs in with the HTTP form, funds its wallet through the cashier API, and sits, plays
and leaves over the table WebSocket (tables.bots.player) with random-but-legal decisions
(tables.bots.strategy). `python manage.py play_bots` and `bench/load.py` are thin callers.

This package module imports nothing, so that a shard process of the load test
(tables.bots.shard) can import it before Django is set up.
"""
