"""The floor of a table decision on the room's stack: CPU per decision with no poker at all.

Issue #15 asks for at most 4 ms of CPU per player decision, all room processes together.
This measures what the same path costs with no application logic, layer by layer, so
that the engineers know how much of that budget the stack itself takes. Each mode runs
a minimal Channels consumer under one daphne process, and a load generator (a separate
process, `websockets` client) plays N tables x 6 sockets at human pace:

* `echo`: a frame in, the same frame back to the same socket (the WebSocket layer).
* `fanout`: a frame in from one of a table's 6 sockets, then one text frame to each of
  the 6 (the actor's included) and an ack to the actor; the fan-out is in-process (a
  dict of table -> consumers).
* `db`: as fanout, after a hop to the process's database thread
  (`database_sync_to_async`) running one durable transaction: a SELECT ... FOR NO KEY
  UPDATE of the table's row (its 2 KB jsonb state) and an UPDATE writing it back
  (v + 1), with Django's connection handling (by default the room's: its PostgreSQL
  backend `poker_room.postgres` and a psycopg pool, CONN_MAX_AGE 0; `--engine`).
* `db+redis`: as db, plus a PUBLISH of the frame after the commit (sync redis-py, from
  the database thread), and the fan-out done by the process's redis.asyncio pub/sub
  reader, one subscription per table (the shape of tables/feed.py).

`idle` (not run unless named in `--modes`) opens the sockets and plays nothing: its CPU
is divided by the decisions `--rate` would have made in the window, the share of each
figure that open sockets cost (pings, daphne's checks) whatever is played.

`--delivery inbox` hands the fanned-out frame to each consumer's own queue, dispatched by
the consumer's loop as the room's TableConsumer does (the socket's frames moved into the
same queue by a task of their own), instead of sending it directly; `--delivery
await-many` dispatches the queue and the socket with Channels' `await_many_dispatch`, as
the room's consumer did before (a task per source, a new one per message).

CPU is read from /proc/<pid>/stat (utime + stime) over the measured window for each
process involved: daphne ("web"), the PostgreSQL backends of the throwaway database
(found in pg_stat_activity), redis-server, and the load generator (reported apart).
Decisions are those the generator sent in the window; latencies are act -> ack on the
actor's socket and act -> frame on the next seat's socket.

It needs no room schema: it creates a throwaway database (`--database`, default
floor_bench) with one table `t(id bigint primary key, v bigint, state jsonb)`, one row
per table, and drops it at the end. By default it also starts a private redis-server on
a free port, so that other Redis users on the machine do not count (`--redis-url` to use
a running one). Run it from the checkout, with PostgreSQL on 127.0.0.1:5432:

    .venv/bin/python bench/floor.py                      # all four modes, ~4 minutes
    .venv/bin/python bench/floor.py --modes db db+redis --tables 50 --duration 40

It prints a line per mode as it goes and a markdown table at the end. Every process it
started is stopped and the database dropped on the way out, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import queue
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
MODES = ("echo", "fanout", "db", "db+redis")
# Sockets open, no decisions: CPU over the decisions `--rate` would have made there.
IDLE = "idle"
SEATS = 6
TICK = os.sysconf("SC_CLK_TCK")
APP_NAME = "floor_bench_web"  # the daphne process's PostgreSQL connections
ACK_TIMEOUT = 10.0  # seconds a decision waits for its ack before it counts as lost
STATE_BYTES = 2048  # the jsonb state of each row, about a hand's

# What the daphne process is told (environment), read by `application` below.
ENV_MODE = "FLOOR_MODE"
ENV_DELIVERY = "FLOOR_DELIVERY"
ENV_DATABASE = "FLOOR_DATABASE"  # JSON: host, port, user, name, engine
ENV_REDIS = "FLOOR_REDIS_URL"
ENV_FRAME = "FLOOR_FRAME_BYTES"
ENV_CHANNEL = "FLOOR_CHANNEL_PREFIX"


# --------------------------------------------------------------------------------------
# The server side: imported by daphne as `floor:application` (built on first access).
# --------------------------------------------------------------------------------------


def _django_databases(spec: dict[str, Any]) -> dict[str, Any]:
    """DATABASES as the room configures them (poker_room/settings/base.py), or plainer."""
    database: dict[str, Any] = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": spec["name"],
        "USER": spec["user"],
        "PASSWORD": "",
        "HOST": spec["host"],
        "PORT": str(spec["port"]),
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": {"application_name": APP_NAME},
    }
    if spec["engine"] == "persistent":
        database["CONN_MAX_AGE"] = None
        database["CONN_HEALTH_CHECKS"] = False
    else:
        database["OPTIONS"]["pool"] = {"min_size": 1, "max_size": 20, "timeout": 10.0}
        database["OPTIONS"]["pool"]["max_idle"] = 60.0
        if spec["engine"] == "room":
            database["ENGINE"] = "poker_room.postgres"
    return {"default": database}


def build_application() -> Any:
    """The ASGI application of the mode named in the environment."""
    mode = os.environ[ENV_MODE]
    delivery = os.environ.get(ENV_DELIVERY, "direct")
    spec = json.loads(os.environ[ENV_DATABASE])
    frame_bytes = int(os.environ.get(ENV_FRAME, "300"))
    channel_prefix = os.environ.get(ENV_CHANNEL, "floor_bench")

    from django.conf import settings

    settings.configure(
        DEBUG=False,
        SECRET_KEY="floor-bench-not-secret",  # noqa: S106 - a benchmark's throwaway key
        ALLOWED_HOSTS=["*"],
        INSTALLED_APPS=["channels"],
        DATABASES=_django_databases(spec),
        USE_TZ=True,
        TIME_ZONE="UTC",
        ASGI_APPLICATION="floor.application",
        LOGGING_CONFIG=None,
    )
    import django

    django.setup()
    if spec["engine"] == "room":
        import poker_room.postgres.base  # noqa: F401 - fail now, not at the first decision

    import redis
    import redis.asyncio
    from channels.db import database_sync_to_async
    from channels.exceptions import StopConsumer
    from channels.generic.websocket import AsyncWebsocketConsumer
    from channels.routing import ProtocolTypeRouter, URLRouter
    from channels.utils import await_many_dispatch
    from django.db import connection, transaction
    from django.urls import path

    from poker_room.socket_loop import dispatch_from_queue

    pad = "x" * max(0, frame_bytes - 90)
    tables: dict[int, set[Any]] = {}

    def frame_text(table: int, seat: int, seq: int) -> str:
        """The frame every seat gets for a decision (a stand-in for an `acted` event)."""
        return (
            f'{{"type":"event","table":{table},"seat":{seat},"seq":{seq},'
            f'"version":{seq},"pad":"{pad}"}}'
        )

    def decide(table: int) -> None:
        """One command's transaction, minus the command: lock and read, write, commit."""
        with transaction.atomic(durable=True), connection.cursor() as cursor:
            cursor.execute("SELECT v, state FROM t WHERE id = %s FOR NO KEY UPDATE", [table])
            _v, state = cursor.fetchone()
            cursor.execute("UPDATE t SET v = v + 1, state = %s WHERE id = %s", [state, table])

    publisher = redis.Redis.from_url(os.environ.get(ENV_REDIS, "redis://127.0.0.1:6379/0"))

    def decide_and_publish(table: int, text: str) -> None:
        decide(table)
        publisher.publish(f"{channel_prefix}.table.{table}", text.encode())

    async def deliver(table: int, text: str) -> None:
        for consumer in list(tables.get(table, ())):
            if delivery != "direct":
                consumer.inbox.put_nowait({"type": "floor.frame", "text": text})
            else:
                await consumer.send(text_data=text)

    class Feed:
        """The process's pub/sub reader: one subscription per table with sockets here."""

        def __init__(self) -> None:
            self.client = redis.asyncio.Redis.from_url(os.environ[ENV_REDIS])
            self.pubsub = self.client.pubsub()
            self.lock = asyncio.Lock()
            self.subscribed: set[int] = set()
            self.reader: asyncio.Task[None] | None = None

        async def join(self, table: int) -> None:
            if table in self.subscribed:
                return
            self.subscribed.add(table)
            async with self.lock:  # one connection for every subscription (tables/feed.py)
                await self.pubsub.subscribe(f"{channel_prefix}.table.{table}")
            if self.reader is None:
                self.reader = asyncio.get_running_loop().create_task(self.read_forever())

        async def read_forever(self) -> None:
            prefix = f"{channel_prefix}.table."
            while True:
                message = await self.pubsub.get_message(timeout=5.0)
                if message is None or message["type"] != "message":
                    continue
                table = int(message["channel"].decode().removeprefix(prefix))
                await deliver(table, message["data"].decode())

    feed: list[Feed] = []  # made on the event loop, at the first socket

    class FloorConsumer(AsyncWebsocketConsumer):
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            if delivery == "direct":
                await super().__call__(scope, receive, send)
                return
            self.scope = scope
            self.channel_layer = None
            self.base_send = send
            self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1000)
            if delivery == "await-many":
                with contextlib.suppress(StopConsumer):
                    await await_many_dispatch([receive, self.inbox.get], self.dispatch)
                return

            # As the room's TableConsumer: one queue, the socket's frames moved into it
            # a few at a time (the room's own loop).
            with contextlib.suppress(StopConsumer):
                await dispatch_from_queue(
                    receive=receive, queue=self.inbox, dispatch=self.dispatch, frames_at_once=20
                )

        async def connect(self) -> None:
            kwargs = self.scope["url_route"]["kwargs"]
            self.table = int(kwargs["table"])
            self.seat = int(kwargs["seat"])
            await self.accept()
            tables.setdefault(self.table, set()).add(self)
            if mode == "db+redis":
                if not feed:
                    feed.append(Feed())
                await feed[0].join(self.table)

        async def disconnect(self, code: int) -> None:
            tables.get(self.table, set()).discard(self)

        async def floor_frame(self, message: dict[str, Any]) -> None:
            await self.send(text_data=message["text"])

        async def receive(
            self, text_data: str | None = None, bytes_data: bytes | None = None
        ) -> None:
            if mode == "echo":
                await self.send(text_data=text_data)
                return
            seq = json.loads(text_data or "{}")["seq"]
            text = frame_text(self.table, self.seat, seq)
            if mode == "fanout":
                await deliver(self.table, text)
            elif mode == "db":
                await database_sync_to_async(decide)(self.table)
                await deliver(self.table, text)
            else:  # db+redis: the frame comes back through the feed's reader
                await database_sync_to_async(decide_and_publish)(self.table, text)
            await self.send(text_data=f'{{"type":"ack","seq":{seq}}}')

    return ProtocolTypeRouter(
        {"websocket": URLRouter([path("t/<int:table>/<int:seat>", FloorConsumer.as_asgi())])}
    )


