"""One bot: a player who logs in, funds its wallet, sits down and plays over the WebSocket.

A `Bot` behaves as a browser client must (docs/protocol.md):

* It keeps the table's stream version `v`. A message whose `v` is not the next one means
  one was lost (channel layers deliver at most once): it asks for a `snapshot`, holds the
  events that arrive meanwhile, and goes on from the snapshot's `v`, dropping what the
  snapshot already covers. After a reconnect it starts again from the connect snapshot.
* It answers only its own `turn` (the private copy, the one with `legal_actions`), once
  per turn, and names the turn in its `act` so that a late action is refused as stale
  rather than applied to a later decision.
* Every command gets an answer (`ack` or `error` with the same `seq`). An error is
  unexpected unless the step that sent the command deliberately misbehaved.

Roles make some bots misbehave on purpose, the way real clients do: a SLEEPY bot lets
its clock run out now and then (never twice running, which would sit it out) and then
sends the late action anyway, expecting `stale` or `not_your_turn`; a FLAKY bot drops its
connection on its turn and reconnects (resync from the snapshot, the reconnect bonus); a
LOSSY bot pretends it never got an event, as an at-most-once layer may do, and heals the
gap with a snapshot.

The bots of one table share a `TableRun`: it counts the table's hands and tells the bots
when the run's hands have been started (or its time is up), so that they sit out and
then leave.

At human pace (`Pace`, the load test's), a bot thinks a random while before each action,
lets a share of its turns time out (never two running, which would sit it out), and now
and then leaves between hands and comes back after a pause, with a new connection, as
a player closing the tab and opening it again. It also measures, while the run's clock
says so (`RunClock`, after the warm-up and before the end): the ack of its own `act`,
the arrival of the `acted` event on the other players' sockets (the sender stamps its
`act` in the table's `stamps`, by hand, seat and turn; every other bot of the table, in
the same process, matches the `acted` to the `turn` announced before it), and how late
its own timeout came after the `deadline` of its `turn` (wall clocks of one machine).

A room that restarts (its web process killed or redeployed) is ridden through as the
browser does (static/js/table/socket.js): the connection is lost without an error close,
new ones are refused for a while, and the bot reconnects with exponential backoff (1 s to
15 s, jittered) for up to `RECONNECT_GIVE_UP` seconds, then goes on from the snapshot. A
connection closed 4429 (the room's limits per viewer) is tried again the same way. A
command whose answer was lost with the connection is settled from that snapshot (a `sit`
is seen done or not; a `sit_out`, `sit_in` or `leave` is asked again if still needed).
Closes with an error code (1011...) stay problems: they are the room's bugs, not restarts.

A command answered `server_error` (the room's database or Redis failed: it may or may not
have been carried out) is a problem to report too, and is settled the same way, on the
same connection, from a fresh snapshot, as docs/protocol.md asks of every client: what
it was for is asked again if still needed, and a decision is made again. A snapshot the
room could not answer is asked again after a backoff (`SNAPSHOT_RETRY_SECONDS`), the
stream held meanwhile: a bot that never asked again held its stream for good, and never
acted, sat out or left again (issue #46).
"""

import asyncio
import contextlib
import functools
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.typing import Origin

from tables.bots.report import BotReport
from tables.bots.setup import FUND_LOW_BUY_INS, FUND_TARGET_BUY_INS, TablePlan
from tables.bots.strategy import Profile, choose_action
from tables.bots.web import RoomSession, WebError
from tables.commands import COMMANDS, Command, Leave, Sit, SitIn, SitOut, Snapshot, TopUp

# Seconds; a message stream can be quiet for a whole decision (3 s at bot tables).
CONNECT_TIMEOUT = 10
# Seconds before a bot whose `sit_in` was refused tries to rejoin again.
REJOIN_RETRY = 2.0
# Seconds before a bot refused a seat by a room past its capacity (`room_busy`) asks again.
SEAT_RETRY = 15.0
# Share of decisions that a misbehaving bot spoils, and how often a lossy bot "loses" one.
SLEEP_RATE = 0.25
DISCONNECT_RATE = 0.2
DROP_RATE = 0.05
# Share of the chances a bot takes to straddle or overblind when the room offers one.
BLIND_OPTION_RATE = 0.3
# What an act meets when its turn ended on the way (`OVERTAKEN_WAIT`: seconds it waits for
# the table's stream to say how).
OVERTAKEN_CODES = frozenset({"stale", "not_your_turn"})
OVERTAKEN_WAIT = 5.0
# How many of a bot's last turns ended without its act are remembered, and how.
TURNS_ENDED_KEPT = 8
# What a straddle or overblind request may meet when the table moved meanwhile.
BLIND_OPTION_REFUSALS = frozenset(
    {"blind_option_not_allowed", "blind_option_seat", "blind_option_cannot_cover"}
)
# Seconds a message that came early waits for the missing one before a resync.
GAP_GRACE = 0.5
# Connections the room may drop under one bot (with an error close) before it gives up.
MAX_SERVER_CLOSES = 5
# Reconnecting after the room went away: delays as the browser's, and how long to try.
BACKOFF_SECONDS = (1, 2, 4, 8, 15)
RECONNECT_GIVE_UP = 90.0
# Close codes of a server that is going away or asks to be tried later, not failing:
# going away, restart, try later, and too many sockets or connects too fast for this
# viewer (4429, tables/viewer_limits.py: the load test's bots all share 127.0.0.1).
# A connection lost without a close frame (1006: the process died) counts the same.
RESTART_CLOSE_CODES = frozenset({1001, 1012, 1013, 4429})
# Unexpected errors kept verbatim in the report (the counts hold them all).
PROBLEM_SAMPLES = 20
# The answer to a command the room may or may not have carried out (docs/protocol.md).
SERVER_ERROR = "server_error"
# A snapshot the room could not answer is asked again after these delays (seconds,
# jittered; the last repeated while it keeps failing).
SNAPSHOT_RETRY_SECONDS = (0.5, 1, 2, 4, 8)

