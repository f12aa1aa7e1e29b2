"""What the next deal would be: who is dealt in, where the button goes, whether a kill
is on (RULES §3 step 1, §4, §7, finer point 16).

Read by the deal itself (tables/services/hands.py) and by the straddle and overblind
options, which are judged against the next hand as the table stands now.
"""

from dataclasses import dataclass

from tables.engine.config import KillInfo
from tables.engine.positions import blind_seats, button_passes, next_button, straddle_seat
from tables.engine.state import HandState, SeatEntry
from tables.models import Hand, HandStatus, Seat, SeatStatus, Table
from tables.selectors import hand_players_by_seat


@dataclass(frozen=True)
class DealPlan:
    button: int
    entries: list[SeatEntry]


def deal_plan(*, seats: list[Seat], previous_button: int | None) -> DealPlan | None:
    """Who is dealt in and where the button goes (RULES §3 step 1, §4, finer point 16).

    Players already playing are dealt in. A newcomer (or a player back from sitting out)
    is dealt in when the big blind reaches them, or at once with a live big blind when
    they asked to post one and sit neither on the button nor in the small blind; the
    button seat includes one the button moves past to reach the next player dealt in. While
    fewer than two players are playing, everybody waiting is dealt in without posting.
    """
    ready = [s for s in seats if s.stack > 0 and not s.leave_after_hand]
    playing = [s for s in ready if s.status == SeatStatus.ACTIVE]
    waiting = [s for s in ready if s.status == SeatStatus.WAITING]
    posting: set[int] = set()
    if len(playing) < 2:
        # The table (re)starts: the first hand's button goes to the first player seated.
        dealt = sorted(playing + waiting, key=lambda s: s.sat_down_at)
        if len(dealt) < 2:
            return None
        button = next_button(previous_button, [s.number for s in dealt])
    else:
        button = next_button(previous_button, [s.number for s in playing])
        dealt = list(playing)
        for newcomer in sorted(waiting, key=lambda s: s.number):
            if len(playing) > 2 and button_passes(newcomer.number, previous_button, button):
                # The button moves to the next player dealt in; it would have stopped on
                # this seat had its player been playing: a newcomer in the button seat
                # waits until the button has passed (finer point 16). Not heads-up: there
                # the button passes every seat but two every other hand, and the other
                # hands put the newcomer in the small blind, so a third player would
                # wait for ever; they come in when the big blind reaches them.
                continue
            numbers = [s.number for s in dealt] + [newcomer.number]
            small, big = blind_seats(button, numbers)
            if big == newcomer.number:
                dealt.append(newcomer)
            elif newcomer.post_big_blind and newcomer.number not in (small, button):
                dealt.append(newcomer)
                posting.add(newcomer.number)
        # Several newcomers can shift each other's positions: whoever is not the big blind
        # in the final line-up posts a live one, and nobody posts from the small blind.
        while True:
            small, big = blind_seats(button, [s.number for s in dealt])
            misplaced = [s for s in dealt if s in waiting and s.number != big and s.number == small]
            if not misplaced:
                break
            dealt.remove(misplaced[0])
        posting |= {s.number for s in dealt if s in waiting and s.number != big}
    entries = [
        SeatEntry(
            seat=s.number,
            player=s.player.username,
            stack=s.stack,
            posts_big_blind=s.number in posting,
            straddle=s.wants_straddle,
            overblind=s.wants_overblind,
            chop=s.player.chop_blinds,
            auto_muck=s.player.auto_muck,
        )
        for s in sorted(dealt, key=lambda s: s.number)
    ]
    return DealPlan(button=button, entries=entries)


def kill_for_next_hand(*, table: Table, seats: list[Seat]) -> KillInfo | None:
    """The kill won in the last hand, if the killer is still seated and playing."""
    last = Hand.objects.filter(table=table, status=HandStatus.FINISHED).order_by("-number").first()
    if last is None:
        return None
    state = HandState.from_dict(last.state)
    kill = state.result.next_kill if state.result else None
    if kill is None:
        return None
    killer = hand_players_by_seat(hand=last).get(kill.seat)
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


def next_hand_outlook(*, table: Table, seats: list[Seat], in_hand: bool) -> NextHand:
    """What `deal_plan` would make of the table's seats if it dealt after this hand
    (`in_hand`: a hand is in progress)."""
    # A player sitting out after this hand is not dealt into the next one.
    staying = [s for s in seats if not s.sit_out_after_hand]
    plan = deal_plan(seats=staying, previous_button=table.button_seat)
    if plan is None:
        return NextHand(dealt=frozenset(), straddle_seat=None, kill=None)
    numbers = sorted(entry.seat for entry in plan.entries)
    kill = None
    if not in_hand:
        kill = kill_for_next_hand(table=table, seats=seats) is not None
    return NextHand(
        dealt=frozenset(numbers), straddle_seat=straddle_seat(plan.button, numbers), kill=kill
    )
