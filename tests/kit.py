"""The test kit of the suite: one module for what every test package builds with.

- factories (factory_boy, HackSoft's test kit): users, stake levels, tables;
- players and money: `key` (a fresh idempotency key), `funded_player`, `wallet`,
  `ledger_state` (to show that a refusal moved nothing);
- the API: `api_for` (a DRF client signed in as a user, or anonymous);
- tables and hands: `seat_players`, `sit`, `deal`, `current`, and real hands played
  through the table services (`table_with_players`, `play_hand`, `play_passively`,
  `act_passively`, `stacked_deck_forced`), exactly as the live room plays them: players
  are funded and seated through `seat_take`, hands dealt by the hand-start service and
  every decision made through `hand_act`; a stacked deck replaces only the shuffle.

Fixtures stay in the conftest files (the suite-wide ones, such as `player` and
`auditor`, in tests/conftest.py); they build with this kit.
"""

import contextlib
import itertools
import random
from collections.abc import Iterator, Sequence
from datetime import timedelta
from unittest import mock

import factory
from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import User
from cashier.models import AccountKind, LedgerAccount, LedgerEntry, LedgerTransaction
from cashier.selectors import wallet_balance
from cashier.services import deposit_create
from tables.engine.state import HandState
from tables.engine.testing import stacked_deck
from tables.models import Game, Hand, HandStatus, Seat, StakeLevel, Structure, Table
from tables.services import play, seating
from tables.services.hands import hand_start_due

PASSWORD = "correct-horse-battery"
GAMES = ("omaha", "omaha8", "holdem")
STRUCTURES = ("FL", "SL", "PL", "NL")

# -- factories ----------------------------------------------------------------------------


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"player{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password(PASSWORD)


class StakeLevelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = StakeLevel

    name = factory.Sequence(lambda n: f"NL Hold'em 1/2 #{n}")
    game = Game.HOLDEM
    structure = Structure.NO_LIMIT
    small_blind = 100
    big_blind = 200
    small_bet = 200
    big_bet = 400
    buy_in_min = 4_000
    buy_in_max = 20_000


class TableFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Table

    name = factory.Sequence(lambda n: f"Table {n}")
    stake_level = factory.SubFactory(StakeLevelFactory)


# -- players and money ----------------------------------------------------------------------

_keys = itertools.count(1)


def key() -> str:
    """A fresh idempotency key."""
    return f"test-key-{next(_keys)}"


def funded_player(amount: int = 100_000, **fields) -> User:
    """A new player whose wallet holds `amount` cents (a real deposit)."""
    user = UserFactory(**fields)
    deposit_create(user=user, amount=amount, idempotency_key=key())
    return user


def wallet(user: User) -> int:
    """The player's wallet balance (the wallet must exist)."""
    return LedgerAccount.objects.get(kind=AccountKind.WALLET, user=user).balance


def ledger_state() -> tuple[int, int, dict[int, int]]:
    """Counts of transactions and legs, and every user's wallet balance: to prove that a
    refused request changed nothing."""
    balances = {user.pk: wallet_balance(user=user) for user in User.objects.all()}
    return LedgerTransaction.objects.count(), LedgerEntry.objects.count(), balances


# -- the API --------------------------------------------------------------------------------


def api_for(user: User | None) -> APIClient:
    """A DRF test client signed in as `user` (anonymous for None)."""
    client = APIClient()
    if user is not None:
        client.force_authenticate(user=user)
    return client


# -- tables and hands -----------------------------------------------------------------------


def seat_players(table: Table, n: int, *, buy_in: int = 10_000) -> list[User]:
    """Seat n funded players in seats 1 to n; a timer loop deals only once all are seated
    (each sit is its own durable command, so the deal is held meanwhile)."""
    players = [funded_player() for _ in range(n)]
    held = Table.objects.get(pk=table.pk).next_hand_at
    Table.objects.filter(pk=table.pk).update(next_hand_at=timezone.now() + timedelta(hours=1))
    for number, user in enumerate(players, start=1):
        seating.seat_take(
            table_id=table.id,
            user=user,
            seat_number=number,
            buy_in=buy_in,
            idempotency_key=key(),
        )
    # The deal is due when it was (at once if it was not due: the sits asked for one).
    Table.objects.filter(pk=table.pk).update(next_hand_at=held or timezone.now())
    return players


def deal(table: Table) -> Hand | None:
    """Deal the next hand now, as the timer loop would once the pause is over."""
    Table.objects.filter(pk=table.pk).update(next_hand_at=None)
    return hand_start_due(table_id=table.id)


