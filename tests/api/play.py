"""Playing real hands through the table services, for the hand-history and rake tests.

Players are funded and seated through `seat_take`, hands dealt by the hand-start service
and every decision made through `hand_act`, exactly as the live room does. A stacked
deck can be forced with `stacked_deck_forced` (the shuffle is the only thing replaced).
"""

import contextlib
import random
from collections.abc import Iterator, Sequence
from datetime import timedelta
from unittest import mock

from django.utils import timezone

from accounts.models import User
from tables.engine.state import HandState
from tables.engine.testing import stacked_deck
from tables.models import Hand, Seat, StakeLevel, Table
from tables.services import play, seating
from tests.factories import StakeLevelFactory, TableFactory
from tests.tables.conftest import current, deal, funded_player, key

GAMES = ("omaha", "omaha8", "holdem")
STRUCTURES = ("FL", "SL", "PL", "NL")


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

    Its hands wait an hour to be dealt, so that the suite's Celery worker (running for
    other tests) never deals one first: these tests deal each hand themselves (`deal`).
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
