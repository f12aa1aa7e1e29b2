"""Hand values (tables/engine/evaluator.py, lowhands.py) against RULES.md section 1.

The first tests are the rules' own examples. The differential tests then compare the
ordering of random hands with pokerkit's evaluators, an independent implementation;
their seeds are fixed, so a failure names a deal that reproduces.
"""

import random
from collections.abc import Sequence
from itertools import combinations

import pytest
from phevaluator import evaluate_5cards, evaluate_cards, evaluate_omaha_cards
from pokerkit import Hand, OmahaEightOrBetterLowHand, OmahaHoldemHand, StandardHighHand

from tables.engine.cards import FULL_DECK, cards_str, parse_cards
from tables.engine.evaluator import (
    FLUSH_WORST,
    FOUR_OF_A_KIND_WORST,
    FULL_HOUSE_WORST,
    PAIR_WORST,
    STRAIGHT_FLUSH_WORST,
    STRAIGHT_WORST,
    THREE_OF_A_KIND_WORST,
    TWO_PAIR_WORST,
    best_high_cards,
    best_low_cards,
    describe_high,
    describe_low,
    high_value,
    high_values,
    low_value,
)
from tables.engine.lowhands import LOW_MASKS, OMAHA_LOW


def high(game: str, hole: str, board: str) -> int:
    return high_value(game, parse_cards(hole), parse_cards(board))


def low(hole: str, board: str) -> int | None:
    return low_value(parse_cards(hole), parse_cards(board))


def category(value: int) -> str:
    bounds = [
        (STRAIGHT_FLUSH_WORST, "straight flush"),
        (FOUR_OF_A_KIND_WORST, "four of a kind"),
        (FULL_HOUSE_WORST, "full house"),
        (FLUSH_WORST, "flush"),
        (STRAIGHT_WORST, "straight"),
        (THREE_OF_A_KIND_WORST, "three of a kind"),
        (TWO_PAIR_WORST, "two pair"),
        (PAIR_WORST, "pair"),
    ]
    return next((name for worst, name in bounds if value <= worst), "high card")


# --- RULES.md section 1, rule by rule ------------------------------------------------


@pytest.mark.parametrize("game", ["omaha", "omaha8"])
def test_board_flush_needs_two_hole_cards_in_omaha(game: str) -> None:
    board = "Ks Qs 7s 4s 2h"
    assert category(high(game, "As 9d 8c 3h", board)) != "flush"
    assert category(high(game, "As 3s 9d 8c", board)) == "flush"
    assert category(high("holdem", "As 9d", board)) == "flush"
    # Five suited board cards and no suited hole card: still no flush.
    assert category(high(game, "Ad Ac 9h 8h", "Ks Qs 7s 4s 2s")) == "pair"


def test_omaha_argument_order_is_board_then_hole() -> None:
    # Swapping board and hole would let three spades of the hole make a flush.
    hole, board = parse_cards("As Ks Qs 2d"), parse_cards("Js 3h 4c 8d 9c")
    value = high_value("omaha", hole, board)
    assert category(value) == "high card"
    assert value == evaluate_omaha_cards(*board, *hole)
    assert value == min(
        evaluate_5cards(*two, *three)
        for two in combinations(hole, 2)
        for three in combinations(board, 3)
    )


def test_exactly_two_hole_cards_four_kings_make_only_a_pair() -> None:
    assert category(high("omaha", "Kc Kd Kh Ks", "2c 7d 9h Jc 3s")) == "pair"
    assert describe_high(high("omaha", "Kc Kd Kh Ks", "2c 7d 9h Jc 3s")) == "a pair of Kings"
    assert category(high("omaha", "Kc Kd Kh Ks", "2c 2d 9h Jc 3s")) == "two pair"


def test_four_to_a_straight_on_board_is_no_straight_with_one_hole_card() -> None:
    board = "5c 6d 7h 8s Kc"
    assert category(high("omaha", "9d Ac Ad 2h", board)) == "pair"
    assert category(high("omaha", "9d Tc Ad 2h", board)) == "straight"
    assert category(high("holdem", "9d 2h", board)) == "straight"


