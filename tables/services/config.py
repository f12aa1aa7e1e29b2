"""The engine's table configuration for a stake level."""

from tables.engine.config import AUTO, TableConfig
from tables.models import StakeLevel, Structure


def stake_config(*, stake: StakeLevel) -> TableConfig:
    """Every rule setting of the stake level, as the engine takes it."""
    spread = stake.structure == Structure.SPREAD_LIMIT
    return TableConfig(
        game=stake.game,
        structure=stake.structure,
        big_blind=stake.big_blind,
        small_blind=stake.small_blind,
        small_bet=stake.small_bet,
        big_bet=stake.big_bet,
        spread_min=stake.spread_min if spread else AUTO,
        spread_max=stake.spread_max if spread else AUTO,
        ante=stake.ante,
        min_bet_doubles_late=stake.min_bet_doubles_late,
        allow_straddle=stake.allow_straddle,
        allow_chop=stake.allow_chop,
        kill=stake.kill,
        kill_min_pot=stake.kill_min_pot,
        killer_acts_last=stake.killer_acts_last,
        allow_overblind=stake.allow_overblind,
        allin_protection=stake.allin_protection,
        rake_percent=stake.rake_percent_bp,
        rake_caps=((2, stake.rake_cap_2), (3, stake.rake_cap_3_4), (5, stake.rake_cap_5_plus)),
        no_flop_no_drop=stake.no_flop_no_drop,
        run_it_twice=stake.run_it_twice,
    )
