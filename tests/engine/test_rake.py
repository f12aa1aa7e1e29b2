"""Rake arithmetic (tables.engine.rake); whole-hand rake rules are in test_rules_6_rake."""

import pytest

from tables.engine.config import TableConfig
from tables.engine.pots import Pot
from tables.engine.rake import contributed_rake, hand_rake, take_rake

CAPS = ((2, 100), (3, 200), (5, 300))


def test_rules_6_percent_rounded_down_to_the_cent() -> None:
    cfg = TableConfig(rake_percent=500, rake_caps=())
    assert hand_rake(cfg, 1999, players_dealt_in=6, flop_seen=True) == 99
    assert hand_rake(cfg, 19, players_dealt_in=6, flop_seen=True) == 0
    odd = TableConfig(rake_percent=475, rake_caps=())  # 4.75 %
    assert hand_rake(odd, 10_000, players_dealt_in=2, flop_seen=True) == 475


@pytest.mark.parametrize(("players", "cap"), [(2, 100), (3, 200), (4, 200), (5, 300), (9, 300)])
def test_rules_6_cap_per_hand_by_players_dealt_in(players: int, cap: int) -> None:
    cfg = TableConfig(rake_percent=500, rake_caps=CAPS)
    assert hand_rake(cfg, 1_000_000, players_dealt_in=players, flop_seen=True) == cap


def test_rules_6_no_flop_no_drop() -> None:
    cfg = TableConfig(rake_percent=500)
    assert hand_rake(cfg, 5000, players_dealt_in=3, flop_seen=False) == 0
    off = TableConfig(rake_percent=500, no_flop_no_drop=False)
    assert hand_rake(off, 5000, players_dealt_in=3, flop_seen=False) == 250


def test_rules_6_rake_taken_from_main_pot_first() -> None:
    assert take_rake([Pot(30, (1, 2, 3)), Pot(100, (2, 3))], 50) == [
        Pot(0, (1, 2, 3)),
        Pot(80, (2, 3)),
    ]
    assert take_rake([Pot(300, (1, 2)), Pot(100, (2,))], 50) == [Pot(250, (1, 2)), Pot(100, (2,))]
    with pytest.raises(ValueError):
        take_rake([Pot(10, (1,))], 11)


def test_rules_6_contributed_rake_proportional() -> None:
    assert contributed_rake(100, [1, 2, 3], [1000, 500, 500], button=1) == [50, 25, 25]
    assert contributed_rake(0, [1, 2], [10, 10], button=1) == [0, 0]


def test_finer_point_13_left_over_cents_to_largest_then_clockwise() -> None:
    # 7 cents over 3 equal contributors: 2 each, the odd cent to the first left of button.
    assert contributed_rake(7, [1, 2, 3], [100, 100, 100], button=2) == [2, 2, 3]
    # Largest contributor first regardless of position.
    assert contributed_rake(10, [1, 2, 3], [100, 300, 200], button=3) == [1, 6, 3]
    # Two left-over cents: the largest, then the tie broken clockwise from the button.
    shares = contributed_rake(3, [1, 2, 3, 4], [100, 100, 100, 100], button=4)
    assert shares == [1, 1, 1, 0]
    assert sum(contributed_rake(99, [1, 2, 3], [333, 333, 334], button=1)) == 99