def test_a_2_3_4_5_is_the_lowest_straight() -> None:
    wheel = high("holdem", "As 2d", "3c 4h 5s Kd Qc")
    assert wheel == STRAIGHT_WORST
    assert describe_high(wheel) == "a straight, Five high"
    assert wheel < high("holdem", "Ks Kd", "3c 4h 5s Kc Qc")  # beats three of a kind
    assert wheel > high("holdem", "6s 2d", "3c 4h 5s Kd Qc")  # loses to six high
    assert high("omaha", "As 2d Kh Kd", "3c 4h 5s 9d Qc") == STRAIGHT_WORST
    assert high("holdem", "As 2s", "3s 4s 5s Kd Qc") == STRAIGHT_FLUSH_WORST


def test_suits_never_rank_and_kickers_decide() -> None:
    board = "Ah 9c 7d 4s 2c"
    assert high("holdem", "Kc Qc", board) == high("holdem", "Kd Qh", board)
    assert high("holdem", "Kc Qc", board) < high("holdem", "Kd Jh", board)
    assert high("holdem", "Kc 3c", board) == high("holdem", "Kd 3h", board)


def test_holdem_may_play_the_board() -> None:
    royal = "As Ks Qs Js Ts"
    assert high("holdem", "2c 3d", royal) == high("holdem", "4h 5h", royal) == 1
    straight = "5c 6d 7h 8s 9c"
    assert high("holdem", "2c 2d", straight) == high("holdem", "3h 3s", straight)
    assert high("holdem", "Tc 2d", straight) < high("holdem", "3h 3s", straight)


def test_low_examples_from_the_rules() -> None:
    board = "5h 4s 3c Kd Qh"
    seven_six = low("7c 6d Jh Jd", board)
    eight_five = low("8c 2d Jc Js", board)
    assert seven_six is not None and eight_five is not None
    assert seven_six < eight_five
    assert describe_low(seven_six) == "7,6,5,4,3"
    assert describe_low(eight_five) == "8,5,4,3,2"

    board = "6h 3s 2c Kd Qh"
    six_four = low("4c Ad Jh Jd", board)
    six_five = low("5c Ad Jh Jd", board)
    assert six_four is not None and six_five is not None
    assert six_four < six_five
    assert describe_low(six_four) == "6,4,3,2,A"


def test_the_wheel_is_the_best_low() -> None:
    assert low("Ac 2d Kh Kd", "3h 4s 5c Kc Qh") == 1
    assert describe_low(1) == "5,4,3,2,A (a wheel)"
    assert describe_low(len(LOW_MASKS)) == "8,7,6,5,4"


def test_lows_compare_from_the_highest_card_down() -> None:
    def ranks_high_first(mask: int) -> list[int]:
        return sorted((bit for bit in range(8) if mask >> bit & 1), reverse=True)

    assert len(LOW_MASKS) == 56
    assert list(LOW_MASKS) == sorted(LOW_MASKS, key=ranks_high_first)


@pytest.mark.parametrize(
    ("hole", "board"),
    [
        ("Ac 3d 4h 6s", "2c 5d 9h Tc Ks"),  # only two low board cards
        ("Ac Kd Qh Jd", "2c 3d 4h Kc Qs"),  # only one low hole card
        ("Ac Ad Kc Kd", "2c 3d 4h 9c Ts"),  # the two low hole cards are a pair
        ("Ac 4d 5h 6s", "2c 2d 3h Kc Qs"),  # the board's low cards are paired
        ("Ac 2d 3h 4s", "9c Td 5h 6c Ks"),  # nines do not play: 9-6-5-2-A is no low
    ],
)
def test_no_qualifying_low(hole: str, board: str) -> None:
    assert low(hole, board) is None
    assert best_low_cards(parse_cards(hole), parse_cards(board)) is None


