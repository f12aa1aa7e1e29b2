"""Machine instructions per hand of our engine, counted by valgrind (``make instructions``).

Wall-clock figures on a shared VM move by several percent from one run to the next;
instruction counts do not, so they show whether a change to the engine made it cheaper.

``python bench/instructions.py`` takes the 300 recorded hands of each game that
``bench/engine.py`` times (seed 1), then runs ``valgrind --tool=callgrind`` twice on a
child that replays them (``start_hand`` then ``apply_in_place``), once and three times
over, and prints the difference per hand: start-up cancels out. Needs ``valgrind``;
takes about a minute.

``python bench/instructions.py --play FILE REPS`` is the child.
"""

import argparse
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tables.engine.config import Game, Structure  # noqa: E402
from tables.engine.state import apply_in_place, start_hand  # noqa: E402

GAMES = {
    "nl-holdem": (Game.HOLDEM, Structure.NL),
    "pl-omaha": (Game.OMAHA, Structure.PL),
    "fl-omaha-hi-lo": (Game.OMAHA8, Structure.FL),
}

HANDS = 300


def record_plain(game: Game, structure: Structure) -> list[tuple[Any, ...]]:
    """The hands ``bench/engine.py`` times (seed 1), as plain values to pickle: config,
    seats, button, deck, actions (the child need not import pokerkit)."""
    # Imported here: bench/engine.py imports pokerkit, which the counted child does not.
    sys.path.insert(0, str(ROOT / "bench"))
    import engine

    return [
        (h.config, h.seats, h.button, h.deck, h.actions)
        for h in engine.record(game, structure, HANDS, 1)
    ]


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
                pickle.dump(record_plain(game, structure), file)
            per_hand = (count(path, 3) - count(path, 1)) // (2 * HANDS)
            print(f"| {name} | {per_hand:,} |")


if __name__ == "__main__":
    main()