_application: list[Any] = []


def __getattr__(name: str) -> Any:
    """`application`, built once, when daphne asks for it (not when run as a script)."""
    if name != "application":
        raise AttributeError(name)
    if not _application:
        _application.append(build_application())
    return _application[0]


# --------------------------------------------------------------------------------------
# The load generator: a process of its own (`--generate`), started by the orchestrator.
# --------------------------------------------------------------------------------------


@dataclass
class Decision:
    seq: int
    actor: int
    observer: int  # the seat whose copy of the frame is timed
    sent: float
    acked: asyncio.Event = field(default_factory=asyncio.Event)
    ack_at: float | None = None
    other_at: float | None = None
    frames: int = 0  # fanned-out frames received, all seats


class TableLoad:
    """One table's 6 sockets: reads all of them, acts in turn at human pace."""

    def __init__(self, table: int, sockets: list[Any], mode: str, rate: float, seed: int):
        self.table = table
        self.sockets = sockets
        self.mode = mode
        self.mean = 1.0 / rate
        self.rng = random.Random(seed)
        self.pending: dict[int, Decision] = {}
        self.done: list[Decision] = []
        self.seq = 0
        self.actor = self.rng.randrange(SEATS)
        self.unexpected = 0

    async def read(self, seat: int) -> None:
        with contextlib.suppress(Exception):
            async for raw in self.sockets[seat]:
                now = time.perf_counter()
                message = json.loads(raw)
                decision = self.pending.get(message.get("seq"))
                if decision is None:
                    self.unexpected += 1
                elif message["type"] == "event":
                    decision.frames += 1
                    if seat == decision.observer:
                        decision.other_at = now
                elif seat == decision.actor:  # "ack", or the echo of "act"
                    decision.ack_at = now
                    decision.acked.set()

    async def play(self, stop_at: float) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(self.rng.uniform(0, self.mean))  # tables out of step
        while loop.time() < stop_at:
            self.seq += 1
            actor, self.actor = self.actor, (self.actor + 1) % SEATS
            decision = Decision(self.seq, actor, (actor + 1) % SEATS, time.perf_counter())
            self.pending[self.seq] = decision
            await self.sockets[actor].send(json.dumps({"type": "act", "seq": self.seq}))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(decision.acked.wait(), ACK_TIMEOUT)
            self.done.append(decision)
            # People: a think time around the mean (half to one and a half of it).
            await asyncio.sleep(self.rng.uniform(0.5, 1.5) * self.mean)


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def generate(args: argparse.Namespace) -> dict[str, Any]:
    """Connect, warm up, say START, play `duration`, say END; the window's figures."""
    from websockets.asyncio.client import connect

    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(25)

    async def open_socket(table: int, seat: int) -> Any:
        async with gate:
            return await connect(f"{args.url}/t/{table}/{seat}", open_timeout=30)

    loads = []
    for table in range(1, args.tables + 1):
        sockets = await asyncio.gather(*(open_socket(table, s) for s in range(SEATS)))
        loads.append(TableLoad(table, list(sockets), args.mode, args.rate, args.seed + table))
    readers = [loop.create_task(load.read(seat)) for load in loads for seat in range(SEATS)]
    extension = loads[0].sockets[0].response.headers.get("Sec-WebSocket-Extensions", "")
    start = loop.time() + args.warmup
    stop = start + args.duration
    playing = [] if args.mode == IDLE else loads
    players = [loop.create_task(load.play(stop)) for load in playing]
    await asyncio.sleep(max(0.0, start - loop.time()))
    window_start = time.perf_counter()
    print("START", flush=True)
    await asyncio.sleep(max(0.0, stop - loop.time()))
    window_end = time.perf_counter()
    print("END", flush=True)
    await asyncio.gather(*players)
    await asyncio.sleep(1.0)  # the last frames of the last decisions
    for load in loads:
        for ws in load.sockets:
            with contextlib.suppress(Exception):
                await ws.close()
    for reader in readers:
        reader.cancel()

    measured = [d for load in loads for d in load.done if window_start <= d.sent < window_end]
    acked = [d for d in measured if d.ack_at is not None]
    ack_ms = [(d.ack_at - d.sent) * 1000 for d in acked if d.ack_at is not None]
    other_ms = [(d.other_at - d.sent) * 1000 for d in measured if d.other_at is not None]
    fanout = args.mode not in ("echo", IDLE)
    return {
        "decisions": len(measured),
        "window": window_end - window_start,
        "lost_acks": len(measured) - len(acked),
        "lost_frames": sum(SEATS - d.frames for d in measured) if fanout else 0,
        "frames_per_decision": (
            (sum(d.frames for d in measured) + len(acked)) / len(measured) if measured else 0
        ),
        "unexpected": sum(load.unexpected for load in loads),
        "ack_p50": percentile(ack_ms, 0.50),
        "ack_p99": percentile(ack_ms, 0.99),
        "other_p50": percentile(other_ms, 0.50),
        "other_p99": percentile(other_ms, 0.99),
        "compression": extension or "none",
    }