def test_low_and_high_may_use_different_hole_cards() -> None:
    hole, board = parse_cards("Ac 2d Ks Kh"), parse_cards("Kd 7c 5h 3s 9c")
    assert describe_high(high_value("omaha8", hole, board)) == "three of a kind, Kings"
    assert cards_str(best_high_cards("omaha8", hole, board)) == "KsKhKd9c7c"
    value = low_value(hole, board)
    assert value is not None
    assert describe_low(value) == "7,5,3,2,A"
    best = best_low_cards(hole, board)
    assert best is not None
    assert cards_str(best) == "7c5h3s2dAc"


# --- descriptions and showdown cards -------------------------------------------------


@pytest.mark.parametrize(
    ("game", "hole", "board", "text", "cards"),
    [
        ("holdem", "As Ks", "Qs Js Ts 2c 3d", "a royal flush", "AsKsQsJsTs"),
        ("holdem", "As 2s", "3s 4s 5s Kd Qc", "a straight flush, Five high", "5s4s3s2sAs"),
        ("holdem", "Qc Qd", "Qh Qs 2c 3d 9h", "four of a kind, Queens", "QsQhQdQc9h"),
        (
            "omaha",
            "Kc Kd 7h 2c",
            "Ks 7d 7c 3h 9s",
            "a full house, Kings full of Sevens",
            "KsKdKc7d7c",
        ),
        ("holdem", "Ah 9h", "2h 5h 7h Kc Kd", "a flush, Ace high", "Ah9h7h5h2h"),
        ("holdem", "6c 7d", "8h 9s Tc Kd 2c", "a straight, Ten high", "Tc9s8h7d6c"),
        ("holdem", "7c 7d", "7h As Tc Kd 2c", "three of a kind, Sevens", "7h7d7cAsKd"),
        ("holdem", "Ac 5d", "Ah 5s Tc Kd 2c", "two pair, Aces and Fives", "AhAc5s5dKd"),
        ("holdem", "Jc 5d", "Jh 4s Tc 8d 2c", "a pair of Jacks", "JhJcTc8d5d"),
        ("holdem", "Ac 5d", "Jh 4s Tc 8d 2c", "high card Ace", "AcJhTc8d5d"),
    ],
)
def test_describe_high_and_best_high_cards(
    game: str, hole: str, board: str, text: str, cards: str
) -> None:
    hole_cards, board_cards = parse_cards(hole), parse_cards(board)
    value = high_value(game, hole_cards, board_cards)
    assert describe_high(value) == text
    best = best_high_cards(game, hole_cards, board_cards)
    assert evaluate_5cards(*best) == value
    assert cards_str(best) == cards


def test_best_high_cards_in_omaha_use_two_hole_cards() -> None:
    hole, board = parse_cards("Kc Kd 7h 2c"), parse_cards("Ks 7d 7c 3h 9s")
    best = best_high_cards("omaha", hole, board)
    assert cards_str(best) == "KsKdKc7d7c"
    assert len(set(best) & set(hole)) == 2


def test_every_high_value_has_a_description() -> None:
    texts = [describe_high(value) for value in range(1, 7463)]
    assert texts[0] == "a royal flush"
    assert texts[-1] == "high card Seven"
    with pytest.raises(ValueError, match="invalid high value"):
        describe_high(0)
    with pytest.raises(ValueError, match="invalid low value"):
        describe_low(57)


def test_unknown_game_and_short_hands_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown game"):
        high("stud", "As Kd", "2c 3d 4h 5s 6c")
    with pytest.raises(ValueError, match="unknown game"):
        best_high_cards("razz", parse_cards("As Kd"), parse_cards("2c 3d 4h"))
    with pytest.raises(ValueError, match="5 to 7 cards"):
        high("holdem", "As Kd", "2c 3d")
    with pytest.raises(ValueError, match="Omaha needs"):
        high("omaha", "As Kd Qh Jc", "2c 3d")


