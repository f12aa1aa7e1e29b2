"""What the next deal would be: who is dealt in, where the button goes, whether a kill
is on (RULES §3 step 1, §4, §7, finer point 16).

Read by the deal itself (tables/services/hands.py) and by the straddle and overblind
options, which are judged against the next hand as the table stands now.
"""

from dataclasses import dataclass

from tables.engine.config import KillInfo, KillMode
from tables.engine.deal_plan import DealPlan, SeatRecord
from tables.engine.deal_plan import deal_plan as plan_the_deal
from tables.engine.positions import straddle_seat
from tables.engine.state import HandState
from tables.models import Hand, HandStatus, Seat, SeatStatus, Table
from tables.selectors import hand_players_by_seat


def deal_plan(*, seats: list[Seat], previous_button: int | None) -> DealPlan | None:
    """Who is dealt in and where the button goes (RULES §3 step 1, §4, finer point 16):
    the engine's `deal_plan` over these seats (tables/engine/deal_plan.py)."""
    records = [
        SeatRecord(
            number=s.number,
            player=s.player.username,
            stack=s.stack,
            playing=s.status == SeatStatus.ACTIVE,
            waiting=s.status == SeatStatus.WAITING,
            sat_down_at=s.sat_down_at,
            post_big_blind=s.post_big_blind,
            leaving=s.leave_after_hand,
            straddle=s.wants_straddle,
            overblind=s.wants_overblind,
            chop=s.player.chop_blinds,
            auto_muck=s.player.auto_muck,
            player_id=s.player_id,
        )
        for s in seats
    ]
    return plan_the_deal(records, previous_button=previous_button)


# The state and players (seat -> user id) of a hand the command has just finished.
Finished = tuple[HandState, dict[int, int]]


def kill_for_next_hand(
    *, table: Table, seats: list[Seat], finished: Finished | None = None
) -> KillInfo | None:
    """The kill won in the last hand, if the table plays kills and the killer is still
    seated and playing.

    `finished`: the hand the calling command has just settled, which the database does
    not have yet (the command saves it at its end); else the last finished hand there.

    A table that plays no kills (most, and any whose admin turned kills off since the
    last hand) has none, whatever the last hand won: the engine ignores a kill there
    (tables/engine/start.py), and the options shown for the next hand must agree. Nor is
    the last hand read for it then (a query and the parse of its whole state at each
    deal)."""
    if table.stake_level.kill == KillMode.NONE:
        return None
    last: Hand | None = None
    if finished is not None:
        state, players = finished
    else:
        last = (
            Hand.objects.filter(table=table, status=HandStatus.FINISHED).order_by("-number").first()
        )
        if last is None:
            return None
        state, players = HandState.from_dict(last.state), None
    kill = state.result.next_kill if state.result else None
    if kill is None:
        return None
    if players is None and last is not None:
        players = hand_players_by_seat(hand=last)
    killer = (players or {}).get(kill.seat)
    for seat in seats:
        if seat.number == kill.seat:
            same_player = seat.player_id == killer
            playing = seat.status == SeatStatus.ACTIVE and not seat.leave_after_hand
            return kill if same_player and playing else None
    return None


@dataclass(frozen=True)
class NextHand:
    """The next hand as the table stands now: who would be dealt in, the seat left of
    the big blind (three or more dealt in), and whether it is a kill hand (None while a
    hand is in progress: that hand decides)."""

    dealt: frozenset[int]
    straddle_seat: int | None
    kill: bool | None


def next_hand_outlook(
    *, table: Table, seats: list[Seat], in_hand: bool, finished: Finished | None = None
) -> NextHand:
    """What `deal_plan` would make of the table's seats if it dealt after this hand
    (`in_hand`: a hand is in progress; `finished`: see `kill_for_next_hand`)."""
    # A player sitting out after this hand is not dealt into the next one.
    staying = [s for s in seats if not s.sit_out_after_hand]
    plan = deal_plan(seats=staying, previous_button=table.button_seat)
    if plan is None:
        return NextHand(dealt=frozenset(), straddle_seat=None, kill=None)
    numbers = sorted(entry.seat for entry in plan.entries)
    kill = None
    if not in_hand:
        kill = kill_for_next_hand(table=table, seats=seats, finished=finished) is not None
    return NextHand(
        dealt=frozenset(numbers), straddle_seat=straddle_seat(plan.button, numbers), kill=kill
    )
