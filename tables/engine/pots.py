"""Pots: uncalled bets, main and side pots, and splitting a pot between tied winners.

Pure functions over per-player lists (index ``i`` = the ``i``-th player of the hand in seat
order). Pots name their eligible players by *seat number* so they can be shown as is.

* :func:`uncalled_excess` -- RULES.md section 2: an uncalled bet goes back to its bettor
  before pots are built and before rake.
* :func:`build_pots` -- table stakes: one pot per distinct total contribution of the players
  still in (all-in and all-in-protected players cap what they can win; folded players'
  chips are dead money in the pots they reached).
* :func:`split_evenly` -- section 3 step 9: tied winners share equally; left-over cents go
  one each, clockwise from the first seat left of the button (20 three ways: 7/7/6).
* :func:`split_hi_lo` -- a hi-lo pot halves; an odd chip goes to the high half.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Pot:
    """One pot: its amount and the seats that can win it."""

    amount: int
    eligible: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {"amount": self.amount, "eligible": list(self.eligible)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Pot:
        """Inverse of :meth:`to_dict`."""
        return cls(amount=int(d["amount"]), eligible=tuple(d["eligible"]))


def uncalled_excess(contributed: Sequence[int]) -> tuple[int, int] | None:
    """``(index, amount)`` of the part of the top contribution nobody matched, or None.

    Folded players' chips count as matched (they called before folding).

    >>> uncalled_excess([100, 300, 50])
    (1, 200)
    >>> uncalled_excess([300, 300, 50]) is None
    True
    """
    if len(contributed) < 2:
        return (0, contributed[0]) if contributed else None
    top = max(contributed)
    if contributed.count(top) > 1:  # matched: two players or more put in the most
        return None
    j = contributed.index(top)
    return j, top - max(c for k, c in enumerate(contributed) if k != j)


def build_pots(
    seats: Sequence[int], contributed: Sequence[int], in_hand: Sequence[bool]
) -> list[Pot]:
    """Main pot then side pots from each player's total contribution this hand.

    A new pot starts at every distinct contribution level of a player still in the hand.
    Chips of folded players above the highest such level (which uncalled-bet returns make
    impossible in a real hand) are added to the last pot so that no chip is ever lost.

    >>> build_pots([1, 2, 3], [100, 300, 300], [True, True, True])
    [Pot(amount=300, eligible=(1, 2, 3)), Pot(amount=400, eligible=(2, 3))]
    """
    if not len(seats) == len(contributed) == len(in_hand):
        raise ValueError("seats, contributed and in_hand differ in length")
    players = list(zip(seats, contributed, in_hand, strict=True))
    levels = sorted({c for _, c, live in players if live and c > 0})
    if len(levels) == 1 and max(contributed) == levels[0]:
        # Everyone still in put in the same, nobody more: one pot, no side pots.
        return [Pot(amount=sum(contributed), eligible=tuple(s for s, _, live in players if live))]
    pots: list[Pot] = []
    previous = 0
    for level in levels:
        # What everyone put in between the two levels, won by those still in who reached it.
        amount = sum(min(c, level) - previous for _, c, _ in players if c > previous)
        eligible = tuple(seat for seat, c, live in players if live and c >= level)
        pots.append(Pot(amount=amount, eligible=eligible))
        previous = level
    leftover = sum(contributed) - sum(pot.amount for pot in pots)
    if leftover:
        if pots:
            last = pots[-1]
            pots[-1] = Pot(amount=last.amount + leftover, eligible=last.eligible)
        else:
            live_seats = tuple(seat for seat, _, live in players if live)
            pots.append(Pot(amount=leftover, eligible=live_seats))
    return pots


def clockwise_from_button(seats: Sequence[int], button: int) -> list[int]:
    """``seats`` ordered clockwise starting with the first seat left of the button.

    >>> clockwise_from_button([1, 4, 6, 9], 6)
    [9, 1, 4, 6]
    """
    ordered = sorted(seats)
    after = [s for s in ordered if s > button]
    return after + [s for s in ordered if s <= button]


def split_evenly(amount: int, winners: Sequence[int], button: int) -> dict[int, int]:
    """Share ``amount`` between tied ``winners`` (seats); odd cents one each clockwise.

    >>> split_evenly(20, [3, 5, 8], button=4)
    {5: 7, 8: 7, 3: 6}
    """
    if len(winners) == 1:  # the usual case: no sharing, no ordering needed
        return {winners[0]: amount}
    ordered = clockwise_from_button(winners, button)
    base, odd = divmod(amount, len(ordered))
    return {seat: base + (1 if k < odd else 0) for k, seat in enumerate(ordered)}


def split_hi_lo(amount: int) -> tuple[int, int]:
    """``(high_half, low_half)``; the odd chip goes to the high half.

    >>> split_hi_lo(101)
    (51, 50)
    """
    low = amount // 2
    return amount - low, low
