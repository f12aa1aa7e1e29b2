"""Hand values for showdown: high hands for every game, 8-or-better lows for Omaha Hi-Lo.

The rules are RULES.md section 1. Everywhere a *lower value is a better hand* and equal
hands get equal values, so pots go to the minimum and ties split:

- High values are phevaluator's ranks, 1 (royal flush) to 7462 (7-5-4-3-2 offsuit).
  Hold'em plays the best five of hole and board cards in any combination; Omaha and
  Omaha Hi-Lo play exactly two hole cards with exactly three board cards.
- Low values come from ``lowhands``: 1 (5-4-3-2-A, the wheel) to 56 (8-7-6-5-4), or
  ``None`` when no qualifying low can be made from exactly two hole and three board cards.

Cards are the int ids of ``cards.py``, which are phevaluator's own ids. The hot-path
functions ``high_value`` and ``low_value`` trust their input: the cards must be distinct
valid ids (the dealer's deck guarantees it). The ``best_*_cards`` and ``describe_*``
helpers are for showdown display and hand histories, not for deciding pots.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from itertools import combinations

# The native evaluators behind phevaluator's public functions, called directly: the
# public wrappers only convert each card with Card.to_id, which costs 5x the evaluation
# itself. tests/engine/test_evaluator.py checks both agree.
from phevaluator import _pheval

from tables.engine.cards import RANKS
from tables.engine.lowhands import LOW_BIT, LOW_MASKS, OMAHA_LOW

GAMES = ("holdem", "omaha", "omaha8")

# Worst value of each high category (phevaluator's category boundaries).
STRAIGHT_FLUSH_WORST = 10
FOUR_OF_A_KIND_WORST = 166
FULL_HOUSE_WORST = 322
FLUSH_WORST = 1599
STRAIGHT_WORST = 1609
THREE_OF_A_KIND_WORST = 2467
TWO_PAIR_WORST = 3325
PAIR_WORST = 6185
HIGH_CARD_WORST = 7462

_ACE = 12
_RANK_NAMES: tuple[str, ...] = (
    "Two",
    "Three",
    "Four",
    "Five",
    "Six",
    "Seven",
    "Eight",
    "Nine",
    "Ten",
    "Jack",
    "Queen",
    "King",
    "Ace",
)
_RANK_PLURALS = tuple(name + ("es" if name == "Six" else "s") for name in _RANK_NAMES)

_EVALUATE_BY_COUNT: dict[int, Callable[..., int]] = {
    5: _pheval.evaluate_5cards,
    6: _pheval.evaluate_6cards,
    7: _pheval.evaluate_7cards,
}
_evaluate_5cards: Callable[..., int] = _pheval.evaluate_5cards
_evaluate_7cards: Callable[..., int] = _pheval.evaluate_7cards
_evaluate_omaha: Callable[..., int] = _pheval.evaluate_omaha_cards


def _holdem_high(hole: Sequence[int], board: Sequence[int]) -> int:
    """Return the value of the best five of the hole and board cards together."""
    cards = (*hole, *board)
    evaluate = _EVALUATE_BY_COUNT.get(len(cards))
    if evaluate is None:
        raise ValueError(f"hold'em needs 5 to 7 cards in all, got {len(cards)}")
    return evaluate(*cards)


def _omaha_high(hole: Sequence[int], board: Sequence[int]) -> int:
    """Return the value of the best exactly-two-hole, exactly-three-board hand."""
    if len(hole) == 4 and len(board) == 5:
        return _evaluate_omaha(*board, *hole)
    return min(_evaluate_5cards(*cards) for cards in _omaha_hands(hole, board))


_HIGH_BY_GAME: dict[str, Callable[[Sequence[int], Sequence[int]], int]] = {
    "holdem": _holdem_high,
    "omaha": _omaha_high,
    "omaha8": _omaha_high,
}


def high_function(game: str) -> Callable[[Sequence[int], Sequence[int]], int]:
    """Return the high evaluator of ``game``, refusing unknown games."""
    evaluate = _HIGH_BY_GAME.get(game)
    if evaluate is None:
        raise ValueError(f"unknown game {game!r}: expected one of {GAMES}")
    return evaluate


def high_values(game: str, holes: Iterable[Sequence[int]], board: Sequence[int]) -> list[int]:
    """``high_value(game, hole, board)`` of each of ``holes`` against one board, as a
    showdown asks: on a full board the evaluator is chosen once for all of them.

    Every hole must have the game's number of cards (2 in hold'em, 4 in Omaha).
    """
    evaluate = high_function(game)
    if len(board) == 5:
        if evaluate is _holdem_high:
            return [_evaluate_7cards(*hole, *board) for hole in holes]
        return [_evaluate_omaha(*board, *hole) for hole in holes]
    return [evaluate(hole, board) for hole in holes]


def _omaha_hands(hole: Sequence[int], board: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Yield every five-card hand of exactly two hole and exactly three board cards."""
    if len(hole) < 2 or len(board) < 3:
        raise ValueError(
            f"Omaha needs at least 2 hole and 3 board cards, got {len(hole)} and {len(board)}"
        )
    for two in combinations(hole, 2):
        for three in combinations(board, 3):
            yield two + three