def generator_main(args: argparse.Namespace) -> int:
    result = asyncio.run(generate(args))
    print("RESULT " + json.dumps(result), flush=True)
    return 0


# --------------------------------------------------------------------------------------
# The orchestrator: database, Redis, daphne and generator per mode; CPU from /proc.
# --------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a process (all its threads) so far; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def free_port(start: int) -> int:
    for port in range(start, start + 200):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port from {start}")


def wait_for_port(port: int, process: subprocess.Popen[bytes], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[:4]} exited with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {seconds:g} s")


class Children:
    """Every process started here, stopped (TERM, then KILL) on the way out."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, command: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(command, **kwargs)
        self.processes.append(process)
        return process

    def stop(self, process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process in self.processes:
            self.processes.remove(process)

    def stop_all(self) -> None:
        for process in reversed(list(self.processes)):
            self.stop(process)


def hand_state(rng: random.Random, table: int) -> str:
    """About STATE_BYTES of JSON shaped like a hand's state."""
    cards = [r + s for r in "23456789TJQKA" for s in "cdhs"]
    rng.shuffle(cards)
    state: dict[str, Any] = {
        "table": table,
        "hand": rng.randrange(10**9),
        "street": "turn",
        "button": rng.randrange(SEATS),
        "board": cards[:4],
        "deck": cards[4:],
        "pots": [{"amount": rng.randrange(10**6), "seats": list(range(SEATS))}],
        "seats": [
            {
                "seat": seat,
                "user": rng.randrange(10**6),
                "stack": rng.randrange(10**6),
                "bet": rng.randrange(10**4),
                "hole": [rng.choice(cards) for _ in range(4)],
                "folded": rng.random() < 0.3,
                "all_in": False,
            }
            for seat in range(SEATS)
        ],
        "actions": [],
    }
    while len(json.dumps(state)) < STATE_BYTES:
        state["actions"].append(
            {"seat": rng.randrange(SEATS), "kind": "raise", "amount": rng.randrange(10**5)}
        )
    return json.dumps(state)


