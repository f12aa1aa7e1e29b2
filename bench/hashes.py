"""Fingerprints of what the engine produces on the bench's recorded hands.

A refactoring of the engine must not change a single event, state or PHH byte. This
script replays the hands ``bench/engine.py`` records (``--hands`` per game, seed 1, the
four games of its PHH part) and prints one SHA-256 per kind of output:

* ``events``: every event's ``to_dict()``, with ``type`` and ``visible_to`` of each seat
  and of a spectator, in order;
* ``states``: ``to_dict()`` of the state after the start and after every action, and
  that it survives ``from_dict`` (the JSON form stored in the database);
* ``views``: ``view(seat)`` for each seat and a spectator, ``legal_actions().to_dict()``,
  ``can`` of a few actions and the error ``verify`` raises for each, after every step;
* ``phh``: ``export_phh`` of every finished hand;
* ``phh_replay``: the files and the standard output of ``manage.py phh_replay`` run on
  ``--files`` PHH files written as ``bench/engine.py`` writes them (with ``--out``, with
  ``--jobs 1``, and to standard output).

Run it before and after a change and compare the lines: ``python bench/hashes.py``.
"""

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import engine as bench  # noqa: E402  (bench/engine.py, a sibling script)

from tables.engine.actions import Action, ActionKind  # noqa: E402
from tables.engine.state import HandState, apply, start_hand  # noqa: E402
from tables.formats.phh import export_phh  # noqa: E402


class Digest:
    """A SHA-256 fed with JSON values, one per line."""

    def __init__(self) -> None:
        self.sha = hashlib.sha256()

    def add(self, value: Any) -> None:
        """Feed ``value`` as canonical JSON."""
        self.sha.update(json.dumps(value, sort_keys=True).encode())
        self.sha.update(b"\n")

    def hexdigest(self) -> str:
        """The digest so far."""
        return self.sha.hexdigest()


def probe(state: HandState) -> list[Any]:
    """The views, options and ``can`` answers of ``state`` as JSON values."""
    out: list[Any] = [state.view(seat) for seat in (*state.seats, None)]
    if state.over:
        return out
    out.append(state.legal_actions().to_dict())
    actor = state.legal_actions().seat
    tries = [
        Action.fold(actor),
        Action.check(actor),
        Action.call(actor),
        Action(seat=actor, kind=ActionKind.BET_RAISE, to=state.to_match + 1),
        Action(seat=actor, kind=ActionKind.BET_RAISE, to=10**9),
    ]
    out.append([state.can(action) for action in tries])
    out.append([refusal(state, action) for action in tries])
    return out


def refusal(state: HandState, action: Action) -> list[str] | None:
    """The class and message of the error ``verify`` raises for ``action`` (None: legal)."""
    try:
        state.verify(action)
    except ValueError as exc:
        return [type(exc).__name__, str(exc)]
    return None


def hash_hands(hands_per_game: int, seed: int) -> dict[str, str]:
    """The ``events``, ``states``, ``views`` and ``phh`` digests of the recorded hands."""
    digests = {name: Digest() for name in ("events", "states", "views", "phh")}
    for _, game, structure in bench.PHH_GAMES:
        for hand in bench.record(game, structure, hands_per_game, seed):
            state, events = start_hand(hand.config, hand.seats, button=hand.button, deck=hand.deck)
            steps = [(state, events)]
            for action in hand.actions:
                state, more = apply(state, action)
                steps.append((state, more))
            for state, more in steps:
                for event in more:
                    visible = [event.visible_to(s) for s in (*state.seats, None)]
                    digests["events"].add([event.type, event.to_dict(), visible])
                saved = state.to_dict()
                if HandState.from_dict(json.loads(json.dumps(saved))).to_dict() != saved:
                    raise SystemExit(f"{state.hand_id}: the state does not survive JSON")
                digests["states"].add(saved)
                digests["views"].add(probe(state))
            everything = [event for _, more in steps for event in more]
            digests["phh"].add(export_phh(state, everything))
    return {name: digest.hexdigest() for name, digest in digests.items()}


def hash_tree(folder: Path) -> str:
    """One digest of every file under ``folder``: names and bytes."""
    digest = Digest()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.add([str(path.relative_to(folder)), path.read_text()])
    return digest.hexdigest()


def hash_output(text: str, tmp: str) -> str:
    """The digest of a command's output, the temporary folder's name taken out."""
    return hashlib.sha256(text.replace(tmp, "TMP").encode()).hexdigest()


def hash_replay(files: int, seed: int) -> dict[str, str]:
    """Digests of ``phh_replay``'s output files and standard output."""
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in"
        src.mkdir()
        bench.write_phh_files(src, files, seed)
        out["phh_files"] = hash_tree(src)
        replay = [sys.executable, "manage.py", "phh_replay", str(src)]
        for name, extra in (("phh_replay", []), ("phh_replay_jobs1", ["--jobs", "1"])):
            target = Path(tmp) / name
            run = subprocess.run(
                [*replay, "--out", str(target), *extra],
                cwd=ROOT,
                check=True,
                capture_output=True,
                text=True,
            )
            out[name] = hash_tree(target)
            out[f"{name}_stdout"] = hash_output(run.stdout, tmp)
        run = subprocess.run(replay, cwd=ROOT, check=True, capture_output=True, text=True)
        out["phh_replay_to_stdout"] = hash_output(run.stdout, tmp)
    return out


def main() -> None:
    """Print ``name digest`` lines."""
    args = bench.arguments(__doc__.splitlines()[0])
    digests = {**hash_hands(args.hands, args.seed), **hash_replay(args.files, args.seed)}
    for name, digest in digests.items():
        print(f"{name} {digest}")


if __name__ == "__main__":
    main()
