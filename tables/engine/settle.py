"""Settling a hand: uncontested wins, showdown, pot awards, rake and the chop.

Called by :mod:`tables.engine.state` on a (private, freshly copied) state once the betting
is over; each function mutates that state into its final form and appends the events.

Showdown (RULES.md section 3 step 8, finer point 12): the last river bettor/raiser shows
first, else the first player still in left of the button; then clockwise. The first must
show; a later player with auto-muck on mucks a hand that cannot win any part of any pot
it is eligible for, judged against the hands already shown (high, and low in Hi-Lo).
After a run-out (betting stopped because players were all-in) every hand is face up.

Pots (step 9): each pot separately among its eligible shown hands; Hi-Lo pots halve with
the odd chip to the high half, and go whole to the high hand without a qualifying low.
Ties split with odd chips one each clockwise from the button's left. Rake (section 6) is
taken before the awards, from the main pot first.

Kill (section 7, finer point 5): a player who wins every pot whole (high and low) scoops;
if the pots totalled at least ``kill_min_pot`` before rake, the next hand is a kill hand at
the table's kill setting (never compounding).
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import add, eq
from typing import TYPE_CHECKING, Any

from tables.engine.config import NO_KILL, OMAHA8, KillInfo
from tables.engine.evaluator import describe_high, describe_low, high_values, low_value
from tables.engine.events import Chopped, Event, HandEnded, Mucked, Raked, SeatAmount, Shown, Won
from tables.engine.positions import CLOCKWISE, CLOCKWISE_GETTERS
from tables.engine.pots import Pot, split_evenly, split_hi_lo
from tables.engine.rake import contributed_rake, hand_rake, take_rake
from tables.engine.records import Record

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tables.engine.state import HandState


class HandResult(Record):
    """How the hand was settled. Per-player tuples are in seat order (``state.seats``).

    ``pots`` are the final pots before rake; ``winnings`` the chips each player received
    from the pots; ``next_kill`` the kill for the next hand (if the table plays kills).
    """

    __slots__ = ()

    pots: tuple[Pot, ...]
    rake: int
    contributed_rake: tuple[int, ...]
    winnings: tuple[int, ...]
    scooped_by: int | None
    next_kill: KillInfo | None
    chopped: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {
            "pots": [p.to_dict() for p in self.pots],
            "rake": self.rake,
            "contributed_rake": list(self.contributed_rake),
            "winnings": list(self.winnings),
            "scooped_by": self.scooped_by,
            "next_kill": None if self.next_kill is None else self.next_kill.to_dict(),
            "chopped": self.chopped,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HandResult:
        """Inverse of :meth:`to_dict`."""
        return cls(
            pots=tuple(Pot.from_dict(p) for p in d["pots"]),
            rake=d["rake"],
            contributed_rake=tuple(d["contributed_rake"]),
            winnings=tuple(d["winnings"]),
            scooped_by=d["scooped_by"],
            next_kill=None if d["next_kill"] is None else KillInfo.from_dict(d["next_kill"]),
            chopped=d["chopped"],
        )


def _rake(
    st: HandState, pots: Sequence[Pot], events: list[Event]
) -> tuple[Sequence[Pot], int, Sequence[int]]:
    """Compute and take the hand's rake; return the raked pots, rake and shares."""
    config = st.config
    rake = 0
    if config.rake_percent:  # (a table without rake has nothing to add up)
        total = sum([p[0] for p in pots])  # p.amount, without the property call
        rake = hand_rake(
            config, total, players_dealt_in=len(st.seats), flop_seen=len(st.board) >= 3
        )
    if not rake:
        events.append(Raked.of((0, ())))
        return pots, 0, _NO_SHARES[len(st.seats)]
    shares = contributed_rake(rake, st.seats, st.contributed, st.button)
    contributed = tuple(map(SeatAmount.of, compress(zip(st.seats, shares, strict=True), shares)))
    events.append(Raked.of((rake, contributed)))
    return take_rake(pots, rake), rake, shares


# Everyone's share of no rake, by number of players (the result keeps it as a tuple).
_NO_SHARES = [(0,) * n for n in range(11)]


