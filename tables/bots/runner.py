"""`run_bots`: N tables x K bots playing H hands each against a running room.

The database part (bot users, bot tables) runs first, in a worker thread; then one asyncio
task per bot logs in, funds, plays and leaves, and one watchdog per table ends a table
that makes no progress for `stall_seconds` (no event, no answer) or whose bots wait on a
snapshot for too long (a gap that a resync could not heal).
"""

import asyncio
import random
import time

from channels.db import database_sync_to_async

from tables.bots.player import Bot, BotSpec, Role, TableRun, Trace
from tables.bots.report import BotReport, TableReport
from tables.bots.setup import (
    BOT_PASSWORD,
    BotTimers,
    TablePlan,
    bot_tables_open,
    bot_users_ensure,
)
from tables.bots.strategy import PROFILES
from tables.bots.web import base_urls

# A snapshot asked for after a gap arrives in milliseconds; this long means it never will.
RESYNC_TIMEOUT = 10.0
WATCH_INTERVAL = 0.5
# The misbehaving roles of the second and third seat of each table, by table number: the
# first seat is always steady, so every table keeps one bot that plays by the book.
SECOND_SEAT_ROLES = (Role.SLEEPY, Role.FLAKY, Role.LOSSY)
THIRD_SEAT_ROLES = (Role.FLAKY, Role.LOSSY, Role.SLEEPY)


def role_for(*, table: int, position: int, misbehave: bool) -> Role:
    """The role of the bot at `position` (from 0) of the run's table number `table`."""
    if misbehave and position == 1:
        return SECOND_SEAT_ROLES[table % len(SECOND_SEAT_ROLES)]
    if misbehave and position == 2:
        return THIRD_SEAT_ROLES[table % len(THIRD_SEAT_ROLES)]
    return Role.STEADY


def _prepare(
    tables: int, players: int, prefix: str, password: str, timers: BotTimers
) -> tuple[list[TablePlan], list[str]]:
    names = bot_users_ensure(count=tables * players, prefix=prefix, password=password)
    return bot_tables_open(count=tables, players=players, timers=timers), names


async def run_bots(
    url: str,
    tables: int,
    players_per_table: int,
    hands: int,
    *,
    prefix: str = "bot",
    password: str = BOT_PASSWORD,
    seed: int | None = None,
    misbehave: bool = True,
    timers: BotTimers | None = None,
    stall_seconds: float = 30.0,
    timeout_seconds: float | None = None,
    trace: Trace | None = None,
) -> BotReport:
    """Play `hands` hands at each of `tables` new or idle bot tables, then leave.

    `url` is the room's base URL (`ws://host:port` or `http://host:port`). `seed` makes
    the bots' choices repeatable (the deal is the room's). `misbehave` gives the second
    and third bot of each table a misbehaving role. `timeout_seconds` bounds the whole
    run; `trace(bot, "send" | "recv", frame)` sees every WebSocket frame.
    """
    if tables < 1 or hands < 1:
        raise ValueError("Play at least one hand at one table.")
    http_base, ws_base = base_urls(url)
    plans, names = await database_sync_to_async(_prepare)(
        tables, players_per_table, prefix, password, timers or BotTimers()
    )
    rng = random.Random(seed)  # noqa: S311 - play, not secrets
    report = BotReport(bots=len(names))
    runs = [TableRun(plan=plan, target_hands=hands) for plan in plans]
    bots: list[list[Bot]] = []
    for t, run in enumerate(runs):
        run.assigned = set(range(1, players_per_table + 1))
        table_bots = []
        for position in range(players_per_table):
            spec = BotSpec(
                username=names[t * players_per_table + position],
                password=password,
                seat=position + 1,
                role=role_for(table=t, position=position, misbehave=misbehave),
                profile=rng.choice(PROFILES),
                seed=rng.getrandbits(64),
            )
            table_bots.append(
                Bot(
                    spec=spec,
                    run=run,
                    report=report,
                    http_base=http_base,
                    ws_base=ws_base,
                    trace=trace,
                )
            )
        bots.append(table_bots)
    started = time.monotonic()
    tables_done = [
        asyncio.create_task(_table(run, table_bots, report, stall_seconds))
        for run, table_bots in zip(runs, bots, strict=True)
    ]
    try:
        async with asyncio.timeout(timeout_seconds):
            await asyncio.gather(*tables_done)
    except TimeoutError:
        report.problems.append(f"the run did not finish within {timeout_seconds} s")
        for task in tables_done:
            task.cancel()
        await asyncio.gather(*tables_done, return_exceptions=True)
    report.seconds = time.monotonic() - started
    for run in runs:
        report.tables.append(
            TableReport(
                id=run.plan.id,
                name=run.plan.name,
                game=run.plan.game,
                structure=run.plan.structure,
                hands=len(run.ended),
                timeouts=len(run.timeouts),
            )
        )
    return report


async def _table(run: TableRun, bots: list[Bot], report: BotReport, stall_seconds: float) -> None:
    """Run the table's bots; stop them all if the table stalls or a gap never heals."""
    tasks = [asyncio.create_task(bot.run()) for bot in bots]
    run.last_progress = time.monotonic()
    try:
        while not all(task.done() for task in tasks):
            await asyncio.sleep(WATCH_INTERVAL)
            now = time.monotonic()
            stuck = [
                bot.name
                for bot in bots
                if bot.resyncing_since is not None and now - bot.resyncing_since > RESYNC_TIMEOUT
            ]
            if stuck:
                report.problems.append(f"{run.plan.name}: gap not healed for {stuck}")
                break
            if now - run.last_progress > stall_seconds:
                waiting = [bot.name for bot in bots if not bot.done]
                report.problems.append(
                    f"{run.plan.name}: stalled for {stall_seconds:.0f} s "
                    f"({len(run.ended)} hands done; waiting: {waiting})"
                )
                break
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