def current(table: Table) -> tuple[Hand, HandState]:
    """The hand in progress at the table, with its engine state."""
    hand = Hand.objects.get(table=table, status=HandStatus.IN_PROGRESS)
    return hand, HandState.from_dict(hand.state)


def stake_for(game: str, structure: str) -> StakeLevel:
    """A 1/2 stake level (cents 100/200) of the game and structure; spread limit 2-6."""
    return StakeLevelFactory(
        name=f"{game} {structure} 1/2",
        game=game,
        structure=structure,
        spread_min=200 if structure == "SL" else 0,
        spread_max=600 if structure == "SL" else 0,
    )


def table_with_players(
    stake: StakeLevel, count: int = 3, *, buy_in: int = 10_000
) -> tuple[Table, list[User]]:
    """A 6-seat table of the stake level with ``count`` funded players in seats 1..

    Its hands wait an hour to be dealt, so that the suite's timer loop (running for other
    tests) never deals one first: these tests deal each hand themselves (`deal`).
    """
    table = TableFactory(
        stake_level=stake,
        seats=6,
        next_hand_at=timezone.now() + timedelta(hours=1),
        pause_between_hands_ms=3_600_000,
    )
    users = [funded_player() for _ in range(count)]
    for number, user in enumerate(users, start=1):
        sit(table, user, number, buy_in=buy_in)
    return table, users


def sit(table: Table, user: User, number: int, *, buy_in: int = 10_000) -> Seat:
    return seating.seat_take(
        table_id=table.id, user=user, seat_number=number, buy_in=buy_in, idempotency_key=key()
    )


def _players(table: Table) -> dict[int, User]:
    return {s.number: s.player for s in Seat.objects.filter(table=table).select_related("player")}


def _decide(state: HandState, rng: random.Random) -> tuple[str, int | None]:
    """A mix of folds, calls, checks and raises that pokerkit's fixed-limit rules also
    accept in spread limit (raises by exactly the small bet, then the big bet)."""
    legal = state.legal_actions()
    config = state.config
    roll = rng.random()
    if legal.can_fold and roll < 0.15:
        return "fold", None
    if legal.min_to is not None and legal.max_to is not None and roll > 0.65:
        if config.structure.is_limit:
            late = str(state.street) in ("turn", "river")
            step = state.limits.big_bet if late else state.limits.small_bet
            to = state.to_match + step
            if legal.min_to <= to <= legal.max_to:
                return "bet_raise", to
        else:
            high = min(legal.max_to, legal.min_to + 2 * config.big_blind)
            return "bet_raise", rng.randint(legal.min_to, high)
    return ("check" if legal.can_check else "call"), None


def play_hand(table: Table, rng: random.Random) -> Hand:
    """Deal the next hand and play it to the end with a mix of decisions."""
    hand = deal(table)
    assert hand is not None, "the table could not deal"
    players = _players(table)
    hand, state = current(table)
    while not state.over:
        kind, amount = _decide(state, rng)
        play.hand_act(table_id=table.id, user=players[state.actor], kind=kind, amount=amount)
        hand.refresh_from_db()
        state = HandState.from_dict(hand.state)
    return hand


def act_passively(table: Table, players: dict[int, User] | None = None) -> Hand:
    """Everyone checks or calls until the hand in progress ends, each turn by the user
    at that seat (`players`, seat number to user; read from the seats if not given)."""
    players = _players(table) if players is None else players
    hand, state = current(table)
    while not state.over:
        kind = "check" if state.legal_actions().can_check else "call"
        play.hand_act(table_id=table.id, user=players[state.actor], kind=kind)
        hand.refresh_from_db()
        state = HandState.from_dict(hand.state)
    return hand


def play_passively(table: Table) -> Hand:
    """Deal the next hand; everyone checks or calls to the end."""
    deal(table)
    return act_passively(table)


@contextlib.contextmanager
def stacked_deck_forced(
    holes: dict[int, str], board: str, *, button: int, seats: Sequence[int]
) -> Iterator[None]:
    """Deal the next hands from this stacked deck instead of a shuffled one."""
    deck = stacked_deck(holes, board, button=button, seats=seats)
    with mock.patch("tables.services.hands.shuffled_deck", return_value=list(deck)):
        yield


@contextlib.contextmanager
def rolled_back() -> Iterator[None]:
    """A transaction rolled back at the end, as a `db` test's is: the services' durable
    blocks open inside it as inside a TestCase's. For set-up shared by several tests
    (a session or module fixture) that must leave nothing behind."""
    atomic = transaction.atomic()
    atomic._from_testcase = True  # what lets a durable block open inside it
    with atomic:
        yield
        transaction.set_rollback(True)
