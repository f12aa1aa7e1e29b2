"""Pots: uncalled bets, main and side pots, splits (tables.engine.pots)."""

from tables.engine.pots import (
    Pot,
    build_pots,
    clockwise_from_button,
    split_evenly,
    split_hi_lo,
    uncalled_excess,
)


def test_rules_2_uncalled_excess_is_top_minus_second() -> None:
    assert uncalled_excess([100, 300, 50]) == (1, 200)
    assert uncalled_excess([300, 300, 50]) is None
    assert uncalled_excess([0, 0]) is None
    assert uncalled_excess([150, 0, 0]) == (0, 150)


def test_rules_2_table_stakes_side_pots() -> None:
    # Seat 1 all-in for 100, seat 2 for 250, seats 3 and 4 in for 400; seat 5 folded 50.
    pots = build_pots([1, 2, 3, 4, 5], [100, 250, 400, 400, 50], [True, True, True, True, False])
    assert pots == [
        Pot(100 * 4 + 50, (1, 2, 3, 4)),
        Pot(150 * 3, (2, 3, 4)),
        Pot(150 * 2, (3, 4)),
    ]
    assert sum(p.amount for p in pots) == 1200


def test_folded_dead_money_above_all_levels_is_never_lost() -> None:
    pots = build_pots([1, 2], [300, 100], [False, True])
    assert pots == [Pot(300 + 100, (2,))]


def test_pot_json_round_trip() -> None:
    pot = Pot(700, (2, 5))
    assert Pot.from_dict(pot.to_dict()) == pot


def test_rules_3_9_odd_chips_one_each_clockwise_from_button_left() -> None:
    assert split_evenly(20, [3, 5, 8], button=4) == {5: 7, 8: 7, 3: 6}
    assert split_evenly(20, [3, 5, 8], button=8) == {3: 7, 5: 7, 8: 6}
    assert split_evenly(11, [2, 9], button=2) == {9: 6, 2: 5}
    # Nobody ever gets more than one odd chip.
    shares = split_evenly(105, [1, 2, 3, 4, 5, 6, 7, 8], button=5)
    assert max(shares.values()) - min(shares.values()) <= 1 and sum(shares.values()) == 105


def test_rules_3_9_hi_lo_odd_chip_to_high() -> None:
    assert split_hi_lo(101) == (51, 50)
    assert split_hi_lo(100) == (50, 50)
    assert split_hi_lo(1) == (1, 0)


def test_clockwise_from_button_wraps() -> None:
    assert clockwise_from_button([1, 4, 6, 9], 6) == [9, 1, 4, 6]
    assert clockwise_from_button([1, 4, 6, 9], 9) == [1, 4, 6, 9]


def test_single_pots_and_a_folded_player_above_the_live_level() -> None:
    assert build_pots([1, 2, 3], [100, 100, 40], [True, True, False]) == [Pot(240, (1, 2))]
    assert build_pots([1, 2, 3], [100, 100, 100], [True, True, True]) == [Pot(300, (1, 2, 3))]
    # A folded player above the live level: the leftover goes to the last pot.
    assert build_pots([1, 2], [300, 100], [False, True]) == [Pot(400, (2,))]