def server_connection(args: argparse.Namespace) -> Any:
    """An autocommit connection to the server's `postgres` database."""
    import psycopg

    return psycopg.connect(
        host=args.pg_host,
        port=args.pg_port,
        user=args.pg_user,
        dbname="postgres",
        autocommit=True,
    )


@contextlib.contextmanager
def throwaway_database(args: argparse.Namespace) -> Iterator[None]:
    """The database and its one table, dropped on the way out."""
    import psycopg
    from psycopg import sql

    admin = server_connection(args)
    name = sql.Identifier(args.database)
    try:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(name))
        try:
            with psycopg.connect(
                host=args.pg_host,
                port=args.pg_port,
                user=args.pg_user,
                dbname=args.database,
                autocommit=True,
            ) as db:
                db.execute("CREATE TABLE t (id bigint PRIMARY KEY, v bigint, state jsonb)")
                rng = random.Random(args.seed)
                with db.cursor() as cursor:
                    cursor.executemany(
                        "INSERT INTO t (id, v, state) VALUES (%s, 0, %s::jsonb)",
                        [(i, hand_state(rng, i)) for i in range(1, args.tables + 1)],
                    )
                db.execute("VACUUM ANALYZE t")
            yield
        finally:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
    finally:
        admin.close()


class Sampler:
    """CPU of the processes by group over a window, PostgreSQL backends found as they come.

    A reading each second keeps the last CPU of a backend that ends within the window; a
    backend first seen within the window counts from zero (its start is in the window).
    """

    def __init__(self, fixed: dict[str, list[int]], backends: Callable[[], list[int]]):
        self.fixed = fixed
        self.backends = backends
        self.base: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.group: dict[int, str] = {}
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def _read(self, first: bool) -> None:
        pids = {pid: group for group, ps in self.fixed.items() for pid in ps}
        pids.update({pid: "postgres" for pid in self.backends()})
        for pid, group in pids.items():
            seconds = cpu_seconds(pid)
            if seconds is None:
                continue
            self.group[pid] = group
            if pid not in self.base:
                self.base[pid] = seconds if first else 0.0
            self.last[pid] = seconds

    def start(self) -> None:
        self._read(first=True)
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stopping.wait(1.0):
            self._read(first=False)

    def halt(self) -> None:
        """Stop the readings (idempotent): before the monitoring connection closes."""
        self.stopping.set()
        if self.thread is not None:
            self.thread.join()

    def stop(self) -> dict[str, float]:
        self.halt()
        self._read(first=False)
        totals: dict[str, float] = {}
        for pid, group in self.group.items():
            totals[group] = totals.get(group, 0.0) + self.last[pid] - self.base[pid]
        return totals


