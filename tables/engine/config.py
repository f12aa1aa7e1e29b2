"""Table configuration of the hand engine: games, betting structures and table options.

A :class:`TableConfig` is what a stake level (plus its table options) means to the engine.
It is a frozen dataclass that round-trips through JSON (``to_dict``/``from_dict``), so the
Django layer can build it from a model row and the hand history can store it verbatim.

Money is integer cents everywhere (RULES.md, top). ``rake_percent`` is in basis points
(500 = 5.00 %) so that no float ever touches money.

Defaults follow RULES.md: a field left at :data:`AUTO` is derived in ``__post_init__``
(small blind per section 2 and finer point 14, small bet = big blind, big bet = 2 small
bets, spread minimum = big blind, spread maximum = 3 x minimum as the seeds' "10-30").
Construction never raises; :meth:`TableConfig.validate` reports wrong combinations with a
readable :class:`~tables.engine.errors.ConfigError` (``start_hand`` calls it).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from tables.engine.errors import ConfigError

#: One currency unit in cents.
UNIT = 100
#: Sentinel for "derive this amount from the others" (see module docstring).
AUTO = -1


class Game(StrEnum):
    """The three games of RULES.md section 1."""

    OMAHA = "omaha"
    OMAHA8 = "omaha8"
    HOLDEM = "holdem"

    @property
    def hole_cards(self) -> int:
        """Number of hole cards dealt to each player."""
        return 2 if self is Game.HOLDEM else 4

    @property
    def hi_lo(self) -> bool:
        """True when pots are split between a high and an 8-or-better low hand."""
        return self is Game.OMAHA8


class Structure(StrEnum):
    """Betting structures of RULES.md section 2."""

    FL = "FL"
    SL = "SL"
    PL = "PL"
    NL = "NL"

    @property
    def is_limit(self) -> bool:
        """Fixed and spread limit: capped at 4 bets a round; kill and overblind allowed."""
        return self in LIMIT_STRUCTURES


class KillMode(StrEnum):
    """Kill pot setting (RULES.md section 7): limits x2 (full) or x1.5 (half)."""

    NONE = "none"
    FULL = "full"
    HALF = "half"

    def scale(self, amount: int) -> int:
        """``amount`` multiplied by this kill, rounded down to the cent (finer point 2)."""
        if self is KillMode.FULL:
            return amount * 2
        if self is KillMode.HALF:
            return amount * 3 // 2
        return amount


#: Fixed and spread limit: the structures with a bet cap, kills and overblinds.
LIMIT_STRUCTURES = frozenset((Structure.FL, Structure.SL))


def default_small_blind(big_blind: int) -> int:
    """Small blind for ``big_blind`` cents per RULES.md section 2 and finer point 14.

    Half the big blind, rounded down to a whole unit when the big blind is at least 2
    units, else rounded down to the cent.

    >>> default_small_blind(1000), default_small_blind(50), default_small_blind(25)
    (500, 25, 12)
    >>> default_small_blind(500)  # $2.50/$5 -> $2 (the "$5/$10 limit: $2" rule)
    200
    """
    half = big_blind // 2
    if big_blind >= 2 * UNIT:
        return half // UNIT * UNIT
    return half


# RULES §4: the big blind (cents) above which the minimum buy-in drops from 20 to 10 big blinds.
SMALL_STAKES_BIG_BLIND = 50


def default_buy_in_range(big_blind: int) -> tuple[int, int]:
    """Minimum and maximum buy-in for ``big_blind`` cents per RULES.md section 4.

    At least 20 big blinds where the big blind is 50 cents or less, 10 above; at most 100.

    >>> default_buy_in_range(50), default_buy_in_range(300), default_buy_in_range(2000)
    ((1000, 5000), (3000, 30000), (20000, 200000))
    """
    minimum = (20 if big_blind <= SMALL_STAKES_BIG_BLIND else 10) * big_blind
    return minimum, 100 * big_blind


@dataclass(frozen=True, slots=True)
class KillInfo:
    """A kill in force for a hand: the killer's seat and the multiplier.

    Produced by the engine at the end of a hand (``HandResult.next_kill``) and passed to
    the next ``start_hand`` by the table layer, which drops it when the killer left or
    sits out (finer point 5).
    """

    seat: int
    multiplier: KillMode

    def __post_init__(self) -> None:
        object.__setattr__(self, "multiplier", KillMode(self.multiplier))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {"seat": self.seat, "multiplier": str(self.multiplier)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> KillInfo:
        """Inverse of :meth:`to_dict`."""
        return cls(seat=int(d["seat"]), multiplier=KillMode(d["multiplier"]))


@dataclass(frozen=True, slots=True)
class TableConfig:
    """Everything about a table that the rules of a hand depend on.

    Amounts are cents; ``AUTO`` amounts are derived (see module docstring).
    ``rake_caps`` is a tuple of ``(min_players_dealt_in, cap_cents)``: the cap of a hand is
    the one of the largest ``min_players`` not above the number of players dealt in
    (the smallest entry when none is; no entries = no cap).
    """

    game: Game = Game.OMAHA
    structure: Structure = Structure.PL
    big_blind: int = 100
    small_blind: int = AUTO
    small_bet: int = AUTO
    big_bet: int = AUTO
    spread_min: int = AUTO
    spread_max: int = AUTO
    ante: int = 0
    min_bet_doubles_late: bool = False
    allow_straddle: bool = False
    allow_chop: bool = False
    kill: KillMode = KillMode.NONE
    kill_min_pot: int = 0
    killer_acts_last: bool = True
    allow_overblind: bool = False
    allin_protection: bool = True
    rake_percent: int = 500
    rake_caps: tuple[tuple[int, int], ...] = ((2, 300),)
    no_flop_no_drop: bool = True
    # Run it twice (off by default): offered when the players are all-in before the river.
    run_it_twice: bool = False

    def __post_init__(self) -> None:
        # Accept plain strings/lists (from JSON or a form) and normalise them.
        put = object.__setattr__
        put(self, "game", Game(self.game))
        put(self, "structure", Structure(self.structure))
        put(self, "kill", KillMode(self.kill))
        put(self, "rake_caps", tuple((int(m), int(c)) for m, c in self.rake_caps))
        if self.small_blind == AUTO:
            put(self, "small_blind", default_small_blind(self.big_blind))
        if self.small_bet == AUTO:
            put(self, "small_bet", self.big_blind)
        if self.big_bet == AUTO:
            put(self, "big_bet", 2 * self.small_bet)
        if self.spread_min == AUTO:
            put(self, "spread_min", self.big_blind)
        if self.spread_max == AUTO:
            put(self, "spread_max", 3 * self.spread_min)

    # -- checks ---------------------------------------------------------------------------

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first wrong setting; return None if fine."""
        if self.big_blind < 1:
            raise ConfigError("The big blind must be at least 1 cent.")
        if not 1 <= self.small_blind <= self.big_blind:
            raise ConfigError(
                f"The small blind ({self.small_blind}) must be between 1 cent and the big "
                f"blind ({self.big_blind}); with a 1-cent big blind set it explicitly."
            )
        if self.ante < 0:
            raise ConfigError("The ante cannot be negative.")
        if self.small_bet < 1 or self.big_bet < self.small_bet:
            raise ConfigError("The big bet must be at least the small bet, which must be > 0.")
        if self.structure is Structure.SL and not 1 <= self.spread_min <= self.spread_max:
            raise ConfigError(
                f"Spread limit needs 0 < minimum <= maximum (got {self.spread_min}-"
                f"{self.spread_max})."
            )
        if self.kill is not KillMode.NONE and self.structure not in LIMIT_STRUCTURES:
            raise ConfigError("Kill pots are played in fixed and spread limit only.")
        if self.allow_overblind and self.structure not in LIMIT_STRUCTURES:
            raise ConfigError("Overblinds are allowed in fixed and spread limit only.")
        if self.kill_min_pot < 0:
            raise ConfigError("The kill minimum pot cannot be negative.")
        if not 0 <= self.rake_percent <= 10_000:
            raise ConfigError("Rake is in basis points: between 0 and 10000 (100 %).")
        previous = 0
        for min_players, cap in self.rake_caps:
            if not 2 <= min_players <= 10 or min_players <= previous:
                raise ConfigError(
                    "Rake caps must be listed by strictly increasing player counts (2-10)."
                )
            if cap < 0:
                raise ConfigError("A rake cap cannot be negative.")
            previous = min_players

    # -- derived values -----------------------------------------------------------------

    def rake_cap(self, players_dealt_in: int) -> int | None:
        """The per-hand rake cap for this many players dealt in (None = uncapped)."""
        if not self.rake_caps:
            return None
        cap = self.rake_caps[0][1]
        for min_players, value in self.rake_caps:
            if min_players <= players_dealt_in:
                cap = value
        return cap

    # -- JSON -----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form (every amount resolved, enums as their string values)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, StrEnum):
                value = str(value)
            elif f.name == "rake_caps":
                value = [list(pair) for pair in value]
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TableConfig:
        """Inverse of :meth:`to_dict`; unknown keys are rejected with a ConfigError."""
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ConfigError(f"Unknown table settings: {', '.join(sorted(unknown))}.")
        return cls(**d)
