"""Settling a hand: uncontested wins, showdown, pot awards, rake and the chop.

Called by :mod:`tables.engine.rounds` and :mod:`tables.engine.act` on a state they own
once the betting is over; each function changes that state into its final form and
appends the events.

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tables.engine.config import Game, KillInfo, KillMode
from tables.engine.evaluator import describe_high, describe_low, high_values, low_value
from tables.engine.events import Chopped, Event, HandEnded, Mucked, Raked, SeatAmount, Shown, Won
from tables.engine.positions import clockwise_order
from tables.engine.pots import Pot, split_evenly, split_hi_lo
from tables.engine.rake import contributed_rake, hand_rake, take_rake

if TYPE_CHECKING:
    from tables.engine.hand_state import HandState


@dataclass(frozen=True, slots=True)
class HandResult:
    """How the hand was settled. Per-player tuples are in seat order (``state.seats``).

    ``pots`` are the final pots before rake; ``winnings`` the chips each player received
    from the pots; ``next_kill`` the kill for the next hand (if the table plays kills).
    """

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
    n = len(st.seats)
    rake = hand_rake(
        st.config,
        sum(pot.amount for pot in pots),
        players_dealt_in=n,
        flop_seen=len(st.board) >= 3,
    )
    if not rake:
        events.append(Raked(amount=0, contributed=()))
        return pots, 0, (0,) * n
    shares = contributed_rake(rake, st.seats, st.contributed, st.button)
    contributed = tuple(
        SeatAmount(seat=seat, amount=share)
        for seat, share in zip(st.seats, shares, strict=True)
        if share
    )
    events.append(Raked(amount=rake, contributed=contributed))
    return take_rake(pots, rake), rake, shares


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
    for k, pot in enumerate(raked):
        if pot.amount:
            winnings[winner] += pot.amount
            stack = st.stacks[winner] + winnings[winner]
            events.append(
                Won(seat=seat, pot=k, amount=pot.amount, share=None, description=None, stack=stack)
            )
    _finish(st, events, pots, rake, shares, winnings, seat)


def showdown(st: HandState, events: list[Event], pots: Sequence[Pot], live: list[bool]) -> None:
    """Show or muck in order, then award every pot (on each run's board, when the board
    was run twice: see :mod:`tables.engine.run_twice`).

    ``pots``: the hand's pots; ``live``: who is still in, by player index.
    """
    seats = st.seats
    n = len(seats)
    hi_lo = st.config.game is Game.OMAHA8

    # Showing order: from the river aggressor, else from the button's left; clockwise.
    aggressor = st.aggressor
    if aggressor is not None and not st.runout and live[aggressor]:
        first = aggressor
    else:
        first = (seats.index(st.button) + 1) % n
    order = [i for i in clockwise_order(first, n) if live[i]]
    boards = [st.board]
    if st.run_twice is not None and st.run_twice.runs == 2:
        boards.append(list(st.run_twice.second_board))
    runs = [_Run.of(st, order, board, hi_lo) for board in boards]
    one = runs[0]

    shown: list[int] = []
    for i in order:
        # The first hand is always shown (all of them after a run-out); a later one with
        # auto-muck on is mucked when it cannot win any part of a pot.
        mucks = shown and not st.runout and st.auto_muck[i]
        if mucks and not _can_win(st, i, shown, pots, one.highs, one.lows):
            events.append(Mucked(seat=seats[i]))
            continue
        shown.append(i)
        st.shown[i] = True
        events.append(one.shown(st, i, run=1))
    for number, run in enumerate(runs[1:], start=2):  # every hand is up after a run-out
        events.extend(run.shown(st, i, run=number) for i in shown)

    raked, rake, shares = _rake(st, pots, events)
    winnings = [0] * n
    # Seats that won some pot (or some run of it) whole, high and low; None marks a
    # share that was split.
    whole_winners: set[int | None] = set()
    for k, pot in enumerate(raked):  # the raked pots have the same eligible seats
        contenders = [i for i in shown if seats[i] in pot.eligible]
        for number, (run, amount) in enumerate(
            zip(runs, split_runs(pot.amount, len(runs)), strict=True), start=1
        ):
            award = _Award(st, k, number, winnings, events)
            whole_winners.add(run.award(award, amount, contenders))
    # Finer point 5: a scoop is one player winning every pot of the hand whole.
    scooper = whole_winners.pop() if len(whole_winners) == 1 else None
    _finish(st, events, pots, rake, shares, winnings, scooper)


def split_runs(amount: int, runs: int) -> tuple[int, ...]:
    """A pot's shares of the runs of the board: whole for one run; for two, halves with
    the odd chip to the first run.

    >>> split_runs(101, 1), split_runs(101, 2)
    ((101,), (51, 50))
    """
    if runs == 1:
        return (amount,)
    second = amount // 2
    return amount - second, second


@dataclass(frozen=True, slots=True)
class _Award:
    """Where a share of a pot goes: pot number ``pot`` of run ``run``, into
    ``winnings``, with a Won event each in ``events``."""

    st: HandState
    pot: int
    run: int
    winnings: list[int]
    events: list[Event]

    def pay(
        self, amount: int, winners: list[int], share: str | None, texts: Mapping[int, str | None]
    ) -> None:
        """Pay ``amount`` to ``winners`` (players), tied winners sharing it (odd chips
        clockwise from the button's left), with a Won event each."""
        st = self.st
        split = split_evenly(amount, [st.seats[i] for i in winners], st.button)
        for seat, won in split.items():
            if won:
                i = st.seats.index(seat)
                self.winnings[i] += won
                self.events.append(
                    Won(
                        seat=seat,
                        pot=self.pot,
                        amount=won,
                        share=share,
                        description=texts[i],
                        stack=st.stacks[i] + self.winnings[i],
                        run=self.run,
                    )
                )


@dataclass(frozen=True, slots=True)
class _Run:
    """The hands of the players still in on one board: values and their words."""

    highs: dict[int, int]
    lows: dict[int, int | None]
    high_text: dict[int, str]
    low_text: dict[int, str | None]

    @classmethod
    def of(cls, st: HandState, order: list[int], board: Sequence[int], hi_lo: bool) -> _Run:
        """The values of the players in ``order`` on ``board``."""
        values = high_values(st.config.game, [st.hole[i] for i in order], board)
        highs = dict(zip(order, values, strict=True))
        lows = {i: low_value(st.hole[i], board) if hi_lo else None for i in order}
        return cls(
            highs=highs,
            lows=lows,
            high_text={i: describe_high(v) for i, v in highs.items()},
            low_text={i: None if v is None else describe_low(v) for i, v in lows.items()},
        )

    def shown(self, st: HandState, i: int, *, run: int) -> Shown:
        """The Shown event of player ``i``'s hand on this board."""
        seat, cards = st.seats[i], st.hole[i]
        return Shown(seat=seat, cards=cards, high=self.high_text[i], low=self.low_text[i], run=run)

    def award(self, award: _Award, amount: int, contenders: list[int]) -> int | None:
        """Award ``amount`` on this board among ``contenders``; return the seat that won
        it whole (high and low), or None when it was shared."""
        seats = award.st.seats
        highs, lows = self.highs, self.lows
        best_high = min(highs[i] for i in contenders)
        high_winners = [i for i in contenders if highs[i] == best_high]
        qualified = [low for i in contenders if (low := lows[i]) is not None]
        low_winners = [i for i in contenders if qualified and lows[i] == min(qualified)]
        if low_winners:
            high_amount, low_amount = split_hi_lo(amount)
            award.pay(high_amount, high_winners, "high", self.high_text)
            award.pay(low_amount, low_winners, "low", self.low_text)
            one = len(high_winners) == 1 and low_winners == high_winners
        else:
            award.pay(amount, high_winners, None, self.high_text)
            one = len(high_winners) == 1
        return seats[high_winners[0]] if one else None


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
            returned.append(SeatAmount(seat=st.seats[i], amount=amount))
    n = len(st.seats)
    st.contributed = [0] * n
    st.committed = [0] * n
    sb, bb = st.small_blind_index, st.big_blind_index
    events.append(Chopped(seats=(st.seats[sb], st.seats[bb]), returned=tuple(returned)))
    _finish(st, events, [], 0, [0] * n, [0] * n, None, chopped=True)


def _finish(
    st: HandState,
    events: list[Event],
    pots: Sequence[Pot],
    rake: int,
    shares: Sequence[int],
    winnings: list[int],
    scooper: int | None,
    *,
    chopped: bool = False,
) -> None:
    """Pay the winnings, record the result and emit ``hand_ended`` (the street's
    commitments are already back to zero: collected, or returned by a chop)."""
    st.stacks = [stack + won for stack, won in zip(st.stacks, winnings, strict=True)]
    st.actor_index = None
    st.over = True
    next_kill = None
    kill_mode = st.config.kill
    if (
        scooper is not None
        and kill_mode is not KillMode.NONE
        and sum(pot.amount for pot in pots) >= st.config.kill_min_pot
    ):
        next_kill = KillInfo(seat=scooper, multiplier=kill_mode)
    st.result = HandResult(
        pots=tuple(pots),
        rake=rake,
        contributed_rake=tuple(shares),
        winnings=tuple(winnings),
        scooped_by=scooper,
        next_kill=next_kill,
        chopped=chopped,
    )
    events.append(
        HandEnded(
            stacks=tuple(
                SeatAmount(seat=seat, amount=stack)
                for seat, stack in zip(st.seats, st.stacks, strict=True)
            ),
            rake=rake,
            winners=tuple(
                SeatAmount(seat=seat, amount=won)
                for seat, won in zip(st.seats, winnings, strict=True)
                if won
            ),
            scooped_by=scooper,
            next_kill=next_kill,
            chopped=chopped,
        )
    )