def run_mode(
    mode: str, args: argparse.Namespace, children: Children, redis_url: str, redis_pid: int
) -> dict[str, Any]:

    port = free_port(args.port)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(ROOT), env.get("PYTHONPATH", "")])
    env[ENV_MODE] = "echo" if mode == IDLE else mode
    env[ENV_DELIVERY] = args.delivery
    env[ENV_REDIS] = redis_url
    env[ENV_FRAME] = str(args.frame_bytes)
    env[ENV_CHANNEL] = f"floor_bench.{os.getpid()}.{port}"
    env[ENV_DATABASE] = json.dumps(
        {
            "host": args.pg_host,
            "port": args.pg_port,
            "user": args.pg_user,
            "name": args.database,
            "engine": args.engine,
        }
    )
    env.pop("DJANGO_SETTINGS_MODULE", None)
    daphne = children.start(
        [
            sys.executable,
            "-m",
            "daphne",
            "-v",
            "0",
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "floor:application",
        ],
        env=env,
        cwd=ROOT,
    )
    generator = None
    try:
        wait_for_port(port, daphne)
        generator = children.start(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--generate",
                "--mode",
                mode,
                "--url",
                f"ws://127.0.0.1:{port}",
                "--tables",
                str(args.tables),
                "--rate",
                str(args.rate),
                "--warmup",
                str(args.warmup),
                "--duration",
                str(args.duration),
                "--seed",
                str(args.seed),
            ],
            stdout=subprocess.PIPE,
            cwd=ROOT,
        )
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            assert generator is not None and generator.stdout is not None  # noqa: S101
            for raw in generator.stdout:
                lines.put(raw.decode().strip())
            lines.put("EOF")

        threading.Thread(target=pump, daemon=True).start()

        def expect(word: str, seconds: float) -> str:
            deadline = time.monotonic() + seconds
            while True:
                try:
                    line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
                except queue.Empty:
                    raise RuntimeError(f"{mode}: no {word} from the generator") from None
                if line == "EOF":
                    raise RuntimeError(f"{mode}: the generator ended before {word}")
                if line.startswith(word):
                    return line

        monitor = server_connection(args)
        try:

            def backends() -> list[int]:
                rows = monitor.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
                    [args.database, APP_NAME],
                ).fetchall()
                return [pid for (pid,) in rows]

            sampler = Sampler(
                {"web": [daphne.pid], "redis": [redis_pid], "generator": [generator.pid]},
                backends,
            )
            expect("START", 120 + args.warmup)
            sampler.start()
            expect("END", args.duration + 60)
            cpu = sampler.stop()
        finally:
            sampler.halt()  # interrupted: no reading may outlive the connection
            monitor.close()
        result = json.loads(expect("RESULT", ACK_TIMEOUT + 60).removeprefix("RESULT "))
        generator.wait(timeout=30)
    finally:
        if generator is not None:
            children.stop(generator)
        children.stop(daphne)
    decisions = max(1, result["decisions"])
    if mode == IDLE:  # what the same window would have held at `--rate`
        decisions = result["decisions"] = round(args.tables * args.rate * result["window"])
    per = {group: cpu.get(group, 0.0) * 1000 / decisions for group in ("web", "postgres")}
    per["redis"] = cpu.get("redis", 0.0) * 1000 / decisions
    per["total"] = per["web"] + per["postgres"] + per["redis"]
    per["generator"] = cpu.get("generator", 0.0) * 1000 / decisions
    return {"mode": mode, **result, **per}


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def report_row(row: dict[str, Any]) -> str:
    other = (fmt(row["other_p50"], 1), fmt(row["other_p99"], 1))
    if row["mode"] in ("echo", IDLE):
        other = ("-", "-")
    cells = [
        row["mode"],
        f"({row['decisions']})" if row["mode"] == IDLE else str(row["decisions"]),
        f"{row['decisions'] / row['window']:.1f}",
        fmt(row["web"]),
        fmt(row["postgres"]),
        fmt(row["redis"]),
        f"**{fmt(row['total'])}**",
        fmt(row["generator"]),
        f"{fmt(row['ack_p50'], 1)} / {fmt(row['ack_p99'], 1)}",
        f"{other[0]} / {other[1]}",
        f"{row['frames_per_decision']:.2f}",
        f"{row['lost_acks']}/{row['lost_frames']}",
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| mode | decisions | decisions/s | web ms | postgres ms | redis ms | total ms "
    "| generator ms | act->ack p50/p99 ms | act->other seat p50/p99 ms "
    "| frames in/decision | lost acks/frames |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def start_redis(children: Children, args: argparse.Namespace) -> tuple[str, int]:
    """A private redis-server (or the one of `--redis-url`): its URL and pid."""
    import redis

    if args.redis_url:
        pid = int(redis.Redis.from_url(args.redis_url).info("server")["process_id"])
        return args.redis_url, pid
    port = free_port(args.port + 100)
    server = children.start(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
    )
    wait_for_port(port, server)
    return f"redis://127.0.0.1:{port}/0", server.pid


def orchestrate(args: argparse.Namespace) -> int:
    def terminated(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminated)
    children = Children()
    rows = []
    engine = {
        "room": "the room's: poker_room.postgres backend + psycopg pool (min 1, max 20), "
        "CONN_MAX_AGE 0",
        "django": "Django's postgresql backend + psycopg pool (check on every loan)",
        "persistent": "Django's postgresql backend, one persistent connection, no pool",
    }[args.engine]
    try:
        with throwaway_database(args):
            redis_url, redis_pid = start_redis(children, args)
            print(
                f"# floor: {args.tables} tables x {SEATS} sockets, {args.rate:.3f} "
                f"decisions/s per table, {args.duration:g} s measured after "
                f"{args.warmup:g} s; database connections: {engine}; delivery: "
                f"{args.delivery}; redis {redis_url} (pid {redis_pid})",
                file=sys.stderr,
                flush=True,
            )
            for mode in args.modes:
                row = run_mode(mode, args, children, redis_url, redis_pid)
                rows.append(row)
                print(
                    f"# {mode}: {row['decisions']} decisions, web {row['web']:.2f} + "
                    f"postgres {row['postgres']:.2f} + redis {row['redis']:.2f} = "
                    f"{row['total']:.2f} ms/decision (generator {row['generator']:.2f}); "
                    f"compression: {row['compression']}",
                    file=sys.stderr,
                    flush=True,
                )
    except KeyboardInterrupt:
        print("# interrupted", file=sys.stderr)
        return 130
    finally:
        children.stop_all()
    print(
        f"\nCPU ms per decision, {args.tables} tables x {SEATS} sockets, one daphne, "
        f"{args.duration:g} s; connections: {engine}; delivery: {args.delivery}\n"
    )
    print(HEADER)
    for row in rows:
        print(report_row(row))
    return 0


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--modes", nargs="+", choices=(IDLE, *MODES), default=list(MODES))
    add("--tables", type=int, default=50)
    add("--rate", type=float, default=1 / 2.8, help="Decisions per second per table.")
    add("--duration", type=float, default=40.0, help="Seconds measured.")
    add("--warmup", type=float, default=6.0, help="Seconds played before measuring.")
    add("--frame-bytes", type=int, default=300, help="Size of the fanned-out frame.")
    add("--delivery", choices=("direct", "inbox", "await-many"), default="direct")
    add("--engine", choices=("room", "django", "persistent"), default="room")
    add("--database", default="floor_bench", help="Throwaway database (dropped!).")
    add("--pg-host", default="127.0.0.1")
    add("--pg-port", type=int, default=5432)
    add("--pg-user", default="postgres")
    add("--redis-url", default=None, help="Use this Redis, not a private redis-server.")
    add("--port", type=int, default=8470, help="First port tried for daphne.")
    add("--seed", type=int, default=15)
    # The load generator's own process (started by the orchestrator).
    add("--generate", action="store_true", help=argparse.SUPPRESS)
    add("--mode", choices=(IDLE, *MODES), default="echo", help=argparse.SUPPRESS)
    add("--url", default="", help=argparse.SUPPRESS)
    return parser


def main() -> int:
    parser = arguments()
    args = parser.parse_args()
    if args.generate:
        return generator_main(args)
    if not args.database.startswith("floor_"):
        parser.error("--database must start with floor_ (it is dropped)")
    if not 1 <= args.tables <= 500 or args.rate <= 0 or args.duration <= 0:
        parser.error("--tables 1..500, --rate and --duration above 0")
    return orchestrate(args)


if __name__ == "__main__":
    sys.exit(main())
