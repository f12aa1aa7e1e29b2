"""`run_bots`: N tables x K bots playing H hands each (or for a time) against a running room.

The database part (bot users, bot tables; `bots_prepare`) runs first, in a worker thread;
then one asyncio task per bot logs in, funds, plays and leaves (`bots_play`, which needs
no database), and one watchdog per table ends a table that makes no progress for
`stall_seconds` (no event, no answer) or whose bots wait on a snapshot for too long (a
gap that a resync could not heal).

The load test (`bench/load.py`) plays at human pace (`Pace`) for a `duration` after a
`warmup` over which the bots arrive, with the quick set-up (sessions made by the set-up,
no log-in form), and may shard the tables over several processes (`run_bots_sharded`:
one asyncio loop has its limits), each reporting its samples to the parent, which adds
them up. A `CpuSampler` reads the CPU of the room's processes and of the generator's
over the measuring window.
"""

import asyncio
import multiprocessing
import os
import pickle
import queue
import random
import time
from dataclasses import dataclass, field

from channels.db import database_sync_to_async
from django.db import connection

from tables.bots.cpu import CpuSampler
from tables.bots.player import Bot, BotSpec, Pace, Role, RunClock, TableRun, Trace
from tables.bots.report import BotReport, TableReport
from tables.bots.setup import (
    BOT_PASSWORD,
    BotTimers,
    TablePlan,
    bot_players_quick,
    bot_tables_open,
    bot_users_ensure,
)
from tables.bots.shard import shard_main
from tables.bots.strategy import PROFILES
from tables.bots.web import base_urls

# A snapshot asked for after a gap arrives in milliseconds; this long means it never will.
RESYNC_TIMEOUT = 10.0
WATCH_INTERVAL = 0.5
# The misbehaving roles of the second and third seat of each table, by table number: the
# first seat is always steady, so every table keeps one bot that plays by the book.
SECOND_SEAT_ROLES = (Role.SLEEPY, Role.FLAKY, Role.LOSSY)
THIRD_SEAT_ROLES = (Role.FLAKY, Role.LOSSY, Role.SLEEPY)
# The bots arrive over this share of the warm-up, so the room is settled when it ends.
ARRIVAL_SHARE = 0.8
# Seconds a shard process may take beyond the run's bound (start-up, the last report).
SHARD_GRACE = 60.0
# How often the parent looks for a dead shard while it waits for their reports.
SHARD_POLL_SECONDS = 1.0
# How often the generator checks that its event loop keeps up (a late wake-up is lag).
LAG_PROBE_SECONDS = 0.1


def role_for(*, table: int, position: int, misbehave: bool) -> Role:
    """The role of the bot at `position` (from 0) of the run's table number `table`."""
    if misbehave and position == 1:
        return SECOND_SEAT_ROLES[table % len(SECOND_SEAT_ROLES)]
    if misbehave and position == 2:
        return THIRD_SEAT_ROLES[table % len(THIRD_SEAT_ROLES)]
    return Role.STEADY


@dataclass(frozen=True)
class TableSetup:
    """A table of the run and the bots that will sit at it."""

    plan: TablePlan
    specs: tuple[BotSpec, ...]


@dataclass(frozen=True)
class RunOptions:
    """How a run plays (everything but the room, the tables and the bots)."""

    hands: int | None
    pace: Pace = field(default_factory=Pace)
    duration: float | None = None
    warmup: float = 0.0
    stall_seconds: float = 30.0
    timeout_seconds: float | None = None

    def clock(self) -> RunClock:
        """The run's clock, starting now."""
        measure_from = time.monotonic() + self.warmup
        ends = None if self.duration is None else measure_from + self.duration
        return RunClock(measure_from=measure_from, ends_at=ends)


