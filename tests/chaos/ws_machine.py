"""The WebSocket chaos machine: the same idea as services_machine.py, through the table
consumer on the real ASGI application (origin check, session authentication, routing)
with Channels' `WebsocketCommunicator` and the real Redis channel layer.

Each example is one table (Omaha PL, Hold'em NL or FL, drawn) with three players (two
already seated) and their sockets, plus a spectator's. Rules: connect and disconnect at
any moment (mid-hand, a second tab, a reconnect), every command (sit and top up with
fresh, replayed and room-shaped keys, legal and illegal acts, leave, sit out and in,
advance actions, snapshot), malformed frames (bad JSON, binary, over-long, nested past
the parser, unknown commands, wrong types, keys too long or with NUL), a command that
meets a database fault, and the clock and the cashier driven directly (a turn's timeout,
the next deal, a withdrawal requested and decided by staff). Hostile strings
(`harness.hostile_text`: lone surrogates, NUL, bidi overrides, line separators, piled
marks, 10k characters, any string) and wrong JSON types go now and then into every
field of every command, chat, mute, auto top-up, straddle and overblind included
(issue #46): each is answered `ack` or `error`, never `server_error`.

Checked on every frame: exactly one answer, an `ack` or an `error` with a code (never a
second one later); the socket is never closed by the server except with a code the
consumer documents (4404, 1013, 4429), never 1011; legal acts on one's turn are acked, a seated
player's leave is acked, a replayed sit is answered as the first time or refused
`idempotency_key_reused`; a connect extends the turn only for a player whose last
socket dropped during that very turn, their own (the reconnect bonus). After every
step: nobody received a card they may not see, the ledger audit is clean and the chips
are conserved, and no table is paused or counts a failure (tests/chaos/harness.py).

Every socket is disconnected in teardown, and the test's own event loop is closed only
when no task of it is left (a leaked channel-layer receive would poison later tests).
"""

import asyncio
import dataclasses
import json
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.db import OperationalError
from django.test import Client
from django.utils import timezone
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from cashier import services as cashier
from cashier.exceptions import CashierError
from cashier.models import Withdrawal, WithdrawalStatus
from poker_room.asgi import application
from tables import commands, consumers
from tables.bots.player import frame_messages
from tables.engine.actions import Action
from tables.models import Hand, Seat
from tables.services import play
from tables.services.hands import hand_start_due
from tests.chaos import harness
from tests.chaos.recording import RECORDED
from tests.chaos.stats import STATS, checked, counted

# What the key checks answer a hostile key with (before any other refusal).
KEY_REFUSALS = ("malformed", "frame_too_large", "idempotency_key_invalid")
# Values of the other fields when one is hostile (`hostile_frame`): refused by the
# rules if the frame ever got past its hostile field (seat 7 of 6, a stale turn).
BENIGN: dict[type, Any] = {int: 7, bool: False, str: "x"}
BENIGN_TEXT = {"action": "call", "mode": "off", "player": "nobody", "text": "gl", "key": "k"}
# Every text field of every command: (command, field).
TEXT_FIELDS = sorted(
    (name, f.name)
    for name, cls in commands.COMMANDS.items()
    for f in dataclasses.fields(cls)
    if commands.field_type(cls, f) is str
)
# Values of a JSON type a field does not take, or out of its range (a value of the
# field's own type is drawn now and then, and must be answered calmly too).
WRONG_JSON = st.sampled_from((5, 1.5, True, "1", 2**64, -(2**63), [1, "a"], {"a": {"b": [None]}}))
# Close codes the consumer documents (tables/consumers.py): no such table, try again,
# too many sockets or too fast (a few players' steps stay far below those limits).
DOCUMENTED_CLOSES = {4404, 1013, 4429}
ANSWER_WAIT = 10.0

