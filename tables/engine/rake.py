"""Rake (RULES.md section 6 and finer point 13).

* Computed once per hand on the total of all pots after uncalled bets are returned,
  ``rake_percent`` basis points rounded down to the cent, capped per hand by the number of
  players dealt in.
* No flop, no drop (setting, on by default): a hand that ends before the flop pays none.
  A hand that is all-in preflop and runs the board out *has* a flop and is raked.
* A chopped hand pays no rake (the state never calls this for a chop).
* Taken from the main pot first, then the side pots in order.
* Contributed rake: each player's share is proportional to what they put in the pots,
  floored to the cent; left-over cents go one each to the largest contributors, ties
  broken clockwise from the first seat left of the button.
"""

from __future__ import annotations

from collections.abc import Sequence

from tables.engine.config import TableConfig
from tables.engine.pots import Pot, clockwise_from_button


def hand_rake(config: TableConfig, total: int, *, players_dealt_in: int, flop_seen: bool) -> int:
    """Rake of a hand whose pots total ``total`` cents.

    >>> hand_rake(TableConfig(rake_percent=500, rake_caps=((2, 100),)), 1999,
    ...           players_dealt_in=6, flop_seen=True)
    99
    """
    if config.no_flop_no_drop and not flop_seen:
        return 0
    rake = total * config.rake_percent // 10_000
    if not rake:
        return 0
    cap = config.rake_cap(players_dealt_in)
    if cap is not None:
        rake = min(rake, cap)
    return rake


def take_rake(pots: Sequence[Pot], rake: int) -> list[Pot]:
    """The pots after removing ``rake``: main pot first, then side pots in order.

    >>> take_rake([Pot(30, (1, 2)), Pot(100, (2,))], 50)
    [Pot(amount=0, eligible=(1, 2)), Pot(amount=80, eligible=(2,))]
    """
    out: list[Pot] = []
    left = rake
    for pot in pots:
        taken = min(left, pot.amount)
        left -= taken
        out.append(Pot(amount=pot.amount - taken, eligible=pot.eligible))
    if left:
        raise ValueError("rake larger than the pots")
    return out


def contributed_rake(
    rake: int, seats: Sequence[int], contributed: Sequence[int], button: int
) -> list[int]:
    """Each player's share of ``rake``, in the order of ``seats`` (finer point 13).

    >>> contributed_rake(10, [1, 2, 3], [100, 100, 100], button=1)
    [3, 4, 3]
    """
    total = sum(contributed)
    if rake == 0 or total == 0:
        return [0] * len(seats)
    shares = [rake * c // total for c in contributed]
    left = rake - sum(shares)
    if left:
        clockwise = {seat: k for k, seat in enumerate(clockwise_from_button(seats, button))}
        priority = sorted(
            (i for i, c in enumerate(contributed) if c > 0),
            key=lambda i: (-contributed[i], clockwise[seats[i]]),
        )
        for i in priority[:left]:
            shares[i] += 1
    return shares