Trace = Callable[[str, str, dict[str, Any]], None]


class Role(StrEnum):
    STEADY = "steady"
    SLEEPY = "sleepy"
    FLAKY = "flaky"
    LOSSY = "lossy"


@dataclass(frozen=True)
class BotSpec:
    """Who a bot is and how it plays.

    `session_key` and `wallet`: logged in and funded by the set-up (else the bot logs in
    with the form and funds itself); `start_delay`: seconds before it comes to the table.
    """

    username: str
    password: str
    seat: int
    role: Role
    profile: Profile
    seed: int
    session_key: str | None = None
    wallet: int = 0
    start_delay: float = 0.0


@dataclass(frozen=True)
class Pace:
    """How fast the bots play: at once by default, or as people do.

    `think`: seconds before each action, drawn from this range; `timeout_share`: the share
    of turns left to time out; `leave_share`: the chance, after each hand played, of
    leaving the table for `away` seconds (drawn from that range) and coming back.
    """

    think: tuple[float, float] = (0.0, 0.0)
    timeout_share: float = 0.0
    leave_share: float = 0.0
    away: tuple[float, float] = (5.0, 15.0)


@dataclass(frozen=True)
class RunClock:
    """When the run measures (`time.monotonic()` values) and when it ends, if by time."""

    measure_from: float = 0.0
    ends_at: float | None = None

    def measuring(self) -> bool:
        now = time.monotonic()
        return now >= self.measure_from and (self.ends_at is None or now < self.ends_at)

    def over(self) -> bool:
        return self.ends_at is not None and time.monotonic() >= self.ends_at

    def phase(self) -> str:
        """The part of the run now, to place a problem in it."""
        if time.monotonic() < self.measure_from:
            return "arriving"
        return "winding down" if self.over() else "measured"


@dataclass
class TableRun:
    """What the bots of one table share: the hands seen, the progress clock, the goal."""

    plan: TablePlan
    target_hands: int | None
    pace: Pace = Pace()
    clock: RunClock = RunClock()
    started: set[int] = field(default_factory=set)
    ended: set[int] = field(default_factory=set)
    timeouts: set[int] = field(default_factory=set)
    assigned: set[int] = field(default_factory=set)
    last_progress: float = field(default_factory=time.monotonic)
    # When each `act` was sent (`time.perf_counter()`), by (hand, seat, turn).
    stamps: dict[tuple[int, int, int], float] = field(default_factory=dict)

    @property
    def winding_down(self) -> bool:
        """The run's last hand has started, or its time is up: deal no more, then leave."""
        return (
            self.target_hands is not None and len(self.started) >= self.target_hands
        ) or self.clock.over()

    def saw(self, message: dict[str, Any]) -> None:
        """Count a table event (each bot reports what it sees; sets deduplicate)."""
        self.last_progress = time.monotonic()
        kind = message.get("type")
        if kind == "hand_started":
            self.started.add(message["hand"])
        elif kind == "hand_ended":
            self.ended.add(message["hand"])
            for key in [key for key in self.stamps if key[0] == message["hand"]]:
                del self.stamps[key]
        elif kind == "timed_out":
            self.timeouts.add(message["v"])


@dataclass(frozen=True)
class Pending:
    """A command waiting for its answer."""

    cmd: str
    sent_at: float
    expected: frozenset[str] = frozenset()
    on_ack: Callable[[], None] | None = None
    on_error: Callable[[str], None] | None = None
    # The connection went before the answer came: settle what the command was for.
    on_lost: Callable[[], None] | None = None
    # An act's turn, (hand, turn), and that turn's deadline (epoch seconds) if known.
    turn: tuple[int, int] | None = None
    deadline: float | None = None


class BotFailure(Exception):
    """Something that ends this bot's run (the report says what)."""


class RoomWentAway(Exception):
    """The room closed the connection without an error (shutting down or restarting)."""


def frame_messages(frame: Any) -> list[dict[str, Any]]:
    """The messages of one frame the room sent: a command's stream messages come as a
    JSON array in one frame, anything else as one object (docs/protocol.md)."""
    return frame if isinstance(frame, list) else [frame]


def room_went_away(exc: BaseException) -> bool:
    """Whether `exc` means the room is restarting (reconnect later), not failing."""
    if isinstance(exc, RoomWentAway | TimeoutError | OSError):
        return True  # refused, reset, or no answer to the handshake in time
    if isinstance(exc, websockets.ConnectionClosed):
        return exc.rcvd is None or exc.rcvd.code in RESTART_CLOSE_CODES
    if isinstance(exc, websockets.InvalidStatus):
        return exc.response.status_code >= 500  # a proxy in front: 502/503 meanwhile
    # The handshake was cut short (the server died while answering it).
    return isinstance(exc, websockets.InvalidMessage)


def _failure_kind(exc: BaseException) -> str:
    """What a failed connection attempt met, for the report's counts."""
    if isinstance(exc, websockets.InvalidStatus):
        return f"http_{exc.response.status_code}"
    if isinstance(exc, websockets.ConnectionClosed):
        return f"closed_{exc.rcvd.code if exc.rcvd else 1006}"
    return type(exc).__name__


