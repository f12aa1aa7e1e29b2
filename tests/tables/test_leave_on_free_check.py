"""Finding 4 of issue 12: leaving on a free check froze the table for good.

A player who asked to leave used to be folded when the action reached them; when they
could check, the engine refused the fold and the command of whoever moved the hand on
crashed (another player's act, the timeout, the sweep), leaving the hand in progress
forever. The leaver now checks when checking is free and folds otherwise.
"""

import pytest
from channels.db import database_sync_to_async as sync_to_async
from rest_framework.test import APIClient

from tables.engine.state import HandState
from tables.models import Departure, Hand, HandEvent, HandStatus, Seat
from tables.services import play, seating
from tests.kit import current, deal, funded_player, key, wallet
from tests.tables.test_consumers import connect_as

pytestmark = pytest.mark.django_db


def heads_up(table):
    """Two players with the first hand dealt; returns (small blind, big blind).

    Heads-up the button posts the small blind and acts first preflop, the big blind
    acts first after the flop.
    """
    alice, bob = funded_player(), funded_player()
    for number, user in ((1, alice), (2, bob)):
        seating.seat_take(
            table_id=table.id, user=user, seat_number=number, buy_in=10_000, idempotency_key=key()
        )
    deal(table)
    _hand, state = current(table)
    by_seat = {1: alice, 2: bob}
    small_blind = by_seat[state.actor]
    big_blind = bob if small_blind == alice else alice
    return small_blind, big_blind


def act(table, user, kind: str) -> None:
    play.hand_act(table_id=table.id, user=user, kind=kind)


def actor_seat(table) -> int | None:
    hand = Hand.objects.get(table=table, number=1)
    return HandState.from_dict(hand.state).actor if hand.status == HandStatus.IN_PROGRESS else None


def seat_number(table, user) -> int:
    return Seat.objects.get(table=table, player=user).number


def test_a_leaver_who_can_check_checks_when_another_players_act_reaches_them(table):
    small_blind, big_blind = heads_up(table)
    leaver_seat = seat_number(table, small_blind)
    act(table, small_blind, "call")
    assert seating.seat_leave(table_id=table.id, user=small_blind) is False
    act(table, big_blind, "check")  # preflop: the flop comes, the big blind acts first
    act(table, big_blind, "check")  # the flop: the leaver's free check, played for them
    hand, state = current(table)
    assert str(state.street) == "turn"
    assert state.actor == seat_number(table, big_blind)
    leaver_actions = HandEvent.objects.filter(hand=hand, data__seat=leaver_seat, type="acted")
    assert [e.data["action"] for e in leaver_actions][-1] == "check"
    # The big blind checks it down; the leaver checks along and is cashed out at the end.
    act(table, big_blind, "check")
    act(table, big_blind, "check")
    hand.refresh_from_db()
    assert hand.status == HandStatus.FINISHED
    assert not Seat.objects.filter(table=table, player=small_blind).exists()
    departure = Departure.objects.get(player=small_blind)
    assert wallet(small_blind) == 100_000 - 10_000 + departure.stack


def test_a_leaver_facing_a_bet_still_folds(table):
    small_blind, big_blind = heads_up(table)
    act(table, small_blind, "call")
    seating.seat_leave(table_id=table.id, user=small_blind)
    act(table, big_blind, "check")
    play.hand_act(table_id=table.id, user=big_blind, kind="bet_raise", amount=400)
    hand = Hand.objects.get(table=table, number=1)
    assert hand.status == HandStatus.FINISHED
    state = HandState.from_dict(hand.state)
    assert str(state.status[state.index_of(seat_number(table, big_blind))]) != "folded"
    assert not Seat.objects.filter(table=table, player=small_blind).exists()


def test_leaving_on_ones_own_turn_with_a_free_check_checks(table):
    small_blind, big_blind = heads_up(table)
    act(table, small_blind, "call")
    act(table, big_blind, "check")
    act(table, big_blind, "check")  # the flop: now the small blind may check for free
    assert actor_seat(table) == seat_number(table, small_blind)
    assert seating.seat_leave(table_id=table.id, user=small_blind) is False
    _hand, state = current(table)
    assert str(state.street) == "turn"
    assert state.actor == seat_number(table, big_blind)


def test_leaving_over_rest_on_ones_own_turn_with_a_free_check_is_not_a_500(table):
    small_blind, big_blind = heads_up(table)
    act(table, small_blind, "call")
    act(table, big_blind, "check")
    act(table, big_blind, "check")
    api = APIClient()
    api.force_authenticate(small_blind)
    response = api.post(f"/api/tables/{table.id}/leave", {}, format="json")
    assert response.status_code == 200, response.content
    assert response.json() == {"left": False}
    _hand, state = current(table)
    assert state.actor == seat_number(table, big_blind)
    assert str(state.street) == "turn"


def test_the_timeout_of_the_other_player_moves_past_a_leaver_who_can_check(table):
    small_blind, big_blind = heads_up(table)
    act(table, small_blind, "call")
    seating.seat_leave(table_id=table.id, user=small_blind)
    act(table, big_blind, "check")
    # The big blind's flop turn runs out: the clock checks for them, then the leaver.
    hand, _state = current(table)
    Hand.objects.filter(pk=hand.pk).update(turn_deadline="2000-01-01T00:00Z")
    assert play.turn_timeout(table_id=table.id, hand_id=hand.id, turn=hand.turn_version)
    _hand, state = current(table)
    assert str(state.street) == "turn"
    assert state.actor == seat_number(table, big_blind)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("timer_process")
async def test_over_the_websocket_the_other_players_check_is_acked_and_the_hand_goes_on(table):
    """The repro of the finding: the big blind's flop check used to close its socket
    with 1011 and leave the hand in progress for good."""
    small_blind, big_blind = await sync_to_async(heads_up)(table)
    sb, bb = connect_as(small_blind, table.id), connect_as(big_blind, table.id)
    await sb.connect()
    await bb.connect()
    try:
        assert (await sb.send("act", action="call"))["type"] == "ack"
        assert (await sb.send("leave"))["type"] == "ack"
        assert (await bb.send("act", action="check"))["type"] == "ack"
        assert (await bb.send("act", action="check"))["type"] == "ack"
        turn = await bb.until(lambda m: m.get("type") == "turn" and "legal_actions" in m)
        assert turn["seat"] == await sync_to_async(seat_number)(table, big_blind)
        _hand, state = await sync_to_async(current)(table)
        assert str(state.street) == "turn"
        # The socket is still open and answers.
        assert (await bb.send("act", action="check"))["type"] == "ack"
    finally:
        await sb.ws.disconnect()
        await bb.ws.disconnect()