def bots_prepare(
    *,
    tables: int,
    players: int,
    prefix: str,
    password: str,
    timers: BotTimers,
    seed: int | None,
    misbehave: bool,
    quick: bool,
    arrival_seconds: float = 0.0,
) -> list[TableSetup]:
    """Open the tables and make (or find) the bots; `quick`: sessions and wallets made
    here, without the log-in form (see tables.bots.setup)."""
    plans = bot_tables_open(count=tables, players=players, timers=timers)
    rng = random.Random(seed)  # noqa: S311 - play, not secrets
    if quick:
        made = bot_players_quick(
            prefix=prefix,
            buy_in_max=[plan.buy_in_max for plan in plans for _ in range(players)],
            password=password,
        )
        names = [player.username for player in made]
        # Thousands of rows inserted at once leave the planner's statistics of their
        # tables far behind, and a server with autovacuum off (the development machine's)
        # never brings them up to date: the table command's read of its seats then
        # joined them to every user row, one scan of accounts_user per command. Analyzed,
        # the room plans as one that has run a while under autovacuum would.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    else:
        names = bot_users_ensure(count=tables * players, prefix=prefix, password=password)
    setups = []
    for t, plan in enumerate(plans):
        specs = []
        for position in range(players):
            n = t * players + position
            specs.append(
                BotSpec(
                    username=names[n],
                    password=password,
                    seat=position + 1,
                    role=role_for(table=t, position=position, misbehave=misbehave),
                    profile=rng.choice(PROFILES),
                    seed=rng.getrandbits(64),
                    session_key=made[n].session_key if quick else None,
                    wallet=made[n].wallet if quick else 0,
                    start_delay=rng.uniform(0, arrival_seconds),
                )
            )
        setups.append(TableSetup(plan=plan, specs=tuple(specs)))
    return setups


async def bots_play(
    setups: list[TableSetup],
    *,
    url: str,
    options: RunOptions,
    clock: RunClock,
    trace: Trace | None = None,
) -> BotReport:
    """Play the tables until their hands are done or the clock ends, then leave."""
    http_base, ws_base = base_urls(url)
    report = BotReport(bots=sum(len(setup.specs) for setup in setups))
    runs = []
    bots: list[list[Bot]] = []
    for setup in setups:
        run = TableRun(plan=setup.plan, target_hands=options.hands, pace=options.pace, clock=clock)
        run.assigned = {spec.seat for spec in setup.specs}
        runs.append(run)
        bots.append(
            [
                Bot(
                    spec=spec,
                    run=run,
                    report=report,
                    http_base=http_base,
                    ws_base=ws_base,
                    trace=trace,
                )
                for spec in setup.specs
            ]
        )
    started = time.monotonic()
    tables_done = [
        asyncio.create_task(_table(run, table_bots, report, options.stall_seconds))
        for run, table_bots in zip(runs, bots, strict=True)
    ]
    probe = asyncio.create_task(_loop_lag(report, clock))
    try:
        async with asyncio.timeout(options.timeout_seconds):
            await asyncio.gather(*tables_done)
    except TimeoutError:
        report.problems.append(f"the run did not finish within {options.timeout_seconds} s")
        for task in tables_done:
            task.cancel()
        await asyncio.gather(*tables_done, return_exceptions=True)
    probe.cancel()
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


async def _loop_lag(report: BotReport, clock: RunClock) -> None:
    """Sample how late the event loop wakes up: a busy generator delays every message it
    reads, and its latencies would then be its own, not the room's."""
    while True:
        before = time.monotonic()
        await asyncio.sleep(LAG_PROBE_SECONDS)
        if clock.measuring():
            report.loop_lags.append(time.monotonic() - before - LAG_PROBE_SECONDS)


def _sampled(report: BotReport, sampler: CpuSampler) -> BotReport:
    """The report with the sampler's window and CPU figures in it."""
    sampler.finish()
    cpu = sampler.seconds()
    report.generator_cpu = cpu.pop("generator")
    report.cpu = cpu if sampler.root_pids else {}
    report.cpu_processes = sampler.processes()
    report.window_seconds = sampler.stopped - sampler.started
    return report


