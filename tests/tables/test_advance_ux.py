"""Issue #16: the helpers regulars know. "Call any" queued before the turn (it stays when
someone raises, and checks when checking is free), and "post a big blind now" for a
player waiting for the big blind."""

import pytest

from tables.models import HandEvent, Seat, SeatStatus
from tables.selectors import seats_public, table_seats
from tables.services import play
from tables.services.advance import seat_advance_set
from tables.services.seating import seat_sit_in
from tests.kit import TableFactory, current, deal, funded_player
from tests.tables.test_advance import acted, order, three_handed  # noqa: F401 (a fixture)
from tests.tables.test_services import play_passively, sit

pytestmark = pytest.mark.django_db


def test_a_queued_call_any_survives_a_raise_and_calls_it(three_handed):  # noqa: F811
    table = three_handed
    state, users = order(table)
    assert state.actor == 1
    seat_advance_set(table_id=table.id, user=users[2], kind="call_any")
    play.hand_act(table_id=table.id, user=users[1], kind="bet_raise", amount=600)
    assert acted(table, 2) == ["call"]
    state, _ = order(table)
    assert state.actor == 3
    assert Seat.objects.get(number=2, table=table).advance is None


def test_a_queued_call_any_checks_when_checking_is_free(three_handed):  # noqa: F811
    table = three_handed
    _, users = order(table)
    seat_advance_set(table_id=table.id, user=users[3], kind="call_any")  # the big blind
    play.hand_act(table_id=table.id, user=users[1], kind="call")
    play.hand_act(table_id=table.id, user=users[2], kind="call")
    assert acted(table, 3) == ["check"]


def test_a_player_waiting_for_the_big_blind_may_post_one_now():
    table = TableFactory(seats=6)
    for number in (1, 2, 3, 4):
        sit(table, funded_player(), number)
    deal(table)  # the first hand: the button on seat 1, the first seated
    waits, posts = funded_player(), funded_player()
    sit(table, waits, 5)
    sit(table, posts, 6)
    assert {s.status for s in table_seats(table=table) if s.number > 4} == {SeatStatus.WAITING}
    seat_sit_in(table_id=table.id, user=posts, post_big_blind=True)
    public = {s["seat"]: s for s in seats_public(table_seats(table=table))}
    assert (public[5]["posts_big_blind"], public[6]["posts_big_blind"]) == (False, True)
    play_passively(table)
    deal(table)
    hand, state = current(table)
    # Button 2, blinds 3 and 4: seat 5 waits on, seat 6 comes in with a live big blind.
    assert state.button == 2 and 5 not in state.seats and 6 in state.seats
    posted = HandEvent.objects.get(hand=hand, type="posted", data__seat=6)
    assert posted.data["kind"] == "newcomer_big_blind"
    assert not any(s["posts_big_blind"] for s in seats_public(table_seats(table=table)))