MALFORMED = (
    "not json",
    "[" * 3000,  # under the frame cap, past the parser's nesting limit
    "[" * 100_000,  # over the frame cap
    '{"cmd": "snapshot", "seq": 1e400}',
    "[]",
    "null",
    '"act"',
    '{"cmd": 5, "seq": 1}',
    '{"cmd": "fly", "seq": %(seq)d}',
    '{"cmd": "act", "seq": %(seq)d}',
    '{"cmd": "act", "seq": %(seq)d, "action": ["call"]}',
    '{"cmd": "sit", "seq": %(seq)d, "seat": "1", "buy_in": 10000}',
    '{"cmd": "sit", "seq": %(seq)d, "seat": 1, "buy_in": 1e3}',
    '{"cmd": "sit", "seq": %(seq)d, "seat": 18446744073709551616, "buy_in": 10000}',
    '{"cmd": "top_up", "seq": %(seq)d, "amount": 100, "key": "%(long)s"}',
    '{"cmd": "sit", "seq": %(seq)d, "seat": 2, "buy_in": 10000, "key": "nul\\u0000key"}',
    '{"cmd": "sit", "seq": %(seq)d, "seat": 2, "buy_in": 10000, "key": {"a": [1]}}',
    '{"cmd": "snapshot", "seq": 0}',
)


@dataclass
class Socket:
    user: Any  # None: a spectator
    ws: WebsocketCommunicator
    seq: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)
    checked: int = 0
    hand_id: int | None = None

    @property
    def name(self) -> str:
        return "spectator" if self.user is None else self.user.username


@dataclass
class SitKey:
    raw: str
    user: Any
    seat_number: int
    buy_in: int
    seat_pk: int


def session_headers(user) -> list[tuple[bytes, bytes]]:
    """The handshake a browser sends: the site's own origin and, for a player, the
    session cookie of a real login."""
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if user is not None:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()))
    return headers