# --- tables and fast paths against brute force ---------------------------------------


def test_omaha_low_table_matches_brute_force_for_every_rank_mask() -> None:
    for hole_mask in range(256):
        hole_bits = [bit for bit in range(8) if hole_mask >> bit & 1]
        if len(hole_bits) > 4:
            continue
        for board_mask in range(256):
            board_bits = [bit for bit in range(8) if board_mask >> bit & 1]
            if len(board_bits) > 5:
                continue
            lows = [
                sum(1 << bit for bit in (*two, *three))
                for two in combinations(hole_bits, 2)
                for three in combinations([b for b in board_bits if b not in two], 3)
            ]
            expected = LOW_MASKS.index(min(lows)) + 1 if lows else None
            assert OMAHA_LOW[hole_mask << 8 | board_mask] == expected, (hole_mask, board_mask)


# Every low as its ranks from the highest down (ace = 1), best first; value = index + 1.
ALL_LOWS = sorted(sorted(ranks, reverse=True) for ranks in combinations(range(1, 9), 5))


def low_of_five(cards: Sequence[int]) -> int | None:
    """The low value of exactly five cards, ``None`` if they make no 8-or-better low."""
    ranks = {1 if card >> 2 == 12 else (card >> 2) + 2 for card in cards}
    if len(ranks) < 5 or max(ranks) > 8:
        return None
    return ALL_LOWS.index(sorted(ranks, reverse=True)) + 1


def brute_low(hole: Sequence[int], board: Sequence[int]) -> int | None:
    """The best low by trying all two-hole, three-board hands."""
    lows = [
        low_of_five((*two, *three))
        for two in combinations(hole, 2)
        for three in combinations(board, 3)
    ]
    return min((value for value in lows if value is not None), default=None)


@pytest.mark.parametrize("board_size", [3, 4, 5])
def test_fast_paths_match_brute_force(board_size: int) -> None:
    rng = random.Random(1000 + board_size)
    for _ in range(500):
        cards = rng.sample(FULL_DECK, 4 + board_size)
        hole, board = cards[:4], cards[4:]
        expected = min(
            evaluate_cards(*two, *three)
            for two in combinations(hole, 2)
            for three in combinations(board, 3)
        )
        assert high_value("omaha", hole, board) == expected, cards_str(cards)
        assert low_value(hole, board) == brute_low(hole, board), cards_str(cards)
        best_low = best_low_cards(hole, board)
        if best_low is not None:
            assert len(set(best_low) & set(hole)) == 2
            assert len(set(best_low) & set(board)) == 3
            assert low_of_five(best_low) == low_value(hole, board)
        holdem = cards[2:]
        assert high_value("holdem", holdem[:2], holdem[2:]) == evaluate_cards(*holdem)


@pytest.mark.parametrize("board_size", [3, 4, 5])
@pytest.mark.parametrize("game", ["holdem", "omaha", "omaha8"])
def test_high_values_of_a_showdown_are_each_hands_high_value(game: str, board_size: int) -> None:
    """The showdown's one-call evaluation (its fast path on a full board) gives what
    high_value gives hand by hand."""
    rng = random.Random(f"high_values/{game}/{board_size}")
    size = 2 if game == "holdem" else 4
    for _ in range(300):
        players = rng.randint(1, 9)
        cards = rng.sample(FULL_DECK, board_size + size * players)
        board = cards[:board_size]
        holes = [cards[board_size + size * k : board_size + size * (k + 1)] for k in range(players)]
        expected = [high_value(game, hole, board) for hole in holes]
        assert high_values(game, holes, board) == expected


# --- differential tests against pokerkit ---------------------------------------------


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


def ours_order(a: int | None, b: int | None) -> int:
    """-1 if a wins, 0 for a tie, 1 if b wins; values: lower is better, None loses."""
    if a is None or b is None:
        return sign((a is None) - (b is None))
    return sign(a - b)


