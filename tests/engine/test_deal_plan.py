"""Who is dealt in and where the button goes (tables/engine/deal_plan.py), no database."""

import datetime

from tables.engine.deal_plan import DealPlan, SeatRecord, deal_plan
from tables.engine.start import SeatEntry

T0 = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.UTC)


def seat(number: int, *, status: str = "playing", minute: int = 0, **wishes: object) -> SeatRecord:
    return SeatRecord(
        number=number,
        player=f"p{number}",
        stack=wishes.pop("stack", 1000),  # type: ignore[arg-type]
        playing=status == "playing",
        waiting=status == "waiting",
        sat_down_at=T0 + datetime.timedelta(minutes=minute),
        **wishes,  # type: ignore[arg-type]
    )


def dealt(plan: DealPlan | None) -> dict[int, bool]:
    """Seat -> posts a newcomer's big blind."""
    assert plan is not None
    return {entry.seat: entry.posts_big_blind for entry in plan.entries}


def test_nobody_to_play_with() -> None:
    assert deal_plan([seat(1)], previous_button=None) is None
    # No chips, leaving after the hand, sitting out: none of them is dealt in.
    others = [seat(2, stack=0), seat(3, leaving=True), seat(4, status="sitting_out")]
    assert deal_plan([seat(1), *others], previous_button=1) is None


def test_a_restarting_table_deals_everyone_waiting_and_the_first_seated_has_the_button() -> None:
    plan = deal_plan([seat(4, status="waiting"), seat(2, status="waiting", minute=5)],
                     previous_button=None)  # fmt: skip
    assert plan is not None and plan.button == 4
    assert dealt(plan) == {2: False, 4: False}


def test_players_playing_are_dealt_in_and_the_button_moves_on() -> None:
    plan = deal_plan([seat(1), seat(3), seat(5), seat(6, status="sitting_out")], previous_button=1)
    assert plan is not None and plan.button == 3
    assert dealt(plan) == {1: False, 3: False, 5: False}


def test_a_newcomer_comes_in_when_the_big_blind_reaches_them() -> None:
    # Button 3, small blind 5: the newcomer at 6 is the big blind and posts nothing extra.
    plan = deal_plan([seat(1), seat(3), seat(5), seat(6, status="waiting")], previous_button=1)
    assert dealt(plan) == {1: False, 3: False, 5: False, 6: False}


def test_a_newcomer_may_post_a_big_blind_out_of_position() -> None:
    seats = [seat(1), seat(3), seat(5), seat(7), seat(9, status="waiting", post_big_blind=True)]
    assert dealt(deal_plan(seats, previous_button=1)) == {1: False, 3: False, 5: False,
                                                          7: False, 9: True}  # fmt: skip
    # Without asking to post, the same newcomer waits for the big blind.
    seats[-1] = seat(9, status="waiting")
    assert 9 not in dealt(deal_plan(seats, previous_button=1))


def test_finer_point_16_no_big_blind_from_the_small_blind_or_a_passed_button_seat() -> None:
    playing = [seat(1), seat(3), seat(5)]
    # Button 1 -> 3 passes seat 2: its newcomer waits, even asking to post.
    assert 2 not in dealt(
        deal_plan([*playing, seat(2, status="waiting", post_big_blind=True)], previous_button=1)
    )
    # Seat 4 would be the small blind (button 3): it waits.
    assert 4 not in dealt(
        deal_plan([*playing, seat(4, status="waiting", post_big_blind=True)], previous_button=1)
    )
    # Button 5: seat 6 would be the small blind again.
    assert 6 not in dealt(
        deal_plan([*playing, seat(6, status="waiting", post_big_blind=True)], previous_button=3)
    )


def test_heads_up_a_third_player_comes_in_as_the_big_blind() -> None:
    plan = deal_plan([seat(1), seat(5), seat(3, status="waiting")], previous_button=1)
    assert plan is not None and plan.button == 5
    assert dealt(plan) == {1: False, 3: False, 5: False}


def test_the_entries_carry_the_players_wishes_in_seat_order() -> None:
    seats = [seat(5, straddle=True, chop=True), seat(1, overblind=True, auto_muck=False)]
    plan = deal_plan(seats, previous_button=None)
    assert plan is not None
    assert plan.entries == [
        SeatEntry(seat=1, player="p1", stack=1000, overblind=True, auto_muck=False),
        SeatEntry(seat=5, player="p5", stack=1000, straddle=True, chop=True),
    ]