class WebSocketMachine(RuleBasedStateMachine):
    """One table through its sockets; see the module docstring."""

    loop: asyncio.AbstractEventLoop  # the test's own loop (test_chaos.py)

    @initialize(
        stake=st.sampled_from([("omaha", "PL"), ("holdem", "NL"), ("holdem", "FL")]),
        seed=st.integers(0, 2**32),
    )
    def world_begin(self, stake: tuple[str, str], seed: int) -> None:
        STATS.example()
        RECORDED.shuffler.seed(seed)
        self.world = harness.world_create(structures=(stake,), players=3)
        self.table = self.world.tables[0]
        self.sockets: list[Socket] = []
        self.sits: list[SitKey] = []
        self.pending: list[Withdrawal] = []
        # user id -> (hand, turn) their last socket dropped in, during their own turn
        self.dropped: dict[int, tuple[int, int]] = {}
        self.open_socket(None)
        for number, user in enumerate(self.world.players[:2], start=1):
            raw = uuid.uuid4().hex
            answer = self.command(
                self.open_socket(user), "sit", seat=number, buy_in=10_000, key=raw
            )
            assert answer["type"] == "ack", answer
            seat = Seat.objects.get(table=self.table, player=user)
            self.sits.append(SitKey(raw, user, number, 10_000, seat.pk))

    def teardown(self) -> None:
        if not hasattr(self, "world"):
            return
        try:
            for sock in list(self.sockets):
                self.run(self._disconnect(sock))
        finally:
            harness.world_end()

    # -- plumbing ---------------------------------------------------------------------

    def run(self, coro):
        return self.loop.run_until_complete(asyncio.wait_for(coro, 30))

    def open_socket(self, user) -> Socket:
        """Connect; check that the turn's clock moved only for a player whose last socket
        dropped during this very turn, their own (the reconnect bonus, RULES §5)."""
        headers = session_headers(user)
        before = harness.live_hand(self.table)
        sock = self.run(self._connect(user, headers))
        if user is None:
            return sock
        # The consumer grants a bonus after sending the snapshot: one round trip later,
        # whatever its connect did is done (a consumer handles one event at a time).
        self.command(sock, "snapshot")
        after = harness.live_hand(self.table)
        dropped = self.dropped.pop(user.pk, None)
        if before is None or after is None:
            return sock
        same_turn = (before[0].pk, before[0].turn_version) == (after[0].pk, after[0].turn_version)
        if same_turn and after[0].turn_deadline != before[0].turn_deadline:
            assert dropped == (after[0].pk, after[0].turn_version), (
                f"{user.username} earned the reconnect bonus without a drop on their turn"
            )
        return sock

    def close_socket(self, sock: Socket) -> None:
        """Disconnect; when it was the player's last socket, remember the turn it dropped in
        if that turn was theirs."""
        last = sock.user is not None and sum(s.user == sock.user for s in self.sockets) == 1
        if last:
            live = harness.live_hand(self.table)
            seat = Seat.objects.filter(table=self.table, player=sock.user).first()
            if live and seat is not None and live[1].actor == seat.number:
                self.dropped[sock.user.pk] = (live[0].pk, live[0].turn_version)
            else:
                self.dropped.pop(sock.user.pk, None)
        self.run(self._disconnect(sock))

    async def _connect(self, user, headers: list[tuple[bytes, bytes]]) -> Socket:
        ws = WebsocketCommunicator(application, f"/ws/tables/{self.table.pk}/", headers=headers)
        connected, code = await ws.connect(timeout=ANSWER_WAIT)
        assert connected, f"the handshake was refused with {code}"
        sock = Socket(user=user, ws=ws)
        (snapshot,) = await self._next(sock)
        assert snapshot["type"] == "snapshot", snapshot
        self.sockets.append(sock)
        return sock

    async def _disconnect(self, sock: Socket) -> None:
        self.sockets.remove(sock)
        await self._drain(sock)
        await sock.ws.disconnect()

    async def _next(self, sock: Socket) -> list[dict[str, Any]]:
        """The messages of the next frame: one, or a command's stream messages together
        (an array of versioned messages only, each the next version)."""
        output = await sock.ws.receive_output(timeout=ANSWER_WAIT)
        if output["type"] == "websocket.close":
            code = output.get("code")
            raise AssertionError(
                f"{sock.name}'s socket was closed with {code}"
                + ("" if code in DOCUMENTED_CLOSES else " (not a documented close code)")
            )
        assert output["type"] == "websocket.send", output
        frame = json.loads(output["text"])
        if isinstance(frame, list):
            versions = [message.get("v") for message in frame]
            assert len(frame) > 1 and all(type(v) is int for v in versions), frame
            assert "snapshot" not in {message.get("type") for message in frame}, frame
            assert versions == list(range(versions[0], versions[0] + len(frame))), versions
        messages = frame_messages(frame)
        for message in messages:
            sock.messages.append(message)
            if message.get("type") == "snapshot" and message.get("hand"):
                sock.hand_id = message["hand"]["id"]
            elif isinstance(message.get("hand"), int):
                sock.hand_id = message["hand"]
        return messages

    async def _drain(self, sock: Socket) -> None:
        """Take what has arrived; an answer with no frame waiting for it is a bug."""
        while not await sock.ws.receive_nothing(timeout=0.02, interval=0.005):
            for message in await self._next(sock):
                assert message.get("type") not in ("ack", "error"), (
                    f"{sock.name} got an answer nobody asked for: {message}"
                )

    async def _drain_all(self) -> None:
        """Drain every socket, all at once: each waits for its own quiet moment."""
        await asyncio.gather(*(self._drain(sock) for sock in self.sockets))

    async def _frame(self, sock: Socket, text: str | None = None, data: bytes | None = None):
        """Send one frame; return its one answer (events before it are kept aside)."""
        await self._drain(sock)
        await sock.ws.send_to(text_data=text, bytes_data=data)
        while True:
            for message in await self._next(sock):
                if message.get("type") in ("ack", "error"):
                    if message["type"] == "error":
                        assert isinstance(message.get("code"), str) and message["code"], message
                        STATS.note(f"error {message['code']}")
                    else:
                        STATS.note("ack")
                    return message

    def command(self, sock: Socket, cmd: str, **fields: Any) -> dict[str, Any]:
        sock.seq += 1
        text = json.dumps({"cmd": cmd, "seq": sock.seq, **fields})
        answer = self.run(self._frame(sock, text))
        if len(text) > consumers.MAX_FRAME_CHARS:  # refused unread: its seq is unknown
            assert (answer.get("code"), answer.get("seq")) == ("frame_too_large", None), answer
        else:
            assert answer.get("seq") == sock.seq, f"answer to {sock.seq} was {answer}"
        return answer

    def answered_calmly(self, answer: dict[str, Any], what: str) -> None:
        """A frame a client may send, hostile or not, is acked or refused with a code
        of the checks or the rules: never a server fault."""
        assert answer["type"] in ("ack", "error"), (what, answer)
        assert answer.get("code") != "server_error", f"{what}: {answer}"

    def socket_of(self, data, user) -> Socket:
        """One of the user's open sockets, or a new one."""
        mine = [s for s in self.sockets if s.user == user]
        if mine:
            return data.draw(st.sampled_from(mine))
        return self.open_socket(user)

    def refused_by_rate(self, answer: dict[str, Any]) -> bool:
        return answer.get("code") == "rate_limited"

    def room_key(self, data) -> str:
        shape = data.draw(st.sampled_from(("fresh", *harness.ROOM_KEY_SHAPES, "hostile")))
        if shape == "fresh":
            return uuid.uuid4().hex
        if shape == "hostile":
            STATS.note("hostile key")
            return data.draw(harness.hostile_text())
        live = harness.live_hand(self.table)
        seats = list(Seat.objects.filter(table=self.table).values_list("pk", flat=True))
        withdrawals = [w.pk for w in self.pending] or [0]
        return shape.format(
            hand=live[0].pk if live else 0,
            seat=data.draw(st.sampled_from(seats)) if seats else 0,
            withdrawal=data.draw(st.sampled_from(withdrawals)),
        )

    # -- connections ------------------------------------------------------------------

    @rule(data=st.data(), spectator=st.booleans())
    @counted
    def connect(self, data, spectator: bool) -> None:
        """A new socket: a spectator, a player's first, a second tab, a reconnect."""
        if len(self.sockets) < 6:
            self.open_socket(None if spectator else data.draw(st.sampled_from(self.world.players)))

    @rule(data=st.data())
    @counted
    def disconnect(self, data) -> None:
        if self.sockets:
            self.close_socket(data.draw(st.sampled_from(self.sockets)))

    # -- commands ---------------------------------------------------------------------

    @rule(
        data=st.data(),
        number=st.integers(1, 6),
        amount=st.sampled_from((4_000, 10_000, 20_000, 1, 10**15)),
    )
    @counted
    def sit(self, data, number: int, amount: int) -> None:
        seated = set(Seat.objects.filter(table=self.table).values_list("player_id", flat=True))
        standing = [u for u in self.world.players if u.pk not in seated]
        user = data.draw(st.sampled_from(standing * 2 + self.world.people))
        sock = self.socket_of(data, user)
        raw = self.room_key(data)
        answer = self.command(sock, "sit", seat=number, buy_in=amount, key=raw)
        self.answered_calmly(answer, f"sit with key {raw[:40]!r}")
        if user == self.world.staff and answer.get("code") not in ("rate_limited", *KEY_REFUSALS):
            assert answer.get("code") == "cannot_play", answer
        if answer["type"] == "ack":
            seat = Seat.objects.get(table=self.table, player=user)
            self.sits.append(SitKey(raw, user, number, amount, seat.pk))

    @rule(data=st.data(), same_amount=st.booleans())
    @counted
    def sit_replayed(self, data, same_amount: bool) -> None:
        use = data.draw(st.sampled_from(self.sits))
        sock = self.socket_of(data, use.user)
        before = harness.wallet(use.user)
        still_there = Seat.objects.filter(pk=use.seat_pk).exists()
        amount = use.buy_in if same_amount else use.buy_in + 100
        answer = self.command(sock, "sit", seat=use.seat_number, buy_in=amount, key=use.raw)
        if not self.refused_by_rate(answer):
            if still_there and same_amount:
                assert answer["type"] == "ack", f"a retried sit was not answered: {answer}"
            else:
                assert answer.get("code") == "idempotency_key_reused", answer
        assert harness.wallet(use.user) == before, "a replayed sit moved chips"

    @rule(data=st.data(), amount=st.sampled_from((1, 500, 10_000, 10**15)))
    @counted
    def top_up(self, data, amount: int) -> None:
        user = data.draw(st.sampled_from(self.world.people))
        raw = self.room_key(data)
        answer = self.command(self.socket_of(data, user), "top_up", amount=amount, key=raw)
        self.answered_calmly(answer, f"top_up with key {raw[:40]!r}")

    @rule(data=st.data(), with_turn=st.booleans(), moves=st.integers(1, 6))
    @counted
    def play_on(self, data, with_turn: bool, moves: int) -> None:
        """A few legal actions, each from the actor's socket, or the next deal."""
        for _ in range(moves):
            self._act_legal(data, with_turn)

    def _act_legal(self, data, with_turn: bool) -> None:
        live = harness.live_hand(self.table)
        if live is None:
            self._deal()
            return
        hand, state = live
        legal = state.legal_actions()
        choices: list[dict[str, Any]] = [{"action": "check" if legal.can_check else "call"}] * 3
        if legal.can_fold:
            choices.append({"action": "fold"})
        if legal.can_bet_raise:
            to = data.draw(st.integers(legal.min_to, legal.max_to))
            choices.append({"action": "bet_raise", "amount": to})
        fields = data.draw(st.sampled_from(choices))
        if with_turn:
            fields["turn"] = hand.turn_version
        actor = Seat.objects.get(table=self.table, number=state.actor).player
        answer = self.command(self.socket_of(data, actor), "act", **fields)
        if not self.refused_by_rate(answer):
            assert answer["type"] == "ack", f"a legal {fields} on its turn: {answer}"

    @rule(
        data=st.data(),
        fields=st.one_of(
            st.sampled_from(
                (
                    {"action": "call", "turn": -1},
                    {"action": "raise"},
                    {"action": "bet_raise", "amount": -5},
                    {"action": "bet_raise", "amount": 2**62},
                    {"action": "bet_raise"},
                    {"action": "fold", "turn": 0},
                )
            ),
            st.builds(
                lambda action: {"action": action},
                harness.hostile_text().filter(lambda a: a not in play.ACTION_KINDS),
            ),
        ),
    )
    @counted
    def act_illegal(self, data, fields: dict[str, Any]) -> None:
        user = data.draw(st.sampled_from(self.world.people))
        live = harness.live_hand(self.table)
        amount = fields.get("amount")
        if live and amount is not None and live[1].can(Action.bet_raise(live[1].actor, amount)):
            return
        answer = self.command(self.socket_of(data, user), "act", **fields)
        assert answer["type"] == "error", f"an illegal act {fields} was acked"

    @rule(data=st.data())
    @counted
    def leave(self, data) -> None:
        user = data.draw(st.sampled_from(self.world.players))
        seated = Seat.objects.filter(table=self.table, player=user).exists()
        answer = self.command(self.socket_of(data, user), "leave")
        if seated and not self.refused_by_rate(answer):
            assert answer["type"] == "ack", f"a seated player could not leave: {answer}"

    @rule(
        data=st.data(),
        cmd=st.sampled_from(("sit_out", "sit_in", "advance", "snapshot")),
        kind=harness.sometimes_hostile(
            st.sampled_from(("fold", "check_fold", "call", "bet_raise", "nope"))
        ),
    )
    @counted
    def other_command(self, data, cmd: str, kind: str) -> None:
        user = data.draw(st.sampled_from(self.world.players))
        fields: dict[str, Any] = {}
        if cmd == "advance":
            fields = {"action": kind, "amount": 1_000} if kind == "bet_raise" else {"action": kind}
        elif cmd == "sit_in":
            fields = {"post_big_blind": data.draw(st.booleans())}
        answer = self.command(self.socket_of(data, user), cmd, **fields)
        self.answered_calmly(answer, f"{cmd} {fields!r:.80}")

    @rule(
        data=st.data(),
        what=st.sampled_from(("chat", "mute", "auto_top_up", "straddle", "overblind")),
        text=harness.sometimes_hostile(st.sampled_from(("gl", "nh", "ty", " wp "))),
        mode=harness.sometimes_hostile(st.sampled_from(("off", "max", "below"))),
        on=st.booleans(),
    )
    @counted
    def extras(self, data, what: str, text: str, mode: str, on: bool) -> None:
        """The regulars' extras, their strings now and then hostile: a line of chat, a
        mute (of a player, or of the hostile string), an auto top-up order, a straddle
        or an overblind asked for or cancelled."""
        user = data.draw(st.sampled_from(self.world.people))
        fields: dict[str, Any] = {"on": on}
        if what == "chat":
            fields = {"text": text}
        elif what == "mute":
            others = [p.username for p in self.world.people if p != user]
            fields["player"] = data.draw(st.sampled_from([*others, text]))
        elif what == "auto_top_up":
            fields = {"mode": mode, "big_blinds": data.draw(st.sampled_from((None, 20)))}
        answer = self.command(self.socket_of(data, user), what, **fields)
        self.answered_calmly(answer, f"{what} {fields!r:.80}")

    def hostile_frame(self, data, sock: Socket, name: str, target: str, value: Any) -> None:
        """One command with its field `target` set to `value`, its other fields benign:
        answered `ack` or `error`, never `server_error`."""
        cls = commands.COMMANDS[name]
        names = {f.name for f in dataclasses.fields(cls)}
        fields = {f.name: BENIGN[commands.field_type(cls, f)] for f in dataclasses.fields(cls)}
        fields.update({k: v for k, v in BENIGN_TEXT.items() if k in names})
        fields[target] = value
        answer = self.command(sock, name, **fields)
        self.answered_calmly(answer, f"{name} {fields!r:.80}")
        STATS.note(f"hostile {name}.{target}")

    @rule(data=st.data(), spectator=st.sampled_from((False, False, False, True)))
    @counted
    def hostile_strings(self, data, spectator: bool) -> None:
        """Every text field of every command, a hostile string in each (one frame a
        field), from a player (seated or not) or a spectator."""
        user = None if spectator else data.draw(st.sampled_from(self.world.people))
        sock = self.socket_of(data, user)
        for name, target in TEXT_FIELDS:
            self.hostile_frame(data, sock, name, target, data.draw(harness.hostile_text()))

    @rule(data=st.data(), spectator=st.sampled_from((False, False, False, True)))
    @counted
    def hostile_types(self, data, spectator: bool) -> None:
        """Any field of any command, with a value of a JSON type it does not take (a
        number for a string, a string for a number, an object) or out of its range."""
        fielded = [(n, f.name) for n, c in commands.COMMANDS.items() for f in dataclasses.fields(c)]
        name, target = data.draw(st.sampled_from(sorted(fielded)))
        user = None if spectator else data.draw(st.sampled_from(self.world.people))
        self.hostile_frame(data, self.socket_of(data, user), name, target, data.draw(WRONG_JSON))

    @rule(data=st.data(), frame=st.sampled_from(MALFORMED), binary=st.booleans())
    @counted
    def malformed_frame(self, data, frame: str, binary: bool) -> None:
        sock = data.draw(st.sampled_from(self.sockets)) if self.sockets else None
        if sock is None:
            return
        sock.seq += 1
        text = frame % {"seq": sock.seq, "long": "k" * 300} if "%(" in frame else frame
        if binary:
            answer = self.run(self._frame(sock, data=text.encode()))
        else:
            answer = self.run(self._frame(sock, text=text))
        assert answer["type"] == "error", f"{text[:80]!r} was acked"

    @rule(data=st.data(), cmd=st.sampled_from(("act", "leave", "sit_out")))
    @counted
    def command_meets_a_database_fault(self, data, cmd: str) -> None:
        """The database fails under one command: an error the client can act on."""
        user = data.draw(st.sampled_from(self.world.players))
        sock = self.socket_of(data, user)
        command = commands.COMMANDS[cmd]
        service = command.__dict__["service"]

        def failing(**kwargs: Any) -> None:
            raise OperationalError("chaos: the database went away")

        command.service = staticmethod(failing)
        try:
            answer = self.command(sock, cmd, action="call")
        finally:
            command.service = service
        assert answer["type"] == "error", answer

    # -- the clock and the cashier ----------------------------------------------------

    def _deal(self) -> None:
        hand_start_due(table_id=self.table.pk)

    @rule()
    @counted
    def deal_when_due(self) -> None:
        self._deal()

    @rule()
    @counted
    def turn_times_out(self) -> None:
        live = harness.live_hand(self.table)
        if live is None:
            return
        hand = live[0]
        Hand.objects.filter(pk=hand.pk).update(turn_deadline=timezone.now() - timedelta(seconds=5))
        assert play.turn_timeout(table_id=self.table.pk, hand_id=hand.pk, turn=hand.turn_version)

    @rule(data=st.data())
    @counted
    def withdrawal_requested(self, data) -> None:
        user = data.draw(st.sampled_from(self.world.players))
        try:
            withdrawal = cashier.withdrawal_request(
                user=user, amount=500, idempotency_key=f"web:{user.pk}:withdraw:{uuid.uuid4().hex}"
            )
        except CashierError:
            return
        self.pending.append(withdrawal)

    @rule(data=st.data(), approve=st.booleans())
    @counted
    def withdrawal_decided(self, data, approve: bool) -> None:
        """Staff approve (or the player cancels) a pending withdrawal: it always works."""
        if not self.pending:
            return
        withdrawal = data.draw(st.sampled_from(self.pending))
        self.pending.remove(withdrawal)
        if approve:
            paid = cashier.withdrawal_approve(withdrawal=withdrawal, decided_by=self.world.staff)
            assert paid.status == WithdrawalStatus.PAID
            self.world.withdrawal_paid(paid.amount)
        else:
            cashier.withdrawal_cancel(withdrawal=withdrawal, user=withdrawal.user)

    # -- invariants -------------------------------------------------------------------

    @invariant()
    @checked
    def nobody_received_a_card_they_may_not_see(self) -> None:
        if not hasattr(self, "world"):
            return
        self.run(self._drain_all())
        hands: dict[int, harness.HandSecrets] = {}
        for sock in self.sockets:
            for message in sock.messages[sock.checked :]:
                hand_id = message.get("hand")
                if message.get("type") == "snapshot":
                    hand_id = (message.get("hand") or {}).get("id")
                if not isinstance(hand_id, int):
                    continue
                if hand_id not in hands:
                    hands[hand_id] = harness.HandSecrets(Hand.objects.get(pk=hand_id))
                hand = hands[hand_id]
                viewer_id = None if sock.user is None else sock.user.pk
                if message.get("type") == "snapshot":
                    harness.secrecy_check_snapshot(viewer=sock.user, snapshot=message, hand=hand)
                else:
                    harness.secrecy_check_message(viewer_id=viewer_id, body=message, hand=hand)
            sock.checked = len(sock.messages)

    @invariant()
    @checked
    def chips_conserved_and_audit_clean(self) -> None:
        if hasattr(self, "world"):
            harness.ledger_checks(self.world)
            harness.table_checks(self.world)

    @invariant()
    @checked
    def no_table_paused_or_failing(self) -> None:
        if hasattr(self, "world"):
            harness.tables_not_paused(self.world)
