"""Machine instructions per hand of our engine, counted by valgrind (``make instructions``).

Wall-clock figures on a shared VM move by several percent from one run to the next;
instruction counts do not, so they show whether a change to the engine made it cheaper.

``python bench/instructions.py`` records 300 random hands of each game of
``bench/engine.py`` (seats, deck and actions from our engine, seed 1), then runs
``valgrind --tool=callgrind`` twice on a child that replays them (``start_hand`` then
``apply_in_place``), once and three times over, and prints the difference per hand:
start-up and recording cancel out. Needs ``valgrind``; takes about a minute.

``python bench/instructions.py --play GAME REPS`` is the child.
"""

import argparse
import pickle
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tables.engine.actions import Action, ActionKind  # noqa: E402
from tables.engine.config import Game, Structure, TableConfig  # noqa: E402
from tables.engine.deck import shuffled_deck  # noqa: E402
from tables.engine.state import SeatEntry, apply_in_place, start_hand  # noqa: E402
from tables.engine.testing import random_action  # noqa: E402

GAMES = {
    "nl-holdem": (Game.HOLDEM, Structure.NL),
    "pl-omaha": (Game.OMAHA, Structure.PL),
    "fl-omaha-hi-lo": (Game.OMAHA8, Structure.FL),
}
HANDS = 300
Hand = tuple[TableConfig, tuple[SeatEntry, ...], int, tuple[int, ...], list[Action]]


def record(game: Game, structure: Structure, seed: int = 1) -> list[Hand]:
    """``HANDS`` random hands as bench/engine.py deals them (without pokerkit's check)."""
    rng = random.Random(seed)
    config = TableConfig(game=game, structure=structure, big_blind=100, rake_percent=0)
    hands: list[Hand] = []
    while len(hands) < HANDS:
        n = rng.randint(2, 9)
        seats = tuple(
            SeatEntry(seat=s, player=f"p{s}", stack=rng.choice((rng.randint(300, 3000), 20_000)))
            for s in range(1, n + 1)
        )
        button = rng.randint(1, n)
        deck = tuple(shuffled_deck(rng))
        state, _ = start_hand(config, seats, button=button, deck=deck)
        actions: list[Action] = []
        while not state.over:
            action = random_action(state, rng)
            if action.kind is not ActionKind.TIMEOUT:
                actions.append(action)
                apply_in_place(state, action)
        hands.append((config, seats, button, deck, actions))
    return hands


def play(path: str, reps: int) -> None:
    """Replay the pickled hands ``reps`` times (the child valgrind counts)."""
    with open(path, "rb") as file:
        hands = pickle.load(file)  # noqa: S301 - written by this script just before
    for _ in range(reps):
        for config, seats, button, deck, actions in hands:
            state, _ = start_hand(config, seats, button=button, deck=deck)
            for action in actions:
                apply_in_place(state, action)


def count(path: str, reps: int) -> int:
    """Instructions valgrind counts for a child replaying the hands ``reps`` times."""
    child = [sys.executable, __file__, "--play", path, str(reps)]
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *child],
        capture_output=True,
        text=True,
        check=True,
    )
    match = re.search(r"Collected : (\d+)", run.stderr)
    if match is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{run.stderr}")
    return int(match.group(1))


def main() -> None:
    """Print the instructions per hand of each game."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--play", nargs=2, metavar=("FILE", "REPS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.play:
        play(args.play[0], int(args.play[1]))
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed")
    print("| game | instructions per hand |")
    print("|---|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (game, structure) in GAMES.items():
            path = f"{tmp}/{name}.pickle"
            with open(path, "wb") as file:
                pickle.dump(record(game, structure), file)
            per_hand = (count(path, 3) - count(path, 1)) // (2 * HANDS)
            print(f"| {name} | {per_hand:,} |")


if __name__ == "__main__":
    main()