def high_value(game: str, hole: Sequence[int], board: Sequence[int]) -> int:
    """Return the value of the best high hand; lower is better, 1 is a royal flush.

    ``game`` is ``"holdem"`` (best five of hole and board, the board may play),
    ``"omaha"`` or ``"omaha8"`` (exactly two hole cards and exactly three board cards).
    """
    return high_function(game)(hole, board)


def low_value(hole: Sequence[int], board: Sequence[int]) -> int | None:
    """Return the value of the best Omaha 8-or-better low, or ``None`` if none qualifies.

    Lower is better: 1 is the wheel (5-4-3-2-A), 56 is 8-7-6-5-4. The low uses exactly
    two hole cards and exactly three board cards, all of different ranks from ace to
    eight, independently of the cards the high hand uses.
    """
    bits = LOW_BIT
    hole_mask = 0
    for card in hole:
        hole_mask |= bits[card]
    board_mask = 0
    for card in board:
        board_mask |= bits[card]
    return OMAHA_LOW[hole_mask << 8 | board_mask]


def best_high_cards(game: str, hole: Sequence[int], board: Sequence[int]) -> tuple[int, ...]:
    """Return the five cards of the best high hand, most significant first.

    Groups come before kickers (K K K 7 7, Q Q 9 5 2) and a five-high straight ends with
    its ace (5 4 3 2 A). Among equal hands the first found is returned.
    """
    high_function(game)  # refuses an unknown game
    if game == "holdem":
        candidates: Iterator[tuple[int, ...]] = combinations((*hole, *board), 5)
    else:
        candidates = _omaha_hands(hole, board)
    best = min(candidates, key=lambda cards: _evaluate_5cards(*cards))
    counts = Counter(card >> 2 for card in best)
    ordered = sorted(best, key=lambda card: (counts[card >> 2], card >> 2, card), reverse=True)
    if _evaluate_5cards(*best) in (STRAIGHT_FLUSH_WORST, STRAIGHT_WORST):
        ordered.append(ordered.pop(0))
    return tuple(ordered)


def best_low_cards(hole: Sequence[int], board: Sequence[int]) -> tuple[int, ...] | None:
    """Return the five cards of the best Omaha 8-or-better low, highest first, or ``None``.

    The ace counts low and comes last (7 5 4 3 A).
    """
    best: tuple[int, ...] | None = None
    best_mask = 0
    for cards in _omaha_hands(hole, board):
        mask = 0
        for card in cards:
            mask |= LOW_BIT[card]
        if mask.bit_count() == 5 and (best is None or mask < best_mask):
            best, best_mask = cards, mask
    if best is None:
        return None
    return tuple(sorted(best, key=lambda card: LOW_BIT[card], reverse=True))


