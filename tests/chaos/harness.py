"""What both chaos machines share: the world they play in and the invariants they check.

A `World` is one example's room: two tables of different games and structures, a few
funded players and one staff account, created through the real services. The checks
read the real ledger and the real tables after every step:

- `ledger_checks`: `cashier.audit.ledger_audit()` is clean, and the chips of this
  world (its wallets, its tables' accounts and what the house raked since the world
  began) equal what its players deposited, measured on the ledger itself;
- `table_checks`: each table's ledger account equals its seats' stacks and the hand in
  progress holds exactly the chips it was dealt; a hand in progress is never over and
  always has an actor with at least one legal action and a deadline;
- `tables_not_paused`: no table is paused or carries a failure unless the machine asked
  for it (paused it, or broke it on purpose), whatever the players sent (issue #46:
  only the room's own failures pause a table);
- `secrecy_check_snapshot` / `secrecy_check_message`: a viewer never sees another
  player's hole cards before they are shown, in a snapshot or in a message meant for
  them.

`hostile_text()` is what a hostile client puts in a text field (issue #46): lone
surrogates, NUL and other controls, bidi overrides, line separators, piled marks, 10k
characters, and any string at all, surrogates included. The machines draw it, now and
then, for every text field of every command.

Sizes come from the environment (CHAOS_EXAMPLES, CHAOS_STEPS) so that `make test` stays
short and a long run explores more.
"""

import functools
import itertools
import os
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Sum
from django.test import TransactionTestCase
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from accounts.models import User
from cashier.audit import ledger_audit
from cashier.models import AccountKind, LedgerAccount
from cashier.services import deposit_create
from tables.engine.cards import card_str
from tables.engine.state import HandState
from tables.ledger import table_account_get, table_ledger_reference
from tables.models import Hand, HandEvent, HandPlayer, HandStatus, Seat, Table, TableStatus
from tests.chaos.recording import RECORDED
from tests.kit import TableFactory, UserFactory, stake_for

CARD = re.compile(r"\A[2-9TJQKA][cdhs]\Z")
# The room's own key families a client may try to pre-claim (issue #12, finding 2).
ROOM_KEY_SHAPES = ("hand:{hand}:rake", "leave:seat:{seat}", "withdrawal:{withdrawal}:settle")
STARTING_DEPOSIT = 100_000
_worlds = itertools.count(1)
# What a hostile client sends in a text field (issue #46, finding 1 and after).
HOSTILE_STRINGS = (
    "\ud800",  # the finding's lone surrogate
    "a\udfffb",
    "nul\x00",
    "bell\x07",
    "\u202eevil",  # a right-to-left override
    "zero\u200bwidth",
    "\ufeff",
    "line\u2028break",
    "para\u2029graph",
    "z" + "\u0301\u0302\u0303\u0304" * 10,  # "Zalgo"
    "e\u0301\u0301",
    "",
    "   ",
    "x" * 10_000,
    "y" * 151,
    "fold ",
    "FOLD",
    "' OR 1=1 --",
    '{"cmd": "leave"}',
)


# The categories of characters no text field takes (each drawn as often as the others:
# by code points, surrogates would be rare beside the unassigned and private ones).
UNSAFE_CATEGORIES = ("Cs", "Cc", "Cf", "Zl", "Zp", "Co", "Cn")


def hostile_text() -> st.SearchStrategy[str]:
    """A string a hostile client sends: one of the known bad ones, any text with one
    character of an unsafe category in it, or any string at all (surrogates, controls
    and separators included)."""
    unsafe = st.sampled_from(UNSAFE_CATEGORIES).flatmap(
        lambda category: st.characters(categories=[category])
    )
    return st.one_of(
        st.sampled_from(HOSTILE_STRINGS),
        st.builds(
            lambda head, char, tail: head + char + tail,
            st.text(max_size=20),
            unsafe,
            st.text(max_size=20),
        ),
        st.text(st.characters(exclude_categories=()), max_size=300),
    )