class Bot:
    def __init__(
        self,
        *,
        spec: BotSpec,
        run: TableRun,
        report: BotReport,
        http_base: str,
        ws_base: str,
        trace: Trace | None = None,
    ) -> None:
        self.spec = spec
        self.name = spec.username
        self.run_ = run
        self.report = report
        self.http_base = http_base
        self.ws_url = f"{ws_base}/ws/tables/{run.plan.id}/"
        self.trace = trace
        self.rng = random.Random(spec.seed)  # noqa: S311 - play, not secrets
        self.session = RoomSession(http_base)
        self.ws: ClientConnection | None = None
        self.seq = 0
        self.pending: dict[int, Pending] = {}
        # The stream: version applied, and the events held while a snapshot is awaited.
        self.version = 0
        self.resyncing_since: float | None = None
        self.held: list[dict[str, Any]] = []
        # A snapshot of ours is on its way; another is due once it has come; the snapshots
        # the room could not answer in a row.
        self.snapshot_asked = False
        self.resync_again = False
        self.snapshot_failures = 0
        # Messages that came ahead of a missing one, while it may still arrive (below).
        self.early: dict[int, dict[str, Any]] = {}
        self.gap_timer: asyncio.Task[None] | None = None
        # The table as this bot knows it.
        self.stake: dict[str, Any] = {}
        self.timers: tuple[int, int] = (0, 0)
        self.seat: int | None = None
        self.occupied: set[int] = set()
        self.table_seats = 0
        self.status = ""
        self.stack = 0
        self.hand: int | None = None
        self.in_hand = False
        self.answered: set[tuple[int, int]] = set()
        self.slept_last_turn = False
        self.spoiled = False
        # The turn now announced at the table (hand, seat, turn), the turn of ours waiting
        # for our action (hand, turn), and our last turn's deadline (hand, epoch seconds).
        self.table_turn: tuple[int, int, int] | None = None
        self.turn_open: tuple[int, int] | None = None
        self.turn_seen_at = 0.0  # when our last turn reached us (`time.perf_counter()`)
        # How our last few turns closed before our act was taken, as the stream told, by
        # (hand, turn): "hand_ended", "moved_on", "timed_out", or "resynced" (a snapshot
        # replaced the news); the event is set at each news.
        self.turns_ended: dict[tuple[int, int], str] = {}
        self.turn_end_news = asyncio.Event()
        self.deadline: tuple[int, float] | None = None
        # Human pace: leaving after this hand, then away from the table for a while.
        self.breaking = False
        self.away = False
        # What this bot asked for.
        self.sit_sent = False
        self.sit_retried = False
        self.rejoin_pending = False
        self.sit_out_sent = False
        self.leave_sent = False
        self.drop_connection = False
        self.done = False
        # The straddle/overblind options the room last said are open to us (`blind_options`
        # of our own copy of a message), and whether we have yet to decide on them.
        self.blind_options: dict[str, Any] | None = None
        self.blind_options_new = False
        # A `sit` (its buy-in) or a `top_up` whose answer was lost with a connection.
        self.unsure_sit: int | None = None
        self.leave_unsure = False
        self.books_unsure = False
        self.ws_got_snapshot = False
        self.back_from_away = False  # the connection being opened follows a room restart
        # Money: the wallet at the start, what went to the table, what came back from it,
        # what was deposited later.
        self.wallet_start = 0
        self.money_in = 0
        self.money_out = 0
        self.deposited = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.ever_seated = False

    # -- the run ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Log in, fund, play until the table's hands are done, leave, check the wallet."""
        try:
            await asyncio.sleep(self.spec.start_delay)
            if self.spec.session_key is not None:
                self.session.use_session(self.spec.session_key)
                self.wallet_start = self.spec.wallet
            else:
                await asyncio.to_thread(
                    self.session.login, username=self.name, password=self.spec.password
                )
                self.wallet_start = await self._fund()
            first = True
            drops = 0
            away_since: float | None = None  # the room is restarting since then
            attempt = 0
            while not self.done:
                if away_since is not None:
                    if self.run_.winding_down and self.seat is None and not self.sit_sent:
                        break  # never sat down and the run is over: nothing to take home
                    if time.monotonic() - away_since > RECONNECT_GIVE_UP:
                        raise BotFailure(f"the room stayed away for {RECONNECT_GIVE_UP:.0f} s")
                    base = BACKOFF_SECONDS[min(attempt, len(BACKOFF_SECONDS) - 1)]
                    attempt += 1
                    await asyncio.sleep(base * self.rng.uniform(0.8, 1.2))
                    self.report.reconnects += 1
                elif self.away:
                    await asyncio.sleep(self.rng.uniform(*self.run_.pace.away))
                    self._back()
                    if self.run_.winding_down:
                        break
                elif not first:
                    # Come back a moment later, as a browser on a flaky network does.
                    await asyncio.sleep(self.rng.uniform(0.1, 0.5))
                    self.report.reconnects += 1
                first = False
                try:
                    self.back_from_away = away_since is not None
                    await self._connection()
                    away_since, attempt = None, 0
                except (websockets.WebSocketException, RoomWentAway, OSError) as exc:
                    if self.ws_got_snapshot:
                        away_since, attempt = None, 0  # it was up: a new absence starts
                    if room_went_away(exc):
                        # Restarting: come back with backoff, go on from the snapshot.
                        if self.ws_got_snapshot:
                            self.report.restarts_seen += 1
                        else:
                            self.report.connect_failures += 1
                            self.report.connect_errors[_failure_kind(exc)] += 1
                        if away_since is None:
                            away_since = time.monotonic()
                    elif isinstance(exc, websockets.ConnectionClosed):
                        # The room dropped us with an error: a fault to report, but a
                        # client reconnects and goes on from the snapshot (so that the
                        # bots still leave, chips home).
                        drops += 1
                        self.report.server_closes += 1
                        self.problem(f"the room closed the connection ({exc})")
                        if drops > MAX_SERVER_CLOSES:
                            raise
                    else:
                        raise
                    # The answer to an act may be lost with it: decide again from the snapshot.
                    self.answered.clear()
            await self._wallet_check()
        except (WebError, BotFailure, OSError, websockets.WebSocketException) as exc:
            self.problem(f"{type(exc).__name__}: {exc}")
        finally:
            for task in self.tasks:
                task.cancel()

    async def _fund(self) -> int:
        """Deposit through the cashier API when the wallet is low; return the balance."""
        high = self.run_.plan.buy_in_max
        balance, deposited = await asyncio.to_thread(
            self.session.fund, low=FUND_LOW_BUY_INS * high, target=FUND_TARGET_BUY_INS * high
        )
        if deposited:
            self.report.deposits += 1
        return balance

    async def _connection(self) -> None:
        """One WebSocket connection: from its snapshot until done or a deliberate drop.

        Raises when the room closed it or could not be reached (`ws_got_snapshot` then
        says whether it had been connected).
        """
        headers = {"Cookie": self.session.cookie_header()}
        self.drop_connection = False
        self.ws_got_snapshot = False
        self.resyncing_since = None
        self.snapshot_asked = self.resync_again = False
        self.snapshot_failures = 0
        self.held.clear()
        self.early.clear()
        async with websockets.connect(
            self.ws_url,
            origin=Origin(self.http_base),
            additional_headers=headers,
            open_timeout=CONNECT_TIMEOUT,
        ) as ws:
            self.ws = ws
            try:
                async for raw in ws:
                    frame = json.loads(raw)
                    if self.trace:
                        self.trace(self.name, "recv", frame)
                    for message in frame_messages(frame):
                        await self.on_message(message)
                    # Done or away: close once every command has its answer.
                    if self.drop_connection or ((self.done or self.away) and not self.pending):
                        break
                else:
                    if not (self.done or self.away):
                        # A normal close we did not ask for: the server is shutting down.
                        raise RoomWentAway(f"closed by the room ({ws.close_code})")
            finally:
                self.ws = None
                if self.gap_timer is not None:
                    self.gap_timer.cancel()
                    self.gap_timer = None
                lost = list(self.pending.values())
                self.pending.clear()
                self.report.answers_lost += len(lost)
                for pending in lost:
                    if pending.on_lost is not None:
                        pending.on_lost()

    async def _wallet_check(self) -> None:
        """After leaving, the wallet holds what it had, less buy-ins, plus the stack."""
        if not self.sit_sent:
            return
        if self.books_unsure:
            self.report.books_unverified += 1  # the ledger audit still checks every chip
            return
        balance = await asyncio.to_thread(self.session.wallet_balance)
        expected = self.wallet_start + self.deposited - self.money_in + self.money_out
        if balance != expected:
            self.problem(f"wallet {balance} after leaving, expected {expected}")

    def problem(self, text: str) -> None:
        if len(self.report.problems) < PROBLEM_SAMPLES:
            where = f"{self.name} at {self.run_.plan.name} ({self.run_.clock.phase()})"
            self.report.problems.append(f"{where}: {text}")

    # -- sending ---------------------------------------------------------------------------

    async def send(
        self,
        command: Command,
        *,
        expected: frozenset[str] = frozenset(),
        on_ack: Callable[[], None] | None = None,
        on_error: Callable[[str], None] | None = None,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        if self.ws is None:
            return
        self.seq += 1
        body = command.to_wire()
        frame = {**body, "seq": self.seq}
        acting = body["cmd"] == "act"
        self.pending[self.seq] = Pending(
            body["cmd"],
            time.perf_counter(),
            expected,
            on_ack=on_ack,
            on_error=on_error,
            on_lost=on_lost,
            turn=(self.hand, body["turn"]) if acting and self.hand is not None else None,
            deadline=self.deadline[1] if self.deadline and self.deadline[0] == self.hand else None,
        )
        if self.trace:
            self.trace(self.name, "send", frame)
        self.report.commands += 1
        if acting:
            self.report.actions += 1
            if self.hand is not None and self.seat is not None:
                stamp = (self.hand, self.seat, body["turn"])
                self.run_.stamps[stamp] = self.pending[self.seq].sent_at
        await self.ws.send(json.dumps(frame))

    # -- receiving -------------------------------------------------------------------------

    async def on_message(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "snapshot":
            await self.on_snapshot(message)
            return
        if kind in ("ack", "error"):
            await self.on_answer(message)
            return
        version = message.get("v")
        if type(version) is not int:
            self.problem(f"a message without a version: {message}")
            return
        if self.resyncing_since is not None:
            self.held.append(message)
            return
        if version <= self.version:
            return  # the snapshot already holds it
        if (
            self.spec.role is Role.LOSSY
            and not self.run_.winding_down
            and "legal_actions" not in message
            and self.rng.random() < DROP_RATE
        ):
            return  # "lost" on the way: the next message shows the gap
        if version > self.version + 1:
            self.early[version] = message
            if self.gap_timer is None:
                self.gap_timer = self._later(self._gap_wait())
            return
        self.version = version
        await self.on_event(message)
        while self.version + 1 in self.early:
            self.version += 1
            await self.on_event(self.early.pop(self.version))
        if not self.early and self.gap_timer is not None:
            self.report.reordered += 1
            self.gap_timer.cancel()
            self.gap_timer = None

    async def _gap_wait(self) -> None:
        """A missing message: wait a moment for it, then resync from a snapshot.

        Two processes (the web server and a Celery worker) may publish events of one
        table at nearly the same time, each after its own commit, so a message can
        arrive just after a later one (see docs/protocol.md, "Ordering"). Only a message
        still missing after `GAP_GRACE` is taken as lost.
        """
        await asyncio.sleep(GAP_GRACE)
        self.gap_timer = None
        if self.early and self.ws is not None and self.resyncing_since is None:
            self.report.gaps += 1
            self.held.extend(self.early.values())
            self.early.clear()
            await self.resync()

    async def resync(self) -> None:
        """Hold the stream and ask for a snapshot. One at a time: asked while one is on
        its way, another is asked once that one has come (it may have been read before
        what made this one needed, a command answered `server_error` meanwhile)."""
        if self.resyncing_since is None:
            self.resyncing_since = time.monotonic()
        if self.snapshot_asked:
            self.resync_again = True
            return
        self.snapshot_asked, self.resync_again = True, False
        self.report.resyncs += 1
        await self.send(Snapshot(), on_error=self._snapshot_refused)

    def _snapshot_refused(self, _code: str) -> None:
        """The room could not answer our snapshot (`server_error`: its database or Redis
        failed; or a limit): ask again after a backoff, on this connection, the stream
        held meanwhile."""
        self.snapshot_asked = False
        delay = SNAPSHOT_RETRY_SECONDS[min(self.snapshot_failures, len(SNAPSHOT_RETRY_SECONDS) - 1)]
        self.snapshot_failures += 1
        ws = self.ws

        async def later() -> None:
            await asyncio.sleep(delay * self.rng.uniform(0.8, 1.2))
            if ws is not None and self.ws is ws and not self.snapshot_asked:
                await self.resync()

        self._later(later())

    async def _settle_by_snapshot(self, pending: Pending) -> None:
        """A command answered `server_error`: carried out or not, its events may be lost.
        Settled as one whose answer was lost with the connection (what it was for is asked
        again if the snapshot shows it still needed), its decision made again."""
        if pending.turn is not None:
            self.answered.discard(pending.turn)
        if pending.on_lost is not None:
            pending.on_lost()
        await self.resync()

    async def on_snapshot(self, snapshot: dict[str, Any]) -> None:
        self.ws_got_snapshot = True
        self.snapshot_asked = False
        if self.resync_again:
            await self.resync()  # this one may predate what the next is asked for
            return
        self.snapshot_failures = 0
        self.version = snapshot["v"]
        self.run_.last_progress = time.monotonic()
        table = snapshot["table"]
        self.stake = table["stake"]
        self.timers = (table["action_seconds"], table["time_bank_seconds"])
        you = snapshot["you"]
        if self.leave_unsure:
            # A `leave` whose answer was lost: still seated means it did not happen.
            self.leave_unsure = False
            if you is not None:
                self.leave_sent = False
        if self.unsure_sit is not None:
            # A `sit` whose answer was lost: the snapshot shows whether it happened.
            if you is not None:
                self.money_in += self.unsure_sit
            else:
                self.sit_sent = False  # it did not: `after_change` sits again
            self.unsure_sit = None
        if you is not None:
            self.seat, self.status, self.stack = you["seat"], you["status"], you["stack"]
            self._blind_options_seen(you.get("blind_options"))
        elif self.seat is not None:
            # Gone while we were away: fine if we asked to leave, else the room lost us.
            if not self.leave_sent:
                self.problem("no longer seated after reconnecting")
            self._left_table()
        self.occupied = {s["seat"] for s in snapshot["seats"]}
        self.table_seats = table["seats"]
        hand = snapshot["hand"]
        # One hand at a time per table: every hand seen started but the one in progress
        # has ended, even if its `hand_ended` went while we were away (a room restart).
        current = hand["id"] if hand is not None and not hand["is_over"] else None
        self.run_.ended.update(h for h in self.run_.started if h != current)
        # A turn of ours still open is as the snapshot shows it, or gone.
        ours = current is not None and hand["actor"] == self.seat
        if not ours or self.turn_open != (current, hand["turn"]):
            self._turn_closed("resynced")
        if hand is not None and not hand["is_over"]:
            self.hand = hand["id"]
            self.run_.started.add(hand["id"])
            self.in_hand = any(
                p["seat"] == self.seat and p["player"] == self.name for p in hand["players"]
            )
        else:
            self.hand, self.in_hand = None, False
        # Go on from the snapshot with what arrived meanwhile and what it does not cover.
        self.resyncing_since = None
        replay = sorted([*self.held, *self.early.values()], key=lambda m: m["v"])
        self.held.clear()
        self.early.clear()
        if self.gap_timer is not None:
            self.gap_timer.cancel()
            self.gap_timer = None
        for message in replay:
            await self.on_message(message)
        if hand is not None and hand["legal_actions"] and hand["actor"] == self.seat:
            if hand.get("deadline"):
                when = datetime.fromisoformat(hand["deadline"]).timestamp()
                self.deadline = (hand["id"], when)
            # Back after the room went away, the turn may be about to time out (or have
            # timed out since the snapshot): a refusal as late is then no fault.
            late = frozenset({"stale", "not_your_turn"}) if self.back_from_away else frozenset()
            await self.on_my_turn(
                hand["id"], hand["turn"], hand["legal_actions"], spoil=False, expected=late
            )
        self.back_from_away = False
        await self.after_change()

    async def on_answer(self, answer: dict[str, Any]) -> None:
        pending = self.pending.pop(answer.get("seq"), None)  # type: ignore[arg-type]
        if pending is None:
            self.problem(f"an answer to no command of ours: {answer}")
            return
        self.run_.last_progress = time.monotonic()
        if answer["type"] == "ack":
            if pending.cmd == "act" and self.run_.clock.measuring():
                self.report.latencies.append(time.perf_counter() - pending.sent_at)
                self.report.decisions += 1
            if pending.on_ack:
                pending.on_ack()
        else:
            code = answer.get("code", "?")
            now = time.perf_counter()
            waited = f"after {(now - pending.sent_at) * 1000:.0f} ms"
            if pending.cmd == "act":
                waited += f", our turn seen {(now - self.turn_seen_at) * 1000:.0f} ms ago"
            refusal = f"{pending.cmd} refused {waited}: {code}: {answer.get('message')}"
            if code in pending.expected:
                self.report.errors_expected[code] += 1
            elif pending.turn is not None and code in OVERTAKEN_CODES:
                # Unexpected until judged otherwise (a run that ends first keeps it so).
                self.report.errors_unexpected[code] += 1
                judged = self._refused_act_judged(
                    pending.turn, pending.deadline, time.time(), code, refusal
                )
                self._later(judged).add_done_callback(
                    functools.partial(self._judgement_cut_short, refusal)
                )
            else:
                self.report.errors_unexpected[code] += 1
                self.problem(refusal)
            if code == SERVER_ERROR and pending.cmd != Snapshot.name:
                await self._settle_by_snapshot(pending)
            elif pending.on_error:
                pending.on_error(code)
        await self.after_change()

    async def on_event(self, message: dict[str, Any]) -> None:
        self.run_.saw(message)
        if "blind_options" in message:
            self._blind_options_seen(message["blind_options"])
        kind = message["type"]
        if kind == "hand_started":
            self.hand = message["hand"]
            self.in_hand = any(s["player"] == self.name for s in message["seats"])
        elif kind == "hand_ended" and message["hand"] == self.hand:
            self._turn_closed("hand_ended")
            if self.in_hand:
                self.stack = next(
                    (s["amount"] for s in message["stacks"] if s["seat"] == self.seat), self.stack
                )
                pace = self.run_.pace
                if pace.leave_share and self.rng.random() < pace.leave_share:
                    self.breaking = True
            self.hand, self.in_hand = None, False
            self.turn_open = None
        elif kind == "turn":
            if self.turn_open not in (None, (message["hand"], message["turn"])):
                # Our turn ended without our act (folded as we left, say): a decision
                # still being thought over is for a turn gone by. (The same turn again is
                # a re-announce, the reconnect bonus: the decision stands.)
                self._turn_closed("moved_on")
            self.table_turn = (message["hand"], message["seat"], message["turn"])
            if "legal_actions" in message and message["seat"] == self.seat:
                self._turn_lag(message["deadline"])
                when = datetime.fromisoformat(message["deadline"]).timestamp()
                self.deadline = (message["hand"], when)
                await self.on_my_turn(message["hand"], message["turn"], message["legal_actions"])
        elif kind == "acted":
            self._acted_seen(message)
        elif kind == "timed_out" and message["seat"] == self.seat:
            self._timed_out(message)
        elif kind == "seats":
            self.occupied = {s["seat"] for s in message["seats"]}
            mine = next((s for s in message["seats"] if s["player"] == self.name), None)
            if mine is not None:
                self.seat, self.status, self.stack = mine["seat"], mine["status"], mine["stack"]
                if self.status != "sitting_out":
                    self.rejoin_pending = False
        elif kind == "seat_left" and message["player"] == self.name:
            self._left_table()
        await self.after_change()

    def _turn_closed(self, how: str) -> None:
        """Our open turn (if any) closed, `how` the stream tells (after an act of ours that
        was taken too, which nothing then asks about)."""
        if self.turn_open is not None:
            self.turns_ended[self.turn_open] = how
            if len(self.turns_ended) > TURNS_ENDED_KEPT:
                del self.turns_ended[next(iter(self.turns_ended))]  # the oldest
            self.turn_open = None
            self.turn_end_news.set()
            self.turn_end_news = asyncio.Event()

    def _judgement_cut_short(self, refusal: str, task: asyncio.Task[None]) -> None:
        """The run ended before a refused act was judged: it stays unexpected, and says so."""
        if task.cancelled():
            self.problem(f"{refusal} (the run ended before its turn's end was seen)")

    async def _refused_act_judged(
        self,
        turn: tuple[int, int],
        deadline: float | None,
        answered: float,
        code: str,
        refusal: str,
    ) -> None:
        """An act refused `stale` or `not_your_turn`, counted unexpected so far. Its turn
        may have ended on its way by another command (the other players left the hand,
        which folds them, and it ended), the news still on its way here: the room was
        right, and the stream says so within moments. News replaced by a snapshot tells
        nothing: then a refusal that came before the turn's deadline cannot be for our
        own timeout (a timeout the room fired early, its news lost in that gap, would
        pass here unseen). Refused for our own timeout (the act came after the clock),
        or with no end of the turn seen, it is a problem. `answered`: when the refusal
        came, in epoch seconds as the deadline."""
        loop = asyncio.get_running_loop()
        until = loop.time() + OVERTAKEN_WAIT
        while (how := self.turns_ended.get(turn)) is None and loop.time() < until:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.turn_end_news.wait(), until - loop.time())
        in_time = deadline is not None and answered < deadline
        if how in ("hand_ended", "moved_on") or (how == "resynced" and in_time):
            self.report.errors_unexpected[code] -= 1
            if not self.report.errors_unexpected[code]:
                del self.report.errors_unexpected[code]
            self.report.errors_expected[code] += 1
            self.report.acts_overtaken += 1
        else:
            self.problem(f"{refusal} (the turn then: {how or 'no end seen'})")

    def _left_table(self) -> None:
        """Our seat is gone, the stack back in the wallet: done, or away for a while."""
        self.money_out += self.stack
        self.stack = 0
        self.seat = None
        if self.breaking and not self.run_.winding_down:
            self.away = True  # the connection closes, the run loop comes back after a pause
            self.report.breaks += 1
        else:
            self.done = True

    def _back(self) -> None:
        """Back from a pause away from the table: sit again as a newcomer."""
        self.away = self.breaking = False
        self.sit_sent = self.sit_out_sent = self.leave_sent = self.rejoin_pending = False
        self.status = ""

    def _turn_lag(self, deadline: str) -> None:
        """How long after its start a turn reached us (clocks of one machine: loopback)."""
        remaining = (datetime.fromisoformat(deadline) - datetime.now(UTC)).total_seconds()
        if self.run_.clock.measuring():
            self.report.turn_lags.append(max(0.0, sum(self.timers) - remaining))

    def _acted_seen(self, message: dict[str, Any]) -> None:
        """Another player's action arrived: how long after its `act` was sent."""
        if self.table_turn is None or message["seat"] == self.seat:
            return
        hand, seat, turn = self.table_turn
        sent = self.run_.stamps.get((hand, seat, turn))
        same = (hand, seat) == (message["hand"], message["seat"])
        if same and sent is not None and self.run_.clock.measuring():
            self.report.broadcasts.append(time.perf_counter() - sent)

    def _timed_out(self, message: dict[str, Any]) -> None:
        """Our turn timed out: how late after its deadline the room said so."""
        self._turn_closed("timed_out")
        deadline = self.deadline
        if deadline is not None and deadline[0] == message["hand"] and self.run_.clock.measuring():
            self.report.timeout_lateness.append(time.time() - deadline[1])
            self.report.decisions += 1

    # -- deciding --------------------------------------------------------------------------

    async def on_my_turn(
        self,
        hand: int,
        turn: int,
        legal: dict[str, Any],
        *,
        spoil: bool = True,
        expected: frozenset[str] = frozenset(),
    ) -> None:
        """Act on this turn, once; `spoil`: a misbehaving role may misbehave here."""
        if (hand, turn) in self.answered:
            return
        self.answered.add((hand, turn))
        self.turn_open = (hand, turn)
        self.turn_seen_at = time.perf_counter()
        role = self.spec.role
        if spoil and not self.run_.winding_down:
            # The first chance is always taken, so that even a short run shows each role.
            first = not self.spoiled
            if (
                role is Role.SLEEPY
                and not self.slept_last_turn
                and (first or self.rng.random() < SLEEP_RATE)
            ):
                self.spoiled = True
                self.slept_last_turn = True
                self.report.deliberate_timeouts += 1
                self._later(self._late_act(hand, turn, legal))
                return
            if (
                role is Role.FLAKY
                and not self.pending
                and (first or self.rng.random() < DISCONNECT_RATE)
            ):
                self.spoiled = True
                # Come back and act from the reconnect snapshot instead.
                self.answered.discard((hand, turn))
                self.drop_connection = True
                return
        pace = self.run_.pace
        if (
            spoil
            and pace.timeout_share
            and not self.slept_last_turn
            and not self.run_.winding_down
            and self.rng.random() < pace.timeout_share
        ):
            self.slept_last_turn = True
            self.report.deliberate_timeouts += 1
            return
        self.slept_last_turn = False
        if pace.think[1] > 0:
            self._later(self._think(hand, turn, legal, expected))
        else:
            await self._decide(turn, legal, expected)

    async def _decide(self, turn: int, legal: dict[str, Any], expected: frozenset[str]) -> None:
        decision = choose_action(legal, rng=self.rng, profile=self.spec.profile)
        await self.send(decision.command(turn=turn), expected=expected)

    async def _think(
        self, hand: int, turn: int, legal: dict[str, Any], expected: frozenset[str]
    ) -> None:
        """Act after thinking, if the turn still waits for us on the same connection."""
        ws = self.ws
        await asyncio.sleep(self.rng.uniform(*self.run_.pace.think))
        if self.ws is ws and self.turn_open == (hand, turn):
            await self._decide(turn, legal, expected)

    async def _late_act(self, hand: int, turn: int, legal: dict[str, Any]) -> None:
        """Act after the clock ran out: the room must refuse it (or take it, if the
        timeout has not fired yet)."""
        await asyncio.sleep(sum(self.timers) + 0.5)
        # `turn` counts within a hand only: never send it into another hand.
        if self.hand == hand:
            await self._decide(turn, legal, frozenset({"stale", "not_your_turn"}))

    def _later(self, coroutine: Any) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def after_change(self) -> None:
        """Seat, rejoin or wind down, as the table now stands."""
        if self.done or self.ws is None or self.resyncing_since is not None:
            return
        if self.seat is None:
            if self.run_.winding_down and not self.sit_sent:
                self.done = True  # came too late to play
            elif not self.sit_sent:
                await self.sit()
            return
        if self.run_.winding_down or self.breaking:
            # Sit out first and leave once the room shows us sitting out: then we are in
            # no hand, whatever our view of the table lagging behind the room's may say,
            # so the leave is immediate and cannot fold a hand we were just dealt.
            # Once the leave is sent, wait for `seat_left`: a `seats` message published
            # before it may still show us seated.
            if self.leave_sent:
                return
            # A decision being thought over is made first, as a person would (the room
            # now lets a decision go ahead of the socket's own `sit_out` still waiting,
            # tables/consumers.py, but a person makes it first all the same; its answer
            # prompts us).
            if self.turn_open is not None:
                return
            # A `sit_in` still unanswered: the "sitting_out" we hold predates it, and the
            # room may deal us in before it reads our leave (which then folds that hand).
            if self.status == "sitting_out" and not self.rejoin_pending:
                self.leave_sent = True
                await self.send(Leave(), on_lost=self._leave_lost)
            elif not self.sit_out_sent:
                self.sit_out_sent = True
                await self.send(SitOut(), on_lost=self._sit_out_lost)
            return
        if self.status == "sitting_out" and not self.rejoin_pending:
            await self.rejoin()
        elif self.blind_options_new:
            await self.blind_option_maybe()

    def _blind_options_seen(self, options: dict[str, Any] | None) -> None:
        self.blind_options = options
        self.blind_options_new = options is not None

    async def blind_option_maybe(self) -> None:
        """Sometimes ask for a straddle or an overblind the room says is open to us: once
        per change of what is open (the room sends our options again when it changes)."""
        self.blind_options_new = False
        for kind, option in (self.blind_options or {}).items():
            if option["open"] and not option["asked"] and self.rng.random() < BLIND_OPTION_RATE:
                # The table may move before it arrives (someone sits down, a kill is won):
                # a refusal then is the room working as designed.
                await self.send(COMMANDS[kind](on=True), expected=BLIND_OPTION_REFUSALS)
                self.report.blind_options_asked += 1
                return

    async def sit(self) -> None:
        """Take the bot's seat (another free one if someone took it) with a buy-in."""
        low, high = self.stake["buy_in_min"], self.stake["buy_in_max"]
        retry = self.sit_retried
        amount = high if retry else self.rng.randint(low, high)
        seat = self.spec.seat
        if seat in self.occupied:
            # Someone else sat there: any seat no bot of this run was given will do.
            free = set(range(1, self.table_seats + 1)) - self.occupied - self.run_.assigned
            if not free:
                self.problem("no free seat")
                self.done = True
                return
            seat = min(free)
        self.sit_sent = True

        def sat() -> None:
            self.seat = seat
            self.money_in += amount
            if not self.ever_seated:
                self.ever_seated = True
                self.report.bots_seated += 1

        def refused(code: str) -> None:
            # No ratholing (RULES §4): back within the hour, bring at least what you left
            # with; the maximum buy-in always satisfies that. `after_change` sits again.
            if code == "buy_in_out_of_range" and not retry:
                self.sit_retried = True
                self.sit_sent = False
            elif code == "room_busy" and not self.run_.winding_down:
                self._later(self._sit_later())
            else:
                self.done = True

        def lost() -> None:
            self.unsure_sit = amount  # settled by the next snapshot

        await self.send(
            Sit(seat=seat, buy_in=amount, post_big_blind=True),
            expected=frozenset({"room_busy"} if retry else {"room_busy", "buy_in_out_of_range"}),
            on_ack=sat,
            on_error=refused,
            on_lost=lost,
        )

    async def _sit_later(self) -> None:
        """Refused a seat by a full room: ask again in a while, as a person would."""
        await asyncio.sleep(SEAT_RETRY * self.rng.uniform(0.8, 1.2))
        self.sit_sent = False
        await self.nudge()

    async def nudge(self) -> None:
        """Act on the table as it stands with no message to prompt it (a retry is due,
        the run winds down). The connection's loop acts on messages, and may wait on a
        table where nothing happens (its other players refused seats): a bot that is
        done closes it."""
        await self.after_change()
        if self.done and self.ws is not None and not self.pending:
            await self.ws.close()

    # What to do when a command's answer was lost with the connection: ask again if the
    # next snapshot shows it still needed (a repeated sit_out, sit_in or leave is harmless).
    def _leave_lost(self) -> None:
        self.leave_unsure = True  # settled by the next snapshot

    def _sit_out_lost(self) -> None:
        self.sit_out_sent = False

    def _rejoin_undone(self) -> None:
        self.rejoin_pending = False

    def _top_up_lost(self) -> None:
        self.rejoin_pending = False
        # It may or may not have moved chips: this bot's books cannot say.
        self.books_unsure = True

    async def rejoin(self) -> None:
        """Sat out (busted, or timed out twice): top up if short, then sit back in."""
        self.rejoin_pending = True
        low, high = self.stake["buy_in_min"], self.stake["buy_in_max"]
        if self.stack < low:
            amount = self.rng.randint(low, high) - self.stack
            balance = await asyncio.to_thread(self.session.wallet_balance)
            if balance < amount:
                balance_after = await self._fund()
                self.deposited += balance_after - balance

            def topped_up() -> None:
                self.money_in += amount

            await self.send(TopUp(amount=amount), on_ack=topped_up, on_lost=self._top_up_lost)
        await self.send(
            SitIn(post_big_blind=True), on_error=self._rejoin_refused, on_lost=self._rejoin_undone
        )

    def _rejoin_refused(self, _code: str) -> None:
        """A refused `sit_in`: try again in a while, not at once (the same refusal would
        come straight back, round trip after round trip)."""

        async def later() -> None:
            await asyncio.sleep(REJOIN_RETRY)
            self._rejoin_undone()
            await self.after_change()

        self._later(later())
