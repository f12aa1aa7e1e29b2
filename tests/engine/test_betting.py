"""Bet sizing per structure (tables.engine.betting) and table configuration checks."""

import pytest

from tables.engine.betting import Limits, Street, is_capped, min_raise_increment, raise_bounds
from tables.engine.config import (
    ConfigError,
    Game,
    KillInfo,
    KillMode,
    Structure,
    TableConfig,
    default_small_blind,
)


def limits(structure: str, **kw: object) -> Limits:
    return Limits.for_hand(TableConfig(structure=Structure(structure), **kw))  # type: ignore[arg-type]


# -- default small blind: RULES 2 and finer point 14 ---------------------------------------


@pytest.mark.parametrize(
    ("big_blind", "small_blind"),
    [(1000, 500), (2000, 1000), (500, 200), (300, 100), (200, 100), (100, 50), (50, 25),
     (25, 12), (5, 2), (2, 1)],
)  # fmt: skip
def test_rules_2_default_small_blind_rounds_down(big_blind: int, small_blind: int) -> None:
    assert default_small_blind(big_blind) == small_blind
    assert TableConfig(big_blind=big_blind).small_blind == small_blind


def test_rules_2_five_ten_limit_small_blind_is_two_dollars() -> None:
    # "$5/$10 limit": small bet = big blind = $5, so the small blind is $2, not $2.50.
    five_ten = TableConfig(structure=Structure.FL, big_blind=500)
    assert five_ten.small_blind == 200
    assert five_ten.small_bet == 500 and five_ten.big_bet == 1000


def test_config_defaults_and_admin_override() -> None:
    cfg = TableConfig()
    assert cfg.game is Game.OMAHA and cfg.ante == 0 and cfg.rake_percent == 500
    assert cfg.rake_caps == ((2, 300),) and cfg.no_flop_no_drop and cfg.allin_protection
    assert not (cfg.allow_straddle or cfg.allow_chop or cfg.allow_overblind)
    assert cfg.kill is KillMode.NONE and cfg.killer_acts_last
    assert TableConfig(big_blind=1000, small_blind=400).small_blind == 400