def sometimes_hostile(usual: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly `usual`, now and then a hostile string."""
    return st.one_of(usual, usual, usual, hostile_text())


def chaos_settings(*, examples: int, steps: int) -> settings:
    """Hypothesis settings: small by default, raised by CHAOS_EXAMPLES / CHAOS_STEPS;
    CHAOS_NO_SHRINK=1 reports the first failure as found (for the mutant runs)."""
    phases = [p for p in Phase if p is not Phase.shrink or not os.environ.get("CHAOS_NO_SHRINK")]
    return settings(
        phases=phases,
        max_examples=int(os.environ.get("CHAOS_EXAMPLES", examples)),
        stateful_step_count=int(os.environ.get("CHAOS_STEPS", steps)),
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


@dataclass
class World:
    """One example's tables and people, and the ledger as it stood before them."""

    tables: list[Table]
    players: list[User]
    staff: User
    deposited: int
    house_before: int
    hold_before: int
    # Why a table may be paused or failing: the machine paused it, or broke it on purpose.
    asked_status: dict[int, str] = field(default_factory=dict)
    broken: set[int] = field(default_factory=set)

    @property
    def people(self) -> list[User]:
        return [*self.players, self.staff]

    def deposit(self, user: User, amount: int) -> None:
        deposit_create(user=user, amount=amount, idempotency_key=f"chaos:{uuid.uuid4().hex}")
        self.deposited += amount

    def withdrawal_paid(self, amount: int) -> None:
        self.deposited -= amount  # what is inside the room now


def world_create(*, structures: tuple[tuple[str, str], ...], players: int) -> World:
    """Tables of the given (game, structure)s, dealt at once when due (no pause, long
    clocks: time passes only when a machine says so), and funded players."""
    n = next(_worlds)
    tag = uuid.uuid4().hex[:6]
    tables = []
    for k, (game, structure) in enumerate(structures):
        stake = stake_for(game, structure)
        stake.name = f"{stake.name} chaos {tag} {k}"
        # Every other table plays run it twice: its question is a step of its own.
        stake.run_it_twice = k % 2 == 1
        stake.save(update_fields=["name", "run_it_twice"])
        tables.append(
            TableFactory(
                name=f"chaos {tag} {n}.{k}",
                stake_level=stake,
                seats=6,
                pause_between_hands_ms=0,
                action_seconds=600,
                time_bank_seconds=0,
            )
        )
    world = World(
        tables=tables,
        players=[UserFactory(username=f"chaos{tag}p{i}") for i in range(players)],
        staff=UserFactory(username=f"chaos{tag}staff", is_staff=True),
        deposited=0,
        house_before=_system_balance(AccountKind.HOUSE),
        hold_before=_system_balance(AccountKind.HOLD),
    )
    for user in world.players:
        world.deposit(user, STARTING_DEPOSIT)
    return world


def world_end() -> None:
    """Empty the database after an example, as a transactional test's teardown does, so
    that every example starts from an empty room and the audit, which reads the whole
    ledger after every step, stays as quick in the hundredth example as in the first."""
    TransactionTestCase._fixture_teardown(TransactionTestCase())  # the suite's retrying flush
    RECORDED.clear()  # the messages of rows that are gone


def _system_balance(kind: AccountKind) -> int:
    account = LedgerAccount.objects.filter(kind=kind).first()
    return account.balance if account else 0


def wallet(user: User) -> int:
    account = LedgerAccount.objects.filter(kind=AccountKind.WALLET, user=user).first()
    return account.balance if account else 0


def table_account(table: Table) -> int:
    account = table_account_get(table=table)
    return account.balance if account else 0


def live_hand(table: Table) -> tuple[Hand, HandState] | None:
    hand = Hand.objects.filter(table=table, status=HandStatus.IN_PROGRESS).first()
    return None if hand is None else (hand, HandState.from_dict(hand.state))


# -- invariants ---------------------------------------------------------------------------


def ledger_checks(world: World) -> None:
    """The audit is clean and the world's chips are what its players deposited."""
    report = ledger_audit()
    assert report.ok, [str(d) for d in report.discrepancies]
    wallets = LedgerAccount.objects.filter(
        kind=AccountKind.WALLET, user__in=world.people
    ).aggregate(total=Sum("balance"))["total"]
    tables = LedgerAccount.objects.filter(
        kind=AccountKind.TABLE,
        reference__in=[table_ledger_reference(table_id=t.pk) for t in world.tables],
    ).aggregate(total=Sum("balance"))["total"]
    raked = _system_balance(AccountKind.HOUSE) - world.house_before
    held = _system_balance(AccountKind.HOLD) - world.hold_before
    held_total = (wallets or 0) + (tables or 0) + raked + held
    assert held_total == world.deposited, (
        f"chips not conserved: wallets {wallets} + tables {tables} + raked {raked} + "
        f"held {held} = {held_total}, deposited {world.deposited}"
    )
    # The whole ledger: everything held inside the room is what came in from outside.
    inside = LedgerAccount.objects.exclude(kind=AccountKind.CLEARING).aggregate(
        total=Sum("balance")
    )["total"]
    assert (inside or 0) == -_system_balance(AccountKind.CLEARING)


def tables_not_paused(world: World) -> None:
    """No table is paused, nor counts a failure, unless the machine broke it on purpose
    (then only the room's own work on it counts) or an admin paused it."""
    for table in Table.objects.filter(pk__in=[t.pk for t in world.tables]):
        if table.pk in world.broken:
            continue
        assert table.failure_count == 0 and not table.paused_reason, (
            f"table {table.pk} failing by itself: {table.failure_count} {table.paused_reason!r}"
        )
        if table.status != TableStatus.OPEN:
            assert world.asked_status.get(table.pk) == table.status, (
                f"table {table.pk} is {table.status} but nobody asked for it"
            )


def failure_counts(world: World) -> dict[int, int]:
    """Each table's count of failures in a row."""
    tables = Table.objects.filter(pk__in=[t.pk for t in world.tables])
    return dict(tables.values_list("pk", "failure_count"))


def table_checks(world: World) -> None:
    for stale in world.tables:
        table = Table.objects.get(pk=stale.pk)
        seats = list(Seat.objects.filter(table=table))
        assert all(s.stack >= 0 for s in seats), [(s.number, s.stack) for s in seats]
        assert table_account(table) == sum(s.stack for s in seats), (
            f"table {table.pk}: account {table_account(table)} != seats "
            f"{sum(s.stack for s in seats)}"
        )
        live = live_hand(table)
        if live is None:
            continue
        hand, state = live
        assert not state.over, f"hand {hand.pk} is over but still in progress"
        assert sum(state.stacks) + state.pot_total == sum(state.starting_stacks)
        by_number = {s.number: s for s in seats}
        dealt = dict(HandPlayer.objects.filter(hand=hand).values_list("seat", "user_id"))
        for number, start in zip(state.seats, state.starting_stacks, strict=True):
            seat = by_number.get(number)
            assert seat is not None and seat.player_id == dealt[number], (
                f"hand {hand.pk}: the player dealt in at seat {number} is gone"
            )
            assert seat.stack == start, f"hand {hand.pk}: seat {number} moved during the hand"
        assert hand.turn_deadline is not None, f"hand {hand.pk} has no clock"
        if state.asking_run_twice:
            # Nobody acts: the players asked answer, and someone is still to answer.
            assert state.run_twice is not None and state.run_twice.undecided, hand.pk
            continue
        assert state.actor is not None, f"hand {hand.pk} has nobody to act"
        legal = state.legal_actions()
        assert legal.can_fold or legal.can_check or legal.can_call or legal.can_bet_raise


class HandSecrets:
    """What the secrecy checks read of one hand: its hole cards, who was dealt them and
    (when a message needs it) which seats were shown. A check reads the hand as it stands,
    and nothing moves while it runs: one `HandSecrets` serves every message and snapshot
    of one check, instead of the same queries for each of them and each viewer."""

    def __init__(self, hand: Hand) -> None:
        self.hand = hand
        state = HandState.from_dict(hand.state)
        # Seat -> its hole cards, as the messages write them.
        self.hole: dict[int, set[str]] = {
            seat: {card_str(c) for c in cards}
            for seat, cards in zip(state.seats, state.hole, strict=True)
        }
        self.dealt: dict[int, int] = dict(
            HandPlayer.objects.filter(hand=hand).values_list("seat", "user_id")
        )

    @functools.cached_property
    def shown(self) -> set[int]:
        """The seats a `shown` event turned face up."""
        return {
            data["seat"]
            for data in HandEvent.objects.filter(hand=self.hand, type="shown").values_list(
                "data", flat=True
            )
        }


def cards_in(body: Any) -> set[str]:
    """Every card code anywhere in a message body."""
    if isinstance(body, str):
        return {body} if CARD.match(body) else set()
    if isinstance(body, dict):
        return set().union(*(cards_in(v) for v in body.values())) if body else set()
    if isinstance(body, list | tuple):
        return set().union(*(cards_in(v) for v in body)) if body else set()
    return set()


def secrecy_check_message(
    *, viewer_id: int | None, body: dict[str, Any], hand: HandSecrets
) -> None:
    """No card of another player's hand in a message for this viewer, except a `shown`
    event (a showdown turns that seat's cards face up) for that very seat, and that
    seat's entry of `showdown_hands` once it was shown."""
    if body.get("type") == "showdown_hands":
        for entry in body["hands"]:
            assert entry["seat"] in hand.shown, f"seat {entry['seat']} was never shown: {body}"
            secrecy_check_message(viewer_id=viewer_id, body={"type": "shown", **entry}, hand=hand)
        return
    for seat, cards in hand.hole.items():
        if viewer_id is not None and hand.dealt.get(seat) == viewer_id:
            continue
        if body.get("type") == "shown" and body.get("seat") == seat:
            continue
        leaked = cards & cards_in(body)
        assert not leaked, f"viewer {viewer_id} saw seat {seat}'s {leaked} in {body}"


def secrecy_check_snapshot(
    *, viewer: User | None, snapshot: dict[str, Any], hand: HandSecrets
) -> None:
    """A snapshot shows hole cards only to the user dealt them, or once shown, in its
    players and in its hand log alike."""
    view = snapshot.get("hand")
    if view is None or view.get("id") != hand.hand.pk:
        return
    for player in view["players"]:
        if player["cards"] is None or player["shown"]:
            continue
        owner = hand.dealt.get(player["seat"])
        assert viewer is not None and owner == viewer.pk, (
            f"{getattr(viewer, 'username', 'a spectator')} sees seat {player['seat']}'s cards"
        )
    viewer_id = None if viewer is None else viewer.pk
    secrecy_check_message(
        viewer_id=viewer_id, body={k: v for k, v in snapshot.items() if k != "hand"}, hand=hand
    )
    # The hand's log, as the viewer got it on the stream (a page reopened mid-hand).
    for entry in view.get("log", []):
        secrecy_check_message(viewer_id=viewer_id, body=entry, hand=hand)