@cache
def _high_hand_ranks() -> dict[int, tuple[int, ...]]:
    """Map every high value to its five ranks, groups first.

    Written out in phevaluator's order, best first, category by category (the test
    ``test_high_hand_ranks_match_the_evaluator`` evaluates every entry): ten times
    cheaper than evaluating every rank combination, which ``phh_replay`` paid at start-up.
    """
    down = range(12, -1, -1)
    tops = [(t, t - 1, t - 2, t - 3, t - 4) for t in range(12, 3, -1)]
    straights = [*tops, (_ACE, 3, 2, 1, 0)]
    straight_set = set(straights)
    no_pair = [r for r in combinations(down, 5) if r not in straight_set]
    out: list[tuple[int, ...]] = list(straights)  # straight flushes
    out += [(q, q, q, q, k) for q in down for k in down if k != q]
    out += [(t, t, t, p, p) for t in down for p in down if p != t]
    out += no_pair  # flushes
    out += straights
    for t in down:
        out += [(t, t, t, *k) for k in combinations([r for r in down if r != t], 2)]
    for high, low in combinations(down, 2):
        out += [(high, high, low, low, k) for k in down if k not in (high, low)]
    for p in down:
        out += [(p, p, *k) for k in combinations([r for r in down if r != p], 3)]
    out += no_pair  # high cards
    return dict(enumerate(out, start=1))


def _straight_top(ranks: tuple[int, ...]) -> str:
    """Return the name of a straight's top card; a wheel (A-5-4-3-2) is Five high."""
    return _RANK_NAMES[ranks[1] if ranks[0] == _ACE and ranks[1] == 3 else ranks[0]]


@cache  # every shown hand is described; the same words come back from the cache
def describe_high(value: int) -> str:
    """Return a high value in words, such as "a full house, Kings full of Sevens"."""
    if not 1 <= value <= HIGH_CARD_WORST:
        raise ValueError(f"invalid high value {value!r}: expected 1 to {HIGH_CARD_WORST}")
    ranks = _high_hand_ranks()[value]
    top = ranks[0]
    if value == 1:
        return "a royal flush"
    if value <= STRAIGHT_FLUSH_WORST:
        return f"a straight flush, {_straight_top(ranks)} high"
    if value <= FOUR_OF_A_KIND_WORST:
        return f"four of a kind, {_RANK_PLURALS[top]}"
    if value <= FULL_HOUSE_WORST:
        return f"a full house, {_RANK_PLURALS[top]} full of {_RANK_PLURALS[ranks[3]]}"
    if value <= FLUSH_WORST:
        return f"a flush, {_RANK_NAMES[top]} high"
    if value <= STRAIGHT_WORST:
        return f"a straight, {_straight_top(ranks)} high"
    if value <= THREE_OF_A_KIND_WORST:
        return f"three of a kind, {_RANK_PLURALS[top]}"
    if value <= TWO_PAIR_WORST:
        return f"two pair, {_RANK_PLURALS[top]} and {_RANK_PLURALS[ranks[2]]}"
    if value <= PAIR_WORST:
        return f"a pair of {_RANK_PLURALS[top]}"
    return f"high card {_RANK_NAMES[top]}"


@cache
def describe_low(value: int) -> str:
    """Return a low value as its ranks from the highest down: "7,5,4,3,A".

    The best low reads "5,4,3,2,A (a wheel)".
    """
    if not 1 <= value <= len(LOW_MASKS):
        raise ValueError(f"invalid low value {value!r}: expected 1 to {len(LOW_MASKS)}")
    mask = LOW_MASKS[value - 1]
    # Bit 0 is the ace, bit b >= 1 the rank character RANKS[b - 1].
    text = ",".join(
        "A" if bit == 0 else RANKS[bit - 1] for bit in range(7, -1, -1) if mask >> bit & 1
    )
    return text + " (a wheel)" if value == 1 else text