def pokerkit_order(a: Hand | None, b: Hand | None) -> int:
    """The same for pokerkit hands, where the stronger hand is greater and None loses."""
    if a is None or b is None:
        return sign((a is None) - (b is None))
    return -1 if a > b else 1 if a < b else 0


def differential(game: str, deals: int, seed: int) -> None:
    """Compare our ordering of random hands with pokerkit's.

    Each deal gives hands a and b on one board and b again on a second board, and
    compares a with b on the shared board and across the two boards.
    """
    rng = random.Random(seed)
    hole_size = 2 if game == "holdem" else 4
    pokerkit_high = StandardHighHand if game == "holdem" else OmahaHoldemHand
    lows = 0
    for deal in range(deals):
        cards = rng.sample(FULL_DECK, 2 * hole_size + 10)
        hole_a, hole_b = cards[:hole_size], cards[hole_size : 2 * hole_size]
        board_1, board_2 = cards[-10:-5], cards[-5:]
        hands = [(hole_a, board_1), (hole_b, board_1), (hole_b, board_2)]
        where = f"seed {seed} deal {deal}: " + " | ".join(
            f"{cards_str(h)} on {cards_str(b)}" for h, b in hands
        )
        texts = [(cards_str(h), cards_str(b)) for h, b in hands]
        ours_high = [high_value(game, h, b) for h, b in hands]
        theirs_high = [pokerkit_high.from_game(h, b) for h, b in texts]
        for i, j in ((0, 1), (0, 2)):
            assert ours_order(ours_high[i], ours_high[j]) == pokerkit_order(
                theirs_high[i], theirs_high[j]
            ), where
        if game == "omaha8":
            ours_low = [low_value(h, b) for h, b in hands]
            theirs_low = [OmahaEightOrBetterLowHand.from_game_or_none(h, b) for h, b in texts]
            assert [v is None for v in ours_low] == [t is None for t in theirs_low], where
            lows += sum(v is not None for v in ours_low)
            for i, j in ((0, 1), (0, 2)):
                assert ours_order(ours_low[i], ours_low[j]) == pokerkit_order(
                    theirs_low[i], theirs_low[j]
                ), where
    assert game != "omaha8" or lows > deals // 2  # the low side was really exercised


# `make test`'s share (pokerkit's Omaha evaluation is the slow side); `make verify` deals
# 30,000 of each from a fresh seed.
@pytest.mark.parametrize(("game", "deals"), [("holdem", 3000), ("omaha", 750), ("omaha8", 750)])
def test_ordering_agrees_with_pokerkit(game: str, deals: int) -> None:
    differential(game, deals, seed=20240601)


@pytest.mark.verify
@pytest.mark.parametrize("game", ["holdem", "omaha", "omaha8"])
def test_ordering_agrees_with_pokerkit_long(game: str) -> None:
    differential(game, 30000, seed=random.SystemRandom().randrange(2**32))


def test_high_hand_ranks_match_the_evaluator() -> None:
    """The written-out table of ranks per high value is phevaluator's own order."""
    from tables.engine.evaluator import _high_hand_ranks

    table = _high_hand_ranks()
    assert len(table) == 7462
    for value, ranks in table.items():
        flush = value <= 10 or 323 <= value <= 1599
        # Suits 0,1,2,3,0 in order give equal ranks different suits and never a flush.
        cards = [rank * 4 + (0 if flush else k % 4) for k, rank in enumerate(ranks)]
        assert evaluate_5cards(*cards) == value, (value, ranks)


def test_packed_omaha_low_table_matches_a_fresh_build() -> None:
    """lowtable.py (decoded at import) is exactly what lowhands builds."""
    from tables.engine.lowhands import build_omaha_low, pack_omaha_low
    from tables.engine.lowtable import OMAHA_LOW_PACKED

    table = build_omaha_low()
    assert table == OMAHA_LOW
    assert pack_omaha_low(table) == OMAHA_LOW_PACKED