async def run_bots(
    url: str,
    tables: int,
    players_per_table: int,
    hands: int | None,
    *,
    prefix: str = "bot",
    password: str = BOT_PASSWORD,
    seed: int | None = None,
    misbehave: bool = True,
    timers: BotTimers | None = None,
    stall_seconds: float = 30.0,
    timeout_seconds: float | None = None,
    trace: Trace | None = None,
    pace: Pace | None = None,
    duration: float | None = None,
    warmup: float = 0.0,
    quick: bool = False,
    room_pids: frozenset[int] = frozenset(),
    database: str = "",
    procs: int = 1,
) -> BotReport:
    """Play `hands` hands at each of `tables` new or idle bot tables, then leave.

    `url` is the room's base URL (`ws://host:port` or `http://host:port`). `seed` makes
    the bots' choices repeatable (the deal is the room's). `misbehave` gives the second
    and third bot of each table a misbehaving role. `timeout_seconds` bounds the whole
    run; `trace(bot, "send" | "recv", frame)` sees every WebSocket frame.

    The load test's options: `pace` (human pace), `duration` (seconds to play after the
    `warmup`, over which the bots arrive; `hands` may then be None), `quick` (the quick
    set-up), `room_pids` (the room's root processes) with its `database` name to
    measure the room's CPU, and `procs` (shard the tables over that many processes).
    """
    if procs > 1 and trace is not None:
        raise ValueError("A trace sees one process's frames: trace unsharded runs only.")
    if tables < 1 or (hands is None and duration is None) or (hands is not None and hands < 1):
        raise ValueError("Play at least one hand (or for a duration) at one table.")
    setups = await database_sync_to_async(bots_prepare)(
        tables=tables,
        players=players_per_table,
        prefix=prefix,
        password=password,
        timers=timers or BotTimers(),
        seed=seed,
        misbehave=misbehave,
        quick=quick,
        arrival_seconds=warmup * ARRIVAL_SHARE,
    )
    options = RunOptions(
        hands=hands,
        pace=pace or Pace(),
        duration=duration,
        warmup=warmup,
        stall_seconds=stall_seconds,
        timeout_seconds=timeout_seconds,
    )
    clock = options.clock()
    sampler = CpuSampler(root_pids=set(room_pids), database=database, generator_pids={os.getpid()})
    if procs <= 1:
        sampler.window(clock.measure_from, clock.ends_at)
        report = await bots_play(setups, url=url, options=options, clock=clock, trace=trace)
    else:
        report = await _shards_play(
            setups, procs, url=url, options=options, clock=clock, sampler=sampler
        )
    return _sampled(report, sampler)


async def _shards_play(
    setups: list[TableSetup],
    procs: int,
    *,
    url: str,
    options: RunOptions,
    clock: RunClock,
    sampler: CpuSampler,
) -> BotReport:
    """Play the tables in `procs` processes, whole tables to each; merge their reports."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    shards = [setups[i::procs] for i in range(procs) if setups[i::procs]]
    processes = [
        context.Process(
            target=shard_main,
            args=(pickle.dumps((shard, url, options, clock)), results),
            name=f"bots-shard-{n}",
        )
        for n, shard in enumerate(shards)
    ]
    for process in processes:
        process.start()
    sampler.generator_pids |= {p.pid for p in processes if p.pid is not None}
    sampler.window(clock.measure_from, clock.ends_at)
    report = BotReport(procs=len(processes))
    waiting = len(processes)
    while waiting:
        try:
            report.merge(await asyncio.to_thread(results.get, timeout=SHARD_POLL_SECONDS))
            waiting -= 1
        except queue.Empty:
            # A shard that died sends no report: stop waiting once one has exited badly.
            if any(process.exitcode not in (None, 0) for process in processes):
                report.problems.append(f"{waiting} shard process(es) sent no report")
                break
    for process in processes:
        await asyncio.to_thread(process.join, SHARD_GRACE)
        if process.exitcode != 0:
            report.problems.append(f"{process.name} exited with {process.exitcode}")
            process.kill()
    return report


async def _table(run: TableRun, bots: list[Bot], report: BotReport, stall_seconds: float) -> None:
    """Run the table's bots; stop them all if the table stalls or a gap never heals."""
    tasks = [asyncio.create_task(bot.run()) for bot in bots]
    run.last_progress = time.monotonic()
    nudged = False
    try:
        while not all(task.done() for task in tasks):
            await asyncio.sleep(WATCH_INTERVAL)
            if run.winding_down and not nudged:
                nudged = True  # a table that deals no more may send its bots nothing
                for bot in bots:
                    await bot.nudge()
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
