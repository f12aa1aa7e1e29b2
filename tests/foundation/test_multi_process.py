"""The README's multi-process set-up, run: two web processes, two timer loops and two
Celery workers.

Two daphne processes on two ports, two timer loops (one leads, the other stands by) and
two Celery workers (on a queue of this test's own) share the test's PostgreSQL database
and Redis. Four bots sit at ONE table, two
connected to each web process, and a spectator watches on each; they play a few hands
and leave. Then every viewer must have seen one numbered stream: a single snapshot (no
resync, no reconnect), then every version in order without a gap; both spectators
exactly the same messages, up to the table's last version; and each player the same
public part of every message as the spectators (a player's own form only adds what
that player may know). The ledger audit is clean, every chip back in a wallet.
"""

import asyncio
import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import websockets
from channels.db import database_sync_to_async
from django.utils import timezone
from websockets.typing import Origin

from cashier.audit import ledger_audit
from poker_room.celery import app as celery_app
from tables.bots.player import TableRun, frame_messages
from tables.bots.report import BotReport
from tables.bots.setup import BotTimers, bot_tables_open, bot_users_ensure
from tables.models import Hand, HandStatus, Heartbeat, Seat, Table
from tables.timers import HEARTBEAT
from tests.bots_across_processes import steady_bots
from tests.conftest import (
    ROOT,
    answers,
    free_port,
    processes_stop,
    room_process,
    wait_until_up,
)

# The suite's own timer loop is stopped: the two of this test's set-up are the room's.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("timers_stopped")]
PLAYERS = 4
HANDS = 4
# Long enough that a loaded machine does not time the bots out (a timeout would be
# fine for the stream, but then the run measures the clock, not the processes).
TIMERS = BotTimers(action_seconds=10, time_bank_seconds=0, pause_between_hands_ms=300)


def worker_args(queue: str, node: str) -> list[str]:
    return ["celery", "-A", "poker_room", "worker", "--pool=solo", "--loglevel=INFO",
            "-Q", queue, "-n", node, "--without-gossip", "--without-mingle"]  # fmt: skip


def answers_ping(node: str) -> bool:
    return bool(celery_app.control.ping(destination=[node], timeout=0.5))


@pytest.fixture
def two_of_each(queue) -> Iterator[list[str]]:
    """Two daphne processes (their base URLs), two timer loops and two workers, all on the
    test database."""
    with ExitStack() as stack:
        since = timezone.now()
        loops = [
            stack.enter_context(
                room_process(["manage", "run_timers"], log_name=f".pytest-multi-timers-{name}.log")
            )
            for name in "ab"
        ]
        workers = []
        for name in "ab":
            node = f"multi-{name}-{uuid.uuid4().hex[:6]}@{os.uname().nodename}"
            log_name = f".pytest-multi-{name}.log"
            proc = stack.enter_context(room_process(worker_args(queue, node), log_name=log_name))
            workers.append((proc, node))
        webs = []
        for name in "ab":
            port = free_port()
            args = ["daphne", "-b", "127.0.0.1", "-p", str(port), "poker_room.asgi:application"]
            proc = stack.enter_context(
                room_process(args, log_name=f".pytest-multi-daphne-{name}.log")
            )
            webs.append((proc, f"http://127.0.0.1:{port}"))
        for proc, url in webs:
            wait_until_up(proc, lambda url=url: answers(f"{url}/healthz"), "daphne")
        for proc, node in workers:
            wait_until_up(proc, lambda node=node: answers_ping(node), "a worker")
        wait_until_up(
            loops[0],
            lambda: Heartbeat.objects.filter(name=HEARTBEAT, at__gte=since).exists(),
            "a timer loop leading",
        )
        yield [url for _, url in webs]
        # All six stop side by side (the ExitStack would stop them one after the other).
        processes_stop([*loops, *(proc for proc, _ in workers), *(proc for proc, _ in webs)])


async def spectate(http_base: str, table_id: int, frames: list[dict[str, Any]]) -> None:
    """Watch the table without a session (a spectator) until cancelled."""
    ws_url = f"{http_base.replace('http', 'ws', 1)}/ws/tables/{table_id}/"
    async with websockets.connect(ws_url, origin=Origin(http_base)) as ws:
        async for raw in ws:
            frames.extend(frame_messages(json.loads(raw)))


