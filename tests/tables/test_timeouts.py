"""RULES §5 with the real timer loop: a player who does not act is checked, protected or
folded when their time runs out, and the hand goes on without anyone's help."""

import pytest

from tables.engine.state import HandState
from tables.models import Hand, HandEvent, HandStatus, Seat
from tables.services import play
from tests.conftest import wait_for
from tests.kit import StakeLevelFactory, TableFactory, seat_players

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("timer_process"),
]


def fast_table(**stake_fields):
    stake = StakeLevelFactory(**stake_fields)
    return TableFactory(
        stake_level=stake, seats=6, action_seconds=0, time_bank_seconds=1, pause_between_hands_ms=0
    )


def timed_out_events(table):
    return list(
        HandEvent.objects.filter(hand__table=table, type="timed_out").order_by("hand", "seq")
    )


def test_a_player_who_owes_a_call_with_money_in_is_all_in_protected():
    table = fast_table()
    seat_players(table, 3)
    # The timer loop deals; nobody acts: the first to act preflop owes the big blind and has
    # put nothing in, so folds; the small blind owes and has money in: protected.
    events = wait_for(lambda: len(timed_out_events(table)) >= 2 and timed_out_events(table))
    resolutions = [e.data["resolution"] for e in events[:2]]
    assert resolutions == ["fold", "protected"]
    first_hand = events[0].hand
    assert HandEvent.objects.filter(hand=first_hand, type="protected").exists()
    # The hand goes on by itself to the end, and the next one is dealt.
    wait_for(lambda: Hand.objects.filter(table=table, status=HandStatus.FINISHED).exists())
    wait_for(lambda: Hand.objects.filter(table=table).count() >= 2)


def test_a_player_who_can_check_is_checked():
    table = fast_table()
    alice, bob = seat_players(table, 2)
    hand = wait_for(lambda: Hand.objects.filter(table=table).first())
    state = HandState.from_dict(hand.state)
    users = {1: alice, 2: bob}
    # Heads-up the small blind acts first; it calls, and the big blind is left to the clock.
    play.hand_act(table_id=table.id, user=users[state.actor], kind="call")
    events = wait_for(lambda: timed_out_events(table))
    assert events[0].data["resolution"] == "check"
    assert events[0].data["seat"] != state.actor


def test_with_protection_off_a_player_who_owes_chips_is_folded():
    table = fast_table(allin_protection=False)
    seat_players(table, 3)
    events = wait_for(lambda: len(timed_out_events(table)) >= 2 and timed_out_events(table))
    assert [e.data["resolution"] for e in events[:2]] == ["fold", "fold"]
    assert not HandEvent.objects.filter(hand__table=table, type="protected").exists()


def test_two_timeouts_in_a_row_sit_a_player_out():
    table = fast_table()
    seat_players(table, 2)
    wait_for(lambda: Seat.objects.filter(table=table, status="sitting_out").exists(), timeout=30)
