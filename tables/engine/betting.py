"""Bet sizing per betting structure (RULES.md section 2): FL, SL, PL and NL bounds.

Everything here is a pure function of a few integers; :mod:`tables.engine.state` feeds it
the round's numbers and then caps the result at the player's stack.

Vocabulary (all amounts in cents, "to" amounts are a player's total commitment on the
current street, the "raise TO" convention of the API):

* ``to_match`` -- the amount every player must have committed this street to stay in.
* ``last_raise`` -- the size of the last *full* bet or raise this street (the minimum
  raise increment in SL/PL/NL). At the start of a street it is the minimum bet; preflop it
  is the big blind (or the straddle in PL/NL, finer point 4).
* ``full_bets`` -- bets counted toward the 4-bet cap of limit games. A short all-in never
  counts (finer point 1) and never changes ``last_raise``.

Short all-in rule: a raise whose increment is below the required minimum is only
possible as an all-in; it moves ``to_match`` but neither counts as a bet nor, on its own,
reopens the betting for players who already acted. The next full raise must be at least
the last full bet or raise *on top of* the all-in amount (finer points 1 and 21), which
is what ``to_match + increment`` gives below. Several short all-ins of one round do
reopen it for a player who already acted when together they leave that player facing
at least :func:`min_raise_increment` (finer point 19); :mod:`tables.engine.state` checks
that, and the minimum raise stays the last full bet or raise.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tables.engine.config import LIMIT_STRUCTURES, KillMode, Structure, TableConfig

#: Maximum number of bets in a limit betting round (bet, raise, re-raise, cap).
LIMIT_CAP = 4


class Street(StrEnum):
    """Betting rounds of a hand."""

    PREFLOP = "preflop"
    FLOP = "flop"
    TURN = "turn"
    RIVER = "river"


#: Turn and river: the big bet applies in limit games.
LATE_STREETS = frozenset((Street.TURN, Street.RIVER))
#: Board cards visible during each street's betting.
BOARD_CARDS = {Street.PREFLOP: 0, Street.FLOP: 3, Street.TURN: 4, Street.RIVER: 5}
NEXT_STREET = {Street.PREFLOP: Street.FLOP, Street.FLOP: Street.TURN, Street.TURN: Street.RIVER}


@dataclass(frozen=True, slots=True)
class Limits:
    """The betting limits in force for one hand (after a kill or an overblind).

    ``multiplier`` is "1", "2" or "1.5" and is for display and the hand history only.
    """

    structure: Structure
    big_blind: int
    small_bet: int
    big_bet: int
    spread_min: int
    spread_max: int
    min_bet_doubles_late: bool
    multiplier: str = "1"

    @classmethod
    def for_hand(cls, config: TableConfig, scale: KillMode = KillMode.NONE) -> Limits:
        """Limits of a hand of ``config``; ``scale`` FULL doubles them, HALF x1.5.

        Kill and overblind hands (limit games only) multiply the small and big bets and
        both ends of the spread, rounded down to the cent (finer point 2). The blinds are
        not changed: the kill blind / overblind is posted on top.
        """
        if scale is KillMode.NONE:  # almost every hand: the table's own limits
            return cls(
                structure=config.structure,
                big_blind=config.big_blind,
                small_bet=config.small_bet,
                big_bet=config.big_bet,
                spread_min=config.spread_min,
                spread_max=config.spread_max,
                min_bet_doubles_late=config.min_bet_doubles_late,
            )
        multiplier = {KillMode.FULL: "2", KillMode.HALF: "1.5"}[scale]
        return cls(
            structure=config.structure,
            big_blind=config.big_blind,
            small_bet=scale.scale(config.small_bet),
            big_bet=scale.scale(config.big_bet),
            spread_min=scale.scale(config.spread_min),
            spread_max=scale.scale(config.spread_max),
            min_bet_doubles_late=config.min_bet_doubles_late,
            multiplier=multiplier,
        )

    def limit_unit(self, street: Street) -> int:
        """Fixed-limit bet size: the small bet preflop and on the flop, else the big bet."""
        return self.big_bet if street in LATE_STREETS else self.small_bet

    def min_bet(self, street: Street) -> int:
        """Smallest opening bet of a street (the initial ``last_raise``)."""
        structure = self.structure
        if structure is Structure.FL:
            return self.limit_unit(street)
        if structure is Structure.SL:
            return self.spread_min
        if self.min_bet_doubles_late and street in LATE_STREETS:
            return self.big_bet
        return self.big_blind

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {
            "structure": str(self.structure),
            "big_blind": self.big_blind,
            "small_bet": self.small_bet,
            "big_bet": self.big_bet,
            "spread_min": self.spread_min,
            "spread_max": self.spread_max,
            "min_bet_doubles_late": self.min_bet_doubles_late,
            "multiplier": self.multiplier,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Limits:
        """Inverse of :meth:`to_dict`."""
        return cls(**{**d, "structure": Structure(d["structure"])})


def min_raise_increment(limits: Limits, street: Street, last_raise: int) -> int:
    """Smallest increment over ``to_match`` that makes a *full* bet or raise."""
    structure = limits.structure
    if structure is Structure.FL:
        return limits.limit_unit(street)
    if structure is Structure.SL:
        # "A raise must be at least the previous bet or raise", within the spread.
        return min(max(limits.spread_min, last_raise), limits.spread_max)
    return last_raise


def raise_bounds(
    limits: Limits,
    street: Street,
    *,
    to_match: int,
    last_raise: int,
    committed: int,
    pot_total: int,
) -> tuple[int, int | None]:
    """``(min_to, max_to)`` of a full bet/raise before the stack cap (None = no limit).

    ``committed`` is the acting player's commitment this street and ``pot_total`` every
    chip in the middle (collected pots plus all commitments of this street, antes too).

    >>> lim = Limits(Structure.PL, 100, 100, 200, 100, 300, False)
    >>> # RULES.md: pot 200, A bets 150, B calls: C may raise to 800.
    >>> raise_bounds(lim, Street.FLOP, to_match=150, last_raise=150, committed=0,
    ...              pot_total=500)
    (300, 800)
    """
    structure = limits.structure
    if structure is Structure.FL:
        min_to = to_match + limits.limit_unit(street)
        return min_to, min_to
    if structure is Structure.SL:
        min_to = to_match + min_raise_increment(limits, street, last_raise)
        return min_to, to_match + limits.spread_max
    min_to = to_match + last_raise  # PL and NL: min_raise_increment is the last full raise
    if structure is Structure.NL:
        return min_to, None
    # Pot limit: the pot after calling, plus the call.
    call = to_match - committed
    max_to = to_match + pot_total + call
    if to_match == 0 and limits.min_bet_doubles_late and street in LATE_STREETS:
        # Finer point 11: the big bet may always be bet, even into a smaller pot.
        max_to = max(max_to, limits.big_bet)
    return min_to, max(max_to, min_to)


def is_capped(limits: Limits, full_bets: int) -> bool:
    """True when a limit round already has its 4 bets (only call or fold remain)."""
    return full_bets >= LIMIT_CAP and limits.structure in LIMIT_STRUCTURES