def finish_uncontested(
    st: HandState, events: list[Event], pots: Sequence[Pot], live: list[bool]
) -> None:
    """Everyone else folded: the last player wins every pot, cards unseen (step 7).

    ``pots``: the hand's pots; ``live``: who is still in (one player), by player index.
    """
    winner = live.index(True)
    raked, rake, shares = _rake(st, pots, events)
    winnings = [0] * len(st.seats)
    seat = st.seats[winner]
    for k, (amount, _) in enumerate(raked):
        if amount:
            winnings[winner] += amount
            events.append(Won.of((seat, k, amount, None, None)))
    _finish(st, events, pots, rake, shares, winnings, seat)


def showdown(st: HandState, events: list[Event], pots: Sequence[Pot], live: list[bool]) -> None:
    """Show or muck in order, then award every pot.

    ``pots``: the hand's pots; ``live``: who is still in, by player index.
    """
    # The filters below use map and compress, not comprehensions: a comprehension that
    # reads a local variable makes it a closure cell, slower for every other use of it.
    seats = st.seats
    hole = st.hole
    board = st.board
    n = len(seats)
    game = st.config.game
    hi_lo = game is OMAHA8

    # Showing order: from the river aggressor, else from the button's left; clockwise.
    aggressor = st.aggressor
    if aggressor is not None and not st.runout and live[aggressor]:
        first = aggressor
    else:
        first = seats.index(st.button) + 1
    first %= n
    order = list(compress(CLOCKWISE[n][first], CLOCKWISE_GETTERS[n][first](live)))
    # (zip without a keyword costs half: the lengths are equal, hence the noqa: B905.)
    highs = dict(zip(order, high_values(game, map(hole.__getitem__, order), board)))  # noqa: B905
    if hi_lo:
        lows = dict(zip(order, map(low_value, map(hole.__getitem__, order), repeat(board))))  # noqa: B905
    else:
        lows = dict.fromkeys(order)
    # With one pot every player still in is eligible for it (the usual showdown).
    single_pot = len(pots) == 1
    everyone_shows = st.runout
    auto_muck = st.auto_muck
    shown: list[int] = []
    # The best high and low shown so far, to judge a single pot's mucks.
    best_high = best_low = None
    # The words of each shown hand, written once for its Shown and its Won events.
    high_text: dict[int, str] = {}
    low_text: dict[int, str | None] = {}
    for i in order:
        high = highs[i]
        low = lows[i]
        # The first hand is always shown; later ones may be mucked when they cannot win.
        if shown and not everyone_shows and auto_muck[i]:
            if single_pot:  # could it win part of the pot against the hands shown?
                can_win = high <= best_high or (
                    low is not None and (best_low is None or low <= best_low)
                )
            else:
                can_win = _can_win(st, i, shown, pots, highs, lows)
            if not can_win:
                events.append(Mucked.of((seats[i],)))
                continue
        shown.append(i)
        st.shown[i] = True
        if best_high is None or high < best_high:
            best_high = high
        if low is not None and (best_low is None or low < best_low):
            best_low = low
        high_text[i] = text = describe_high(high)
        low_text[i] = low_words = None if low is None else describe_low(low)
        events.append(Shown.of((seats[i], hole[i], text, low_words)))

    raked, rake, shares = _rake(st, pots, events)
    winnings = [0] * n
    # Seats that won some pot whole (high and low); None marks a pot that was shared.
    whole_winners: set[int | None] = set()
    for k, pot in enumerate(raked):  # the raked pots have the same eligible seats
        if single_pot:
            contenders = shown
        else:
            eligible = pot[1]  # pot.eligible
            contenders = list(
                compress(shown, map(eligible.__contains__, map(seats.__getitem__, shown)))
            )
        if len(contenders) == 1:
            high_winners = contenders
        else:
            values = list(map(highs.__getitem__, contenders))
            best = min(values)
            if values.count(best) == 1:  # no tie: counted and found in C
                high_winners = [contenders[values.index(best)]]
            else:
                high_winners = list(compress(contenders, map(best.__eq__, values)))
        low_winners: list[int] = []
        if hi_lo:
            contender_lows = list(map(lows.__getitem__, contenders))
            qualified = [v for v in contender_lows if v is not None]
            if qualified:
                best_low = min(qualified)
                low_winners = list(compress(contenders, map(eq, contender_lows, repeat(best_low))))
        amount = pot[0]  # pot.amount
        if low_winners:
            one = len(high_winners) == 1 and low_winners == high_winners
            whole_winners.add(seats[high_winners[0]] if one else None)
            high_amount, low_amount = split_hi_lo(amount)
            _award(st, k, high_amount, high_winners, "high", high_text, winnings, events)
            _award(st, k, low_amount, low_winners, "low", low_text, winnings, events)
        else:
            whole_winners.add(seats[high_winners[0]] if len(high_winners) == 1 else None)
            _award(st, k, amount, high_winners, None, high_text, winnings, events)
    # Finer point 5: a scoop is one player winning every pot of the hand whole.
    scooper = whole_winners.pop() if len(whole_winners) == 1 else None
    _finish(st, events, pots, rake, shares, winnings, scooper)


