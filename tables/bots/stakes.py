"""The stake levels of the demo room and of the bots: every game in every structure.

One catalogue serves `seed_demo` and `play_bots`, so the bots fill the very tables a
visitor of the demo sees. Blinds and buy-ins follow RULES.md: the small blind is half the
big blind, rounded down to a whole unit from a 2-unit big blind up (§2, finer point 14);
the minimum buy-in is 20 big blinds at big blinds of 50 cents or less and 10 above, the
maximum 100 big blinds (§4). In the limit games the big blind is the small bet.
"""

from dataclasses import dataclass

from django.db import transaction

from tables.engine.config import default_buy_in_range, default_small_blind
from tables.models import Game, Kill, StakeLevel, Structure
from tables.services.config import stake_config


@dataclass(frozen=True)
class StakeSpec:
    """A stake level of the catalogue; amounts in cents, the rest derived from RULES.md."""

    name: str
    game: str
    structure: str
    big_blind: int
    spread: tuple[int, int] | None = None
    kill: str = Kill.NONE
    kill_min_pot: int = 0
    allow_straddle: bool = False
    allow_overblind: bool = False

    def fields(self) -> dict[str, object]:
        """Every model field of the stake level this spec describes."""
        bb = self.big_blind
        minimum, maximum = default_buy_in_range(bb)
        spread_min, spread_max = self.spread or (0, 0)
        return {
            "game": self.game,
            "structure": self.structure,
            "small_blind": default_small_blind(bb),
            "big_blind": bb,
            "small_bet": bb,
            "big_bet": 2 * bb,
            "spread_min": spread_min,
            "spread_max": spread_max,
            "buy_in_min": minimum,
            "buy_in_max": maximum,
            "kill": self.kill,
            "kill_min_pot": self.kill_min_pot,
            "allow_straddle": self.allow_straddle,
            "allow_overblind": self.allow_overblind,
        }


HOLDEM, OMAHA, OMAHA8 = Game.HOLDEM, Game.OMAHA, Game.OMAHA8
FL, SL, PL, NL = (
    Structure.FIXED_LIMIT,
    Structure.SPREAD_LIMIT,
    Structure.POT_LIMIT,
    Structure.NO_LIMIT,
)

DEMO_STAKES: tuple[StakeSpec, ...] = (
    # The optional straddle and overblind (RULES §7) are on at some tables, so that the
    # demo and the bots (the first bot tables are these two) show them.
    StakeSpec("PLO 0.50/1", OMAHA, PL, 100, allow_straddle=True),
    StakeSpec("Omaha NL 0.25/0.50", OMAHA, NL, 50),
    StakeSpec("Omaha FL 1/2", OMAHA, FL, 100),
    StakeSpec("Omaha SL 0.50-1.50", OMAHA, SL, 50, spread=(50, 150)),
    # Kill when one player scoops a pot of 10 big bets or more.
    StakeSpec(
        "Omaha Hi-Lo 8 FL 2/4 kill",
        OMAHA8,
        FL,
        200,
        kill=Kill.FULL,
        kill_min_pot=4_000,
        allow_overblind=True,
    ),
    StakeSpec("Omaha Hi-Lo 8 PL 0.50/1", OMAHA8, PL, 100),
    StakeSpec("Omaha Hi-Lo 8 NL 1/2", OMAHA8, NL, 200),
    StakeSpec("Omaha Hi-Lo 8 SL 1-3", OMAHA8, SL, 100, spread=(100, 300)),
    StakeSpec("Hold'em NL 1/2", HOLDEM, NL, 200, allow_straddle=True),
    StakeSpec("Hold'em PL 0.50/1", HOLDEM, PL, 100),
    StakeSpec("Hold'em FL 2/4", HOLDEM, FL, 200, allow_straddle=True, allow_overblind=True),
    StakeSpec("Hold'em SL 1-3", HOLDEM, SL, 100, spread=(100, 300)),
)


@transaction.atomic
def stake_level_ensure(*, spec: StakeSpec) -> tuple[StakeLevel, bool]:
    """The stake level named `spec.name`, created from the spec if missing.

    An existing one is left as the admin may have edited it. A new one must pass the
    engine's `TableConfig.validate()`, else nothing is created.
    """
    stake, created = StakeLevel.objects.get_or_create(name=spec.name, defaults=spec.fields())
    if created:
        stake_config(stake=stake).validate()
    return stake, created


def stake_level_for(*, game: str, structure: str) -> StakeLevel:
    """The catalogue's stake level of this game and structure (created if missing)."""
    spec = next(s for s in DEMO_STAKES if s.game == game and s.structure == structure)
    return stake_level_ensure(spec=spec)[0]
