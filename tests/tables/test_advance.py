"""Advance actions: ticked before the turn, run the instant it arrives, cleared when the
situation changes (a raise cancels a queued call or check; a new street clears all)."""

import pytest

from tables.engine.state import HandState
from tables.exceptions import IllegalTableAction, NotYourTurn
from tables.models import HandEvent, Seat
from tables.services import play
from tables.services.advance import seat_advance_set
from tests.kit import current, deal
from tests.tables.test_services import sit, users_at

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_handed(table):
    from tests.kit import funded_player

    players = [funded_player() for _ in range(3)]
    for number, user in zip((1, 2, 3), players, strict=True):
        sit(table, user, number)
    deal(table)
    return table


def order(table) -> tuple[HandState, dict]:
    _, state = current(table)
    return state, users_at(table)


def acted(table, seat: int) -> list[str]:
    return [
        e.data["action"]
        for e in HandEvent.objects.filter(hand__table=table, type="acted").order_by("hand", "seq")
        if e.data["seat"] == seat
    ]


def test_a_queued_call_runs_the_instant_the_turn_arrives(three_handed):
    table = three_handed
    state, users = order(table)
    # Button (seat 1) acts first preflop three-handed; seat 2 (small blind) queues a call.
    assert state.actor == 1
    seat_advance_set(table_id=table.id, user=users[2], kind="call")
    play.hand_act(table_id=table.id, user=users[1], kind="call")
    assert acted(table, 2) == ["call"]
    state, _ = order(table)
    assert state.actor == 3
    assert Seat.objects.get(number=2, table=table).advance is None


def test_a_raise_clears_a_queued_call_but_not_a_queued_fold(three_handed):
    table = three_handed
    state, users = order(table)
    seat_advance_set(table_id=table.id, user=users[2], kind="call")
    seat_advance_set(table_id=table.id, user=users[3], kind="check_fold")
    play.hand_act(table_id=table.id, user=users[1], kind="bet_raise", amount=600)
    # Seat 2's call no longer fits: it is cleared and seat 2 must decide.
    state, _ = order(table)
    assert state.actor == 2
    assert Seat.objects.get(number=2, table=table).advance is None
    assert Seat.objects.get(number=3, table=table).advance["kind"] == "check_fold"
    play.hand_act(table_id=table.id, user=users[2], kind="call")
    # Seat 3's check/fold runs: it cannot check, so it folds.
    assert acted(table, 3) == ["fold"]


def test_advance_actions_are_refused_on_ones_own_turn_and_when_malformed(three_handed):
    table = three_handed
    state, users = order(table)
    with pytest.raises(NotYourTurn) as info:
        seat_advance_set(table_id=table.id, user=users[state.actor], kind="call")
    assert info.value.code == "your_turn"
    with pytest.raises(IllegalTableAction):
        seat_advance_set(table_id=table.id, user=users[2], kind="jump")
    with pytest.raises(IllegalTableAction):
        seat_advance_set(table_id=table.id, user=users[2], kind="bet_raise", amount=100)
    assert seat_advance_set(table_id=table.id, user=users[2], kind=None) is None


def test_a_new_street_clears_every_queued_action(three_handed):
    table = three_handed
    state, users = order(table)
    play.hand_act(table_id=table.id, user=users[1], kind="call")
    play.hand_act(table_id=table.id, user=users[2], kind="call")
    # The big blind (seat 3) has the option; seat 1 queues a check meant for preflop...
    seat_advance_set(table_id=table.id, user=users[1], kind="fold")
    play.hand_act(table_id=table.id, user=users[3], kind="check")
    state, _ = order(table)
    assert str(state.street) == "flop"
    assert Seat.objects.get(number=1, table=table).advance is None
    assert acted(table, 1) == ["call"]