def _award(
    st: HandState,
    pot: int,
    amount: int,
    winners: list[int],
    share: str | None,
    texts: dict[int, str] | dict[int, str | None],
    winnings: list[int],
    events: list[Event],
) -> None:
    """Pay ``amount`` of pot number ``pot`` to ``winners`` (players), tied winners
    sharing it (odd chips clockwise from the button's left), with a Won event each."""
    seats = st.seats
    if len(winners) == 1:  # the usual case: nothing to share
        i = winners[0]
        if amount:
            winnings[i] += amount
            events.append(Won.of((seats[i], pot, amount, share, texts[i])))
        return
    for seat, won in split_evenly(amount, list(map(seats.__getitem__, winners)), st.button).items():
        if won:
            i = seats.index(seat)
            winnings[i] += won
            events.append(Won.of((seat, pot, won, share, texts[i])))


def _can_win(
    st: HandState,
    i: int,
    shown: list[int],
    pots: Sequence[Pot],
    highs: dict[int, int],
    lows: dict[int, int | None],
) -> bool:
    """Could player ``i`` win any part of a pot against the hands already shown?"""
    seat = st.seats[i]
    for pot in pots:
        if seat not in pot.eligible:
            continue
        rivals = [j for j in shown if st.seats[j] in pot.eligible]
        if not rivals:
            return True
        if highs[i] <= min(highs[j] for j in rivals):
            return True
        low = lows[i]
        if low is not None:
            rival_lows = [v for j in rivals if (v := lows[j]) is not None]
            if not rival_lows or low <= min(rival_lows):
                return True
    return False


def chop(st: HandState, events: list[Event]) -> None:
    """The blinds chop: every forced bet and ante goes back to its owner, no rake."""
    returned = []
    for i, amount in enumerate(st.contributed):
        if amount:
            st.stacks[i] += amount
            returned.append(SeatAmount.of((st.seats[i], amount)))
    n = len(st.seats)
    st.contributed = [0] * n
    st.committed = [0] * n
    sb, bb = st.small_blind_index, st.big_blind_index
    events.append(Chopped.of(((st.seats[sb], st.seats[bb]), tuple(returned))))
    _finish(st, events, [], 0, [0] * n, [0] * n, None, True)


def _finish(
    st: HandState,
    events: list[Event],
    pots: Sequence[Pot],
    rake: int,
    shares: Sequence[int],
    winnings: list[int],
    scooper: int | None,
    chopped: bool = False,
) -> None:
    """Pay the winnings, record the result and emit ``hand_ended`` (the street's
    commitments are already back to zero: collected, or returned by a chop)."""
    seats = st.seats
    stacks = st.stacks = list(map(add, st.stacks, winnings))
    st.actor_index = None
    st.over = True
    next_kill = None
    kill_mode = st.config.kill
    if (
        scooper is not None
        and kill_mode is not NO_KILL
        and sum([p.amount for p in pots]) >= st.config.kill_min_pot
    ):
        next_kill = KillInfo(scooper, kill_mode)
    won = tuple(winnings)
    # HandResult's fields in order.
    st.result = HandResult.of((tuple(pots), rake, tuple(shares), won, scooper, next_kill, chopped))
    # HandEnded's fields in order: stacks, rake, winners, scooped_by, next_kill, chopped.
    # (zip without a keyword costs half: the lengths are equal, hence the noqa: B905.)
    events.append(
        HandEnded.of(
            (
                tuple(map(SeatAmount.of, zip(seats, stacks))),  # noqa: B905
                rake,
                tuple(map(SeatAmount.of, compress(zip(seats, won), won))),  # noqa: B905
                scooper,
                next_kill,
                chopped,
            )
        )
    )
