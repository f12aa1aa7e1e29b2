"""The table stream as a contract (after Zulip's `verify_action`): scenarios that run
every table service and record, for every viewer (each player and a spectator), the
snapshot before, the messages that viewer receives, and the snapshot after.

`record_scenarios()` runs them on the real database and returns the recorded `Step`s;
`recording_rolled_back()` does so once for the suite (the `stream_recording` fixture of
tests/conftest.py), in a transaction rolled back after. Three tests read that recording:
tests/tables/test_stream_contract.py checks the stream itself (one numbered stream for
all, nothing a viewer may not see), tests/tables/test_hand_helper.py the best hands it
names, and tests/browser/test_stream_replay.py replays each viewer's stream through the
browser's `store.js` and checks that snapshot-before plus the messages shows what the
snapshot-after shows.

Each scenario sits players at a table whose clocks never run out by themselves and
whose pause between hands is an hour, so that the timer loop (alive in the browser
tests) never deals or times out a turn behind the scenario's back: the scenario deals
and times out itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import User
from cashier.audit import ledger_audit
from cashier.services import deposit_create
from tables.commands import Advance
from tables.engine.config import Game, Structure
from tables.engine.state import HandState
from tables.events import TableMessage
from tables.models import Hand, HandEvent, HandStatus, Table, TableStatus
from tables.selectors import table_snapshot
from tables.services import admin, advance, blind_options, chat, play, seating, top_up
from tables.services.hands import hand_start_due
from tests.kit import StakeLevelFactory, TableFactory, UserFactory, rolled_back

_keys = itertools.count(1)
HOUR_MS = 3_600_000


@dataclass
class Step:
    """One service call as each viewer saw it (viewer None: a spectator)."""

    scenario: str
    name: str
    # Who sent the command and its fields, when it was a player's: the page applies its
    # own queued advance action itself (nobody else may learn of it, so no message does).
    by: str | None = None
    command: dict[str, Any] | None = None
    # viewer label ("user <id>" or "spectator") -> (snapshot before, messages, after)
    views: dict[str, tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]] = field(
        default_factory=dict
    )

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "name": self.name,
            "by": self.by,
            "command": self.command,
            "views": {
                viewer: {"before": before, "messages": messages, "after": after}
                for viewer, (before, messages, after) in self.views.items()
            },
        }


class Recorder:
    """Captures what the table commands hand over for publishing."""

    def __init__(self) -> None:
        self.messages: list[TableMessage] = []

    def publish(self, *, table_id: int, messages: list[TableMessage]) -> None:
        self.messages.extend(messages)


class Scenario:
    """A table, its players and the recorded steps of one scenario."""

    def __init__(self, name: str, recorder: Recorder, **stake: Any) -> None:
        self.name = name
        self.recorder = recorder
        self.stake = StakeLevelFactory(**stake)
        self.table = TableFactory(
            stake_level=self.stake,
            seats=6,
            action_seconds=HOUR_MS // 1000,
            pause_between_hands_ms=HOUR_MS,
        )
        Table.objects.filter(pk=self.table.pk).update(
            next_hand_at=timezone.now() + timedelta(hours=1)
        )
        self.players: list[User] = []
        self.steps: list[Step] = []

    def player(self) -> User:
        user = UserFactory()
        deposit_create(user=user, amount=1_000_000, idempotency_key=f"stream-{next(_keys)}")
        self.players.append(user)
        return user

    def viewers(self) -> list[User | None]:
        return [*self.players, None]

    def snapshot(self, user: User | None) -> dict[str, Any]:
        table = Table.objects.select_related("stake_level").get(pk=self.table.pk)
        return table_snapshot(table=table, user=user)

    def step(
        self,
        name: str,
        call: Callable[[], object],
        *,
        by: User | None = None,
        command: dict[str, Any] | None = None,
    ) -> None:
        """Run `call` (one service) and record what every viewer saw of it."""
        before = {_label(u): self.snapshot(u) for u in self.viewers()}
        first = len(self.recorder.messages)
        call()
        sent = self.recorder.messages[first:]
        step = Step(
            scenario=self.name,
            name=name,
            by=None if by is None else _label(by),
            command=command,
        )
        for user in self.viewers():
            after = self.snapshot(user)
            uid = None if user is None else user.id
            received = [m.for_user(uid) for m in sent]
            step.views[_label(user)] = (before[_label(user)], received, after)
        self.steps.append(step)

    # The services, as a player or the room would call them.

    def sit(self, user: User, seat: int, **fields: Any) -> None:
        self.step(
            f"seat_take seat {seat}",
            lambda: seating.seat_take(
                table_id=self.table.id,
                user=user,
                seat_number=seat,
                buy_in=fields.pop("buy_in", self.stake.buy_in_max),
                idempotency_key=f"stream-{next(_keys)}",
                **fields,
            ),
        )

    def deal(self) -> None:
        def deal_now() -> None:
            Table.objects.filter(pk=self.table.pk).update(next_hand_at=None)
            hand_start_due(table_id=self.table.id)
            # The next deal waits for the scenario, not for the clock.
            Table.objects.filter(pk=self.table.pk).update(
                next_hand_at=timezone.now() + timedelta(hours=1)
            )

        self.step("hand_start", deal_now)

    def hand(self) -> tuple[Hand, HandState] | None:
        hand = Hand.objects.filter(table=self.table, status=HandStatus.IN_PROGRESS).first()
        return None if hand is None else (hand, HandState.from_dict(hand.state))

    def actor(self) -> User:
        _, state = self.hand()
        return next(u for u in self.players if _seat_of(self.table, u) == state.actor)

    def act(self, kind: str, amount: int | None = None) -> None:
        user = self.actor()
        hand, _ = self.hand()
        self.step(
            f"hand_act {kind}",
            lambda: play.hand_act(
                table_id=self.table.id, user=user, kind=kind, amount=amount, turn=hand.turn_version
            ),
        )

    def act_to_the_end(self) -> None:
        """Check or call until the hand is over."""
        while (current := self.hand()) is not None:
            _, state = current
            self.act("check" if state.legal_actions().can_check else "call")

    def time_out(self) -> None:
        hand, _ = self.hand()

        def timeout() -> object:
            # Due only now, after the viewers' snapshots before: a running timer loop (the
            # live room's) that met the deadline first would publish where no recorder is.
            Hand.objects.filter(pk=hand.pk).update(
                turn_deadline=timezone.now() - timedelta(seconds=1)
            )
            return play.turn_timeout(
                table_id=self.table.id, hand_id=hand.id, turn=hand.turn_version
            )

        self.step("turn_timeout", timeout)

    def all_in(self) -> None:
        """The one to act moves all-in, then everyone calls."""
        _, state = self.hand()
        self.act("bet_raise", state.legal_actions().all_in_to)
        while (current := self.hand()) is not None and current[1].actor is not None:
            self.act("call")

    def answer_run_twice(self, agree: bool) -> None:
        """The first player still asked answers whether to run it twice."""
        _, state = self.hand()
        assert state.run_twice is not None
        seat = state.run_twice.undecided[0]
        user = next(u for u in self.players if _seat_of(self.table, u) == seat)
        self.step(
            f"run_twice {'yes' if agree else 'no'}",
            lambda: play.hand_run_twice(table_id=self.table.id, user=user, agree=agree),
        )

    def call(self, name: str, service: Callable[..., object], **fields: Any) -> None:
        self.step(name, lambda: service(table_id=self.table.id, **fields))

    def advance(self, user: User, kind: str) -> None:
        self.step(
            f"advance {kind}",
            lambda: advance.seat_advance_set(table_id=self.table.id, user=user, kind=kind),
            by=user,
            command=Advance(action=kind).to_wire(),
        )


def _label(user: User | None) -> str:
    return "spectator" if user is None else f"user {user.id}"


def _seat_of(table: Table, user: User) -> int | None:
    seat = table.seat_set.filter(player=user).first()
    return None if seat is None else seat.number


def scenario_a_whole_hand(recorder: Recorder) -> Scenario:
    """Three sit down, a hand is dealt and played out with a raise, a fold, a timeout, an
    advance action, a sit-out and a leave asked mid-hand; then an auto top-up order, a
    top-up, a second hand, the table paused and opened."""
    s = Scenario("a whole hand", recorder, game=Game.OMAHA8, structure=Structure.PL)
    ann, bob, cat = s.player(), s.player(), s.player()
    s.sit(ann, 1)
    s.sit(bob, 2)
    s.sit(cat, 4, buy_in=s.stake.buy_in_min)
    s.deal()
    _, state = s.hand()
    waiting = next(u for u in s.players if _seat_of(s.table, u) != state.actor)
    s.advance(waiting, "check_fold")
    s.act("bet_raise", state.legal_actions().min_to)
    s.time_out()
    s.call("sit_out mid-hand", seating.seat_sit_out, user=cat)
    s.act_to_the_end()
    s.call("sit_in", seating.seat_sit_in, user=cat)
    s.call("auto_top_up max", top_up.auto_top_up_set, user=bob, mode="max")
    s.call(
        "top_up",
        seating.seat_top_up,
        user=cat,
        amount=s.stake.big_blind,
        idempotency_key=f"stream-{next(_keys)}",
    )
    s.deal()
    s.call("leave mid-hand", seating.seat_leave, user=s.actor())
    s.act_to_the_end()
    s.call("pause", admin.table_status_set, status=TableStatus.PAUSED)
    s.call("open", admin.table_status_set, status=TableStatus.OPEN)
    return s


def scenario_straddle_and_reconnect(recorder: Recorder) -> Scenario:
    """A straddle asked for and posted, the actor's connection dropped and back (the
    reconnect bonus), a line of chat, a player leaving between hands."""
    s = Scenario("straddle and reconnect", recorder, allow_straddle=True)
    players = [s.player() for _ in range(4)]
    for number, user in enumerate(players, start=1):
        s.sit(user, number)
    s.deal()
    s.act_to_the_end()
    # Who may straddle next hand: the note each player got says; ask with the one open.
    asker = next(
        u
        for u in players
        if (s.snapshot(u)["you"]["blind_options"] or {}).get("straddle", {}).get("open")
    )
    s.call(
        "straddle", blind_options.seat_blind_option_set, user=asker, kind="straddle", wanted=True
    )
    s.deal()
    actor = s.actor()
    s.call("disconnected", play.seat_disconnected, user=actor)
    s.call("reconnected", play.seat_reconnected, user=actor)
    s.act("fold")
    s.act_to_the_end()
    s.call("chat", chat.chat_send, user=players[0], text="nice hand")
    s.call("leave between hands", seating.seat_leave, user=players[-1])
    return s


def scenario_run_it_twice(recorder: Recorder) -> Scenario:
    """Run it twice: three all-in before the flop all agree, in turn (two boards)."""
    s = _all_in_asked("run it twice", recorder)
    for _ in range(3):
        s.answer_run_twice(True)
    return s


def scenario_run_it_once_by_the_clock(recorder: Recorder) -> Scenario:
    """Run it twice asked: one agrees, the clock refuses for the others (one board)."""
    s = _all_in_asked("run it once by the clock", recorder)
    s.answer_run_twice(True)
    s.time_out()
    return s


def _all_in_asked(name: str, recorder: Recorder) -> Scenario:
    """Three players at a table playing run it twice, all-in before the flop: asked."""
    s = Scenario(name, recorder, run_it_twice=True)
    for number in (1, 2, 3):
        s.sit(s.player(), number, buy_in=s.stake.buy_in_min)
    s.deal()
    s.all_in()
    return s


SCENARIOS = (
    scenario_a_whole_hand,
    scenario_straddle_and_reconnect,
    scenario_run_it_twice,
    scenario_run_it_once_by_the_clock,
)


@contextmanager
def recording(monkeypatch: Any) -> Iterator[Recorder]:
    """Capture every publish of the table commands (in place of the channel layer)."""
    import tables.services.command as command

    recorder = Recorder()
    monkeypatch.setattr(command, "publish_on_commit", recorder.publish)
    yield recorder


def record_scenarios(monkeypatch: Any) -> list[Step]:
    with recording(monkeypatch) as recorder:
        return [step for scenario in SCENARIOS for step in scenario(recorder).steps]


@dataclass
class Recording:
    """The scenarios' steps, and what the database said of them before its rollback."""

    steps: list[Step]
    # hand id -> the seats its `shown` events turned face up
    shown: dict[int, set[int]]


def recording_rolled_back() -> Recording:
    """Record the scenarios in a transaction that is rolled back after, as a `db` test's
    is (the services' durable blocks run inside it as inside a TestCase's), once the
    ledger audit has passed on what they did."""
    with pytest.MonkeyPatch.context() as monkeypatch, rolled_back():
        steps = record_scenarios(monkeypatch)
        shown: dict[int, set[int]] = {}
        for hand_id, data in HandEvent.objects.filter(type="shown").values_list("hand_id", "data"):
            shown.setdefault(hand_id, set()).add(data["seat"])
        report = ledger_audit()
        assert report.ok, [str(d) for d in report.discrepancies]
    return Recording(steps=steps, shown=shown)
