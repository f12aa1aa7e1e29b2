"""Benchmark of the hand engine and of ``phh_replay`` against pokerkit (``make bench``).

Run ``python bench/engine.py [--hands N] [--files M]``. It prints one markdown table the
README can include:

* **Hands.** For each game (no-limit hold'em, pot-limit Omaha, fixed-limit Omaha hi-lo)
  it first records N random hands (seats, deck, actions chosen by our engine and checked
  to be playable by pokerkit), then times replaying exactly those hands in our engine
  and in pokerkit (a state built by ``tests/engine/pokerkit_adapter.py``, hole and board
  cards dealt, the same actions). Ours is timed twice: ``start_hand`` + ``apply_in_place``
  (the state changed in place, as pokerkit's is, and as the table services and
  ``phh_replay`` play), and ``start_hand`` + ``apply`` (a new state after every action,
  the old one kept).
  Both sides do the same work: post, deal, take the actions, settle with a showdown
  evaluation when there is one; each gets its cards in its own form, decoded before the
  clock starts (ints for us, pokerkit ``Card`` objects for pokerkit). Rake is off on both.
  The three take turns, five runs each, and the best run counts; each run is preceded by
  an untimed replay of other hands, so that a run of ours (a few milliseconds) does not
  start with the cold caches left by pokerkit's run before it.
* **Evaluators.** The figures of ``bench/evaluator.py``'s ``run``.
* **PHH replay.** M PHH files (a mix of the three games plus fixed-limit hold'em) are
  written to a temporary folder (in memory, on a tmpfs, when the system has one), then
  two subprocesses are timed, start-up included: ``manage.py phh_replay DIR --out OUT``
  and a ``python -c`` that imports pokerkit and loads (``HandHistory.load``) and replays
  every file. Start-up is part of both times, as
  it is for whoever runs them (``manage.py phh_replay`` skips Django's set-up: it needs
  none). Ours runs with its default ``--jobs`` (the CPUs) and once more with
  ``--jobs 1``, and once more with its ``--out`` folder on disk; pokerkit's loop is one
  process. Ours also writes every replayed file.
  Each command runs three times, in turn, and its best time counts. Our sources are
  byte-compiled first, as pip compiled pokerkit's when it installed it.
"""

import argparse
import compileall
import random
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pokerkit import Card, State

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import evaluator  # noqa: E402  (bench/evaluator.py, a sibling script)

from tables.engine.actions import Action, ActionKind  # noqa: E402
from tables.engine.cards import cards_str  # noqa: E402
from tables.engine.config import Game, Structure, TableConfig  # noqa: E402
from tables.engine.deck import shuffled_deck  # noqa: E402
from tables.engine.state import (  # noqa: E402
    HandState,
    SeatEntry,
    apply,
    apply_in_place,
    start_hand,
)
from tables.engine.testing import random_action  # noqa: E402
from tables.formats.phh import export_phh  # noqa: E402
from tests.engine import pokerkit_adapter as pka  # noqa: E402

GAMES = [
    ("NL hold'em", Game.HOLDEM, Structure.NL),
    ("PL Omaha", Game.OMAHA, Structure.PL),
    ("FL Omaha hi-lo", Game.OMAHA8, Structure.FL),
]
PHH_GAMES = [*GAMES, ("FL hold'em", Game.HOLDEM, Structure.FL)]
#: Hands replayed, untimed, before each timed run (see ``rates``).
WARM_HANDS = 30


@dataclass(frozen=True)
class Recorded:
    """One hand to replay: its set-up and our engine's actions, with pokerkit's set-up
    (stacks and hole cards in pokerkit's player order, the board) ready made."""

    config: TableConfig
    seats: tuple[SeatEntry, ...]
    button: int
    deck: tuple[int, ...]
    actions: tuple[Action, ...]
    pk_stacks: tuple[int, ...]
    pk_holes: tuple[tuple[Card, ...], ...]
    pk_board: tuple[Card, ...]
    straddle: bool


