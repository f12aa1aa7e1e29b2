"""Benchmark of the hand evaluators against pokerkit's.

Run ``python bench/evaluator.py [--hands N] [--pokerkit-hands M]``. It deals N random
Omaha hands (4 hole + 5 board cards) once, then times on those same deals our
``high_value("omaha", ...)``, ``low_value`` and ``high_value("holdem", ...)`` (the first
two hole cards) and pokerkit's ``OmahaHoldemHand``, ``OmahaEightOrBetterLowHand`` and
``StandardHighHand`` (on the first M deals only, as pokerkit is slow), and prints the
evaluations per second and the speed-up. Other scripts import ``run``.
"""

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pokerkit import Card, OmahaEightOrBetterLowHand, OmahaHoldemHand, StandardHighHand

from tables.engine.cards import FULL_DECK, cards_str
from tables.engine.evaluator import high_value, low_value

Deal = tuple[Sequence[int], Sequence[int]]


def _rate(evaluate: Callable[..., object], deals: Sequence[tuple[object, object]]) -> float:
    """Return evaluations per second of ``evaluate`` over ``deals``, best of three runs."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for hole, board in deals:
            evaluate(hole, board)
        best = min(best, time.perf_counter() - start)
    return len(deals) / best


def run(hands: int, pokerkit_hands: int = 1000, seed: int = 1) -> list[dict[str, object]]:
    """Time every evaluator on ``hands`` random Omaha deals; one result dict per evaluator.

    Each dict has ``evaluation``, ``hands``, ``ours_per_s``, ``pokerkit_hands``,
    ``pokerkit_per_s`` and ``ratio`` (ours / pokerkit).
    """
    rng = random.Random(seed)
    deals: list[Deal] = []
    for _ in range(hands):
        cards = rng.sample(FULL_DECK, 9)
        deals.append((cards[:4], cards[4:]))
    # pokerkit gets its own parsed cards, so card parsing is not part of its timing.
    pk_deals = [
        (tuple(Card.parse(cards_str(hole))), tuple(Card.parse(cards_str(board))))
        for hole, board in deals[:pokerkit_hands]
    ]
    holdem = [(hole[:2], board) for hole, board in deals]
    pk_holdem = [(hole[:2], board) for hole, board in pk_deals]

    cases: list[tuple[str, float, float]] = [
        (
            "omaha high",
            _rate(lambda hole, board: high_value("omaha", hole, board), deals),
            _rate(OmahaHoldemHand.from_game, pk_deals),
        ),
        (
            "omaha 8 low",
            _rate(low_value, deals),
            _rate(OmahaEightOrBetterLowHand.from_game_or_none, pk_deals),
        ),
        (
            "holdem high",
            _rate(lambda hole, board: high_value("holdem", hole, board), holdem),
            _rate(StandardHighHand.from_game, pk_holdem),
        ),
    ]
    return [
        {
            "evaluation": name,
            "hands": hands,
            "ours_per_s": ours,
            "pokerkit_hands": len(pk_deals),
            "pokerkit_per_s": theirs,
            "ratio": ours / theirs,
        }
        for name, ours, theirs in cases
    ]


def main() -> None:
    """Parse the command line, run the benchmark and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10000, help="random deals (10000)")
    parser.add_argument(
        "--pokerkit-hands", type=int, default=1000, help="deals timed with pokerkit (1000)"
    )
    args = parser.parse_args()
    results = run(args.hands, args.pokerkit_hands)
    print(f"{'evaluation':<12} {'ours/s':>12} {'pokerkit/s':>12} {'ratio':>8}")
    for row in results:
        print(
            f"{row['evaluation']:<12} {row['ours_per_s']:>12,.0f} "
            f"{row['pokerkit_per_s']:>12,.0f} {row['ratio']:>7,.0f}x"
        )


if __name__ == "__main__":
    main()