def stream_of(viewer: str, frames: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """The viewer's versioned messages by version, checked: one snapshot, then each
    next version in order, none missing."""
    snapshots = [f for f in frames if f.get("type") == "snapshot"]
    assert len(snapshots) == 1, f"{viewer}: {len(snapshots)} snapshots (a resync or reconnect)"
    assert frames[0] is snapshots[0], f"{viewer}: something came before the snapshot"
    events = [f for f in frames[1:] if "v" in f]
    start = snapshots[0]["v"] + 1
    versions = [event["v"] for event in events]
    assert versions == list(range(start, start + len(versions))), f"{viewer}: {versions}"
    return {event["v"]: event for event in events}


def log_count(log_name: str, pattern: str) -> int:
    """How often a process logged `pattern` (daphne's access log, Celery's task lines)."""
    return len(re.findall(pattern, (ROOT / log_name).read_text()))


def _outcome(table_id: int) -> tuple[int, int, int, int]:
    table = Table.objects.get(pk=table_id)
    return (
        table.event_seq,
        Hand.objects.filter(table=table, status=HandStatus.FINISHED).count(),
        Hand.objects.filter(table=table, status=HandStatus.IN_PROGRESS).count(),
        Seat.objects.filter(table=table).count(),
    )


async def test_players_on_two_web_processes_see_one_stream(two_of_each):
    url_a, url_b = two_of_each
    names = await database_sync_to_async(bot_users_ensure)(count=PLAYERS, prefix="multi")
    (plan,) = await database_sync_to_async(bot_tables_open)(count=1, players=PLAYERS, timers=TIMERS)
    spectators: dict[str, list[dict[str, Any]]] = {"spectator A": [], "spectator B": []}
    watching = [
        asyncio.create_task(spectate(url, plan.id, frames))
        for url, frames in zip((url_a, url_b), spectators.values(), strict=True)
    ]
    async with asyncio.timeout(20):
        while not all(spectators.values()):
            await asyncio.sleep(0.05)

    run = TableRun(plan=plan, target_hands=HANDS, assigned=set(range(1, PLAYERS + 1)))
    report = BotReport(bots=PLAYERS)
    received: dict[str, list[dict[str, Any]]] = {name: [] for name in names}

    def trace(bot: str, direction: str, frame: dict[str, Any]) -> None:
        if direction == "recv":
            received[bot].extend(frame_messages(frame))

    # Seats 1 and 3 on A, 2 and 4 on B.
    bots = steady_bots(names, run=run, processes=[(url_a, report), (url_b, report)], trace=trace)
    started = time.monotonic()
    async with asyncio.timeout(120):
        await asyncio.gather(*(bot.run() for bot in bots))
    report.seconds = time.monotonic() - started
    event_seq, finished, in_progress, seated = await database_sync_to_async(_outcome)(plan.id)
    # The spectators get the last messages (the bots leaving) a moment after the commit.
    async with asyncio.timeout(10):
        while any(f[-1].get("v") != event_seq for f in spectators.values()):
            await asyncio.sleep(0.05)
    for task in watching:
        task.cancel()
    await asyncio.gather(*watching, return_exceptions=True)
    print(report.render())  # shown with -s
    sockets = {n: log_count(f".pytest-multi-daphne-{n}.log", r'"WSCONNECT /ws/') for n in "ab"}
    print(f"{finished} hands, {event_seq} versions; sockets by web process {sockets}")

    assert report.ok, report.render()
    assert (report.gaps, report.resyncs, report.reconnects) == (0, 0, 0), report.render()
    assert finished >= HANDS and in_progress == 0 and seated == 0
    # Each web process served two players and a spectator.
    assert sockets == {"a": PLAYERS // 2 + 1, "b": PLAYERS // 2 + 1}, sockets
    public_a, public_b = (stream_of(name, frames) for name, frames in spectators.items())
    assert public_a == public_b
    assert max(public_a) == event_seq
    for name, frames in received.items():
        own = stream_of(name, frames)
        assert own, f"{name} saw no table event"
        for version, message in own.items():
            public = public_a[version]
            assert {key: message.get(key) for key in public} == public, (name, version)
    audit = await database_sync_to_async(ledger_audit)()
    assert audit.ok, audit.summary()