def record(game: Game, structure: Structure, hands: int, seed: int) -> list[Recorded]:
    """``hands`` random hands that both engines play the same way."""
    rng = random.Random(seed)
    config = TableConfig(game=game, structure=structure, big_blind=100, rake_percent=0)
    out: list[Recorded] = []
    while len(out) < hands:
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
            if action.kind is ActionKind.TIMEOUT:
                continue
            actions.append(action)
            state, _ = apply(state, action)
        start, _ = start_hand(config, seats, button=button, deck=deck)
        order = pka.phh_order(start)
        hand = Recorded(
            config,
            seats,
            button,
            deck,
            tuple(actions),
            pk_stacks=tuple(start.starting_stacks[i] for i in order),
            pk_holes=tuple(tuple(Card.parse(cards_str(start.hole[i]))) for i in order),
            pk_board=tuple(Card.parse(cards_str(pka.board_of(start)))),
            straddle=start.straddler is not None,
        )
        try:  # keep only hands pokerkit plays the same (see test_differential.py)
            pk = play_pokerkit(hand)
        except ValueError:
            continue
        if sorted(pk.stacks) == sorted(state.stacks):
            out.append(hand)
    return out


def play_ours(hand: Recorded) -> HandState:
    """Replay a recorded hand in our engine, changing one state in place."""
    state, _ = start_hand(hand.config, hand.seats, button=hand.button, deck=hand.deck)
    for action in hand.actions:
        apply_in_place(state, action)
    return state


def play_ours_pure(hand: Recorded) -> HandState:
    """Replay a recorded hand in our engine, a new state after every action."""
    state, _ = start_hand(hand.config, hand.seats, button=hand.button, deck=hand.deck)
    for action in hand.actions:
        state, _ = apply(state, action)
    return state


def play_pokerkit(hand: Recorded) -> pka.RulesRakeState:
    """Replay a recorded hand in pokerkit, dealing the same cards.

    (Until this change it also ran our ``start_hand`` to build pokerkit's set-up, timed
    on pokerkit's side; the set-up is now made when the hand is recorded.)
    """
    pk = pka.new_state(hand.config, hand.pk_stacks, straddle=hand.straddle)
    for k, cards in enumerate(hand.pk_holes):
        pk.deal_hole(cards, k)
    board = hand.pk_board
    _deal_due_board(pk, board)
    for action in hand.actions:
        pka.play(pk, str(action.kind), action.to)
        _deal_due_board(pk, board)
    # pokerkit may still ask for a check our engine does not need (test_differential.py).
    while pk.status and pk.actor_index is not None and pk.checking_or_calling_amount == 0:
        pk.check_or_call()
        _deal_due_board(pk, board)
    if pk.status:
        raise ValueError("pokerkit's hand is not over")
    return pk


def _deal_due_board(pk: State, board: tuple[Card, ...]) -> None:
    """``pka.deal_due_board`` with the board's cards already parsed."""
    while pk.status and pk.can_deal_board():
        dealt = sum(len(cards) for cards in pk.board_cards)
        pk.deal_board(board[dealt : dealt + pk.street.board_dealing_count])


def rates(
    plays: Sequence[Callable[[Recorded], object]], hands: list[Recorded], warm: list[Recorded]
) -> list[float]:
    """Hands per second of each of ``plays`` over ``hands``: the best of five runs, the
    plays taking turns so that a busy spell of the machine slows them alike.

    Before each timed run the play replays ``warm`` (other hands, untimed): a run of
    ours lasts a few milliseconds and would otherwise partly measure the cold caches
    left by the pokerkit run before it (about 3% of ours; pokerkit's runs are long).
    """
    best = [float("inf")] * len(plays)
    for _ in range(5):
        for k, play in enumerate(plays):
            for hand in warm:
                play(hand)
            start = time.perf_counter()
            for hand in hands:
                play(hand)
            best[k] = min(best[k], time.perf_counter() - start)
    return [len(hands) / t for t in best]