def test_config_json_round_trip() -> None:
    cfg = TableConfig(
        game="omaha8", structure="SL", big_blind=200, spread_min=200, spread_max=600,
        kill="half", rake_caps=[[2, 100], [3, 200], [5, 300]],
    )  # fmt: skip
    assert cfg.game is Game.OMAHA8 and cfg.kill is KillMode.HALF
    assert TableConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ConfigError, match="Unknown"):
        TableConfig.from_dict({"colour": "red"})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"structure": "PL", "kill": "full"}, "Kill pots"),
        ({"structure": "NL", "allow_overblind": True}, "Overblinds"),
        ({"big_blind": 0}, "big blind"),
        ({"big_blind": 100, "small_blind": 150}, "small blind"),
        ({"big_blind": 1}, "small blind"),
        ({"ante": -1}, "ante"),
        ({"structure": "SL", "spread_min": 300, "spread_max": 200}, "Spread"),
        ({"rake_percent": 20_000}, "basis points"),
        ({"rake_caps": ((3, 100), (2, 200))}, "increasing"),
        ({"small_bet": 100, "big_bet": 50}, "big bet"),
    ],
)
def test_config_validate_rejects_bad_combinations(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TableConfig(**kwargs).validate()


def test_rake_cap_lookup_by_players_dealt_in() -> None:
    cfg = TableConfig(rake_caps=((2, 100), (3, 200), (5, 300)))
    assert [cfg.rake_cap(n) for n in (2, 3, 4, 5, 9)] == [100, 200, 200, 300, 300]
    assert TableConfig(rake_caps=()).rake_cap(6) is None


def test_kill_info_round_trip() -> None:
    info = KillInfo(4, "half")  # type: ignore[arg-type]
    assert info.multiplier is KillMode.HALF
    assert KillInfo.from_dict(info.to_dict()) == info


# -- limits in force --------------------------------------------------------------------


def test_rules_7_kill_multiplies_limits_floored_to_the_cent() -> None:
    cfg = TableConfig(structure=Structure.SL, big_blind=25, spread_min=25, spread_max=75)
    half = Limits.for_hand(cfg, KillMode.HALF)
    assert (half.spread_min, half.spread_max, half.multiplier) == (37, 112, "1.5")
    full = Limits.for_hand(TableConfig(structure=Structure.FL, big_blind=100), KillMode.FULL)
    assert (full.small_bet, full.big_bet, full.multiplier) == (200, 400, "2")


def test_fixed_limit_unit_small_then_big() -> None:
    lim = limits("FL", big_blind=100)
    assert [lim.limit_unit(s) for s in Street] == [100, 100, 200, 200]


def test_min_bet_is_big_blind_or_big_bet_late_when_doubling() -> None:
    plain = limits("NL", big_blind=100)
    assert [plain.min_bet(s) for s in Street] == [100, 100, 100, 100]
    late = limits("NL", big_blind=100, min_bet_doubles_late=True)
    assert [late.min_bet(s) for s in Street] == [100, 100, 200, 200]


# -- raise bounds -----------------------------------------------------------------------


def test_rules_2_pot_limit_worked_example_raise_to_800() -> None:
    lim = limits("PL", big_blind=100)
    bounds = raise_bounds(
        lim, Street.FLOP, to_match=150, last_raise=150, committed=0, pot_total=500
    )
    assert bounds == (300, 800)


def test_pot_limit_preflop_opening_raise() -> None:
    lim = limits("PL", big_blind=100)
    # SB 50 + BB 100 in: UTG may raise to 350 (100 to call + 250 pot).
    assert raise_bounds(
        lim, Street.PREFLOP, to_match=100, last_raise=100, committed=0, pot_total=150
    ) == (200, 350)
    # The small blind completing: 50 to call, pot 200 after call -> raise to 300.
    assert raise_bounds(
        lim, Street.PREFLOP, to_match=100, last_raise=100, committed=50, pot_total=150
    ) == (200, 300)


def test_finer_point_11_pot_limit_may_always_bet_the_big_bet() -> None:
    lim = limits("PL", big_blind=100, min_bet_doubles_late=True)
    assert raise_bounds(lim, Street.TURN, to_match=0, last_raise=200, committed=0,
                        pot_total=50) == (200, 200)  # fmt: skip
    assert raise_bounds(lim, Street.FLOP, to_match=0, last_raise=100, committed=0,
                        pot_total=50) == (100, 100)  # fmt: skip


def test_no_limit_max_is_open() -> None:
    lim = limits("NL", big_blind=100)
    assert raise_bounds(
        lim, Street.RIVER, to_match=300, last_raise=200, committed=0, pot_total=900
    ) == (500, None)


def test_fixed_limit_exact_amounts() -> None:
    lim = limits("FL", big_blind=100)
    assert raise_bounds(lim, Street.FLOP, to_match=0, last_raise=100, committed=0,
                        pot_total=300) == (100, 100)  # fmt: skip
    assert raise_bounds(lim, Street.TURN, to_match=200, last_raise=200, committed=0,
                        pot_total=300) == (400, 400)  # fmt: skip


def test_spread_limit_raise_at_least_previous_raise_within_spread() -> None:
    lim = limits("SL", big_blind=10, spread_min=10, spread_max=30)
    assert raise_bounds(lim, Street.FLOP, to_match=0, last_raise=10, committed=0,
                        pot_total=30) == (10, 30)  # fmt: skip
    # Someone bet 25: a raise must add at least 25 and at most 30.
    assert raise_bounds(lim, Street.FLOP, to_match=25, last_raise=25, committed=0,
                        pot_total=55) == (50, 55)  # fmt: skip
    assert min_raise_increment(lim, Street.FLOP, 5) == 10


def test_limit_cap_counts_four_bets() -> None:
    assert not is_capped(limits("FL"), 3)
    assert is_capped(limits("FL"), 4) and is_capped(limits("SL"), 4)
    assert not is_capped(limits("NL"), 12) and not is_capped(limits("PL"), 12)