def write_phh_files(folder: Path, count: int, seed: int) -> None:
    """``count`` PHH files of recorded hands, the games in turn."""
    per_game = -(-count // len(PHH_GAMES))
    written = 0
    for k, (_, game, structure) in enumerate(PHH_GAMES):
        for j, hand in enumerate(record(game, structure, per_game, seed + k)):
            if written == count:
                return
            state, events = start_hand(hand.config, hand.seats, button=hand.button, deck=hand.deck)
            for action in hand.actions:
                state, more = apply(state, action)
                events.extend(more)
            (folder / f"{k}-{j:05d}.phh").write_text(export_phh(state, events))
            written += 1


POKERKIT_REPLAY = """
import sys, warnings
from pathlib import Path
from pokerkit import HandHistory
warnings.simplefilter("ignore")
for path in sorted(Path(sys.argv[1]).glob("*.phh")):
    with path.open("rb") as fp:
        for state in HandHistory.load(fp):
            pass
"""


def timed(command: list[str]) -> float:
    """Wall-clock seconds of a subprocess (which must succeed)."""
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def arguments(description: str) -> argparse.Namespace:
    """The command line of the bench's scripts: hands per game, PHH files, seed."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--hands", type=int, default=300, help="recorded hands per game")
    parser.add_argument("--files", type=int, default=1500, help="PHH files to replay")
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args()


def main() -> None:
    """Run every part and print the markdown table."""
    args = arguments(__doc__.splitlines()[0])
    warnings.simplefilter("ignore")  # pokerkit's notes on cash-game folds
    rows: list[tuple[str, str, str, str]] = []
    for name, game, structure in GAMES:
        hands = record(game, structure, args.hands, args.seed)
        warm = record(game, structure, WARM_HANDS, args.seed + 1)  # other hands
        ours, pure, theirs = rates((play_ours, play_ours_pure, play_pokerkit), hands, warm)
        rows.append((f"{name}: hands/s", f"{ours:,.0f}", f"{theirs:,.0f}", f"{ours / theirs:.0f}x"))
        rows.append(
            (
                f"{name}: hands/s with `apply`",
                f"{pure:,.0f}",
                f"{theirs:,.0f}",
                f"{pure / theirs:.0f}x",
            )
        )
    for row in evaluator.run(10_000, 1_000, args.seed):
        ours, theirs = float(row["ours_per_s"]), float(row["pokerkit_per_s"])  # type: ignore[arg-type]
        rows.append(
            (
                f"evaluator {row['evaluation']}: /s",
                f"{ours:,.0f}",
                f"{theirs:,.0f}",
                f"{ours / theirs:.0f}x",
            )
        )
    # The files and the --out folders live in memory where the system has a tmpfs, so
    # that the figures are of the replays, not of this machine's disk (1,500 new files
    # cost ours 0.5-1 s on the development VM's ext4); one more run writes to disk.
    shm = Path("/dev/shm")  # noqa: S108 - a private TemporaryDirectory is made in it
    memory = str(shm) if shm.is_dir() else None
    with tempfile.TemporaryDirectory(dir=memory) as tmp, tempfile.TemporaryDirectory() as disk:
        src = Path(tmp) / "in"
        src.mkdir()
        write_phh_files(src, args.files, args.seed)
        # pip byte-compiled pokerkit when it installed it; compile ours the same way, so
        # that neither side compiles its sources at start-up (with PYTHONDONTWRITEBYTECODE
        # set, as on our machines, every run would otherwise recompile ours, only ours).
        compileall.compile_dir(ROOT / "tables", quiet=1)
        python = sys.executable
        replay = [python, "manage.py", "phh_replay", str(src), "--out"]
        commands = {
            "ours": lambda run: [*replay, f"{tmp}/out-{run}"],
            "ours, 1 job": lambda run: [*replay, f"{tmp}/out1-{run}", "--jobs=1"],
            "ours, to disk": lambda run: [*replay, f"{disk}/out-{run}"],
            "pokerkit": lambda run: [python, "-c", POKERKIT_REPLAY, str(src)],
        }
        best = dict.fromkeys(commands, float("inf"))
        for run in range(3):  # best of three, taking turns; a fresh --out folder each time
            for name, command in commands.items():
                best[name] = min(best[name], timed(command(run)))
    theirs_s = best["pokerkit"]
    where = "in memory" if memory else "on disk"
    for label, ours_s in (
        (f"phh_replay, {args.files} files {where}: s (with start-up)", best["ours"]),
        ("phh_replay --jobs 1, same files: s (with start-up)", best["ours, 1 job"]),
        ("phh_replay, same files, --out on disk: s (with start-up)", best["ours, to disk"]),
    ):
        rows.append((label, f"{ours_s:.2f}", f"{theirs_s:.2f}", f"{theirs_s / ours_s:.1f}x"))
    print("| measure | ours | pokerkit | ours vs pokerkit |")
    print("|---|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
