"""``phh_replay FILE_OR_DIR... [--out DIR] [--jobs N]``: replay PHH hand histories.

Each ``.phh`` file (directories are searched recursively) is played through our engine
with its own cards and rake settings (:func:`tables.engine.phh.replay_phh`); the hand is
written back as PHH with the finishing stacks, winnings and rake the engine computed, to
``--out`` (same file name; a clash inside one run gets its parent folders prefixed) or,
without ``--out``, to standard output. A file the engine refuses is reported with the
action's index and the engine's reason, and the run exits with status 1.

Replaying needs neither Django nor a database, so ``manage.py phh_replay ...`` calls
:func:`main` before setting Django up (a second or more of start-up saved). The
management command ``tables/management/commands/phh_replay.py`` wraps
:func:`replay_files` for ``call_command`` and ``manage.py help``.

``--jobs N`` replays the files in N processes (default: the CPUs this process may use;
1 replays in this process). Results are written by this process in file order, so the
output is the same whatever N is.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from tables.engine.phh import PhhError, PhhReplayError, replay_phh

#: Below this many files per job, the processes cost more than they save.
MIN_FILES_PER_JOB = 8


class PhhCliError(Exception):
    """A usage error (a path that does not exist)."""


def default_jobs() -> int:
    """The number of CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def phh_files(paths: Sequence[Path]) -> list[Path]:
    """Every ``.phh`` file named or found under the named directories, sorted."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(path.rglob("*.phh")))
        elif path.exists():
            files.append(path)
        else:
            raise PhhCliError(f"{path}: no such file or directory")
    return files


def replay_file(path: Path) -> tuple[str, str]:
    """``("ok", phh_text)`` or ``("error", message)`` for one file."""
    try:
        _, text = replay_phh(path.read_text(encoding="utf-8"))
    except PhhReplayError as exc:
        return "error", f"{path}: illegal action {exc.index} ({exc.action!r}): {exc.reason}"
    except (PhhError, OSError, UnicodeDecodeError) as exc:
        return "error", f"{path}: {exc}"
    return "ok", text


def _results(files: list[Path], jobs: int) -> Iterator[tuple[str, str]]:
    """:func:`replay_file` of every file, in order, in up to ``jobs`` processes."""
    jobs = min(jobs, len(files) // MIN_FILES_PER_JOB)
    if jobs <= 1:
        yield from map(replay_file, files)
        return
    # Forked workers start with the engine already imported; chunks keep the pipe quiet.
    import multiprocessing  # here: --jobs 1 saves importing it (a tenth of the start-up)

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    with multiprocessing.get_context(method).Pool(jobs) as pool:
        yield from pool.imap(replay_file, files, chunksize=max(1, len(files) // (jobs * 4)))


def replay_files(
    files: list[Path], out: Path | None, *, jobs: int, stdout: TextIO, stderr: TextIO
) -> int:
    """Replay ``files`` (see the module docstring); return how many failed."""
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    failed = 0
    used: set[str] = set()
    for path, (outcome, text) in zip(files, _results(files, jobs), strict=True):
        if outcome == "error":
            failed += 1
            stderr.write(text + "\n")
            continue
        if out is None:
            stdout.write(f"# {path}\n{text}")
            continue
        name = path.name if path.name not in used else "_".join(path.parts[-3:])
        used.add(name)
        (out / name).write_text(text, encoding="utf-8")
    stderr.write(f"{len(files) - failed} of {len(files)} hands replayed\n")
    return failed


def parser() -> argparse.ArgumentParser:
    """The command line of ``phh_replay``."""
    p = argparse.ArgumentParser(
        prog="manage.py phh_replay",
        description="Replay PHH hand histories through the engine and write the engine's result.",
    )
    p.add_argument("paths", nargs="+", type=Path, help="PHH files or directories")
    p.add_argument("--out", type=Path, help="directory for the replayed files")
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="processes replaying files (default: the number of CPUs)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``phh_replay`` with ``argv`` (the arguments after the command name)."""
    args = parser().parse_args(argv)
    jobs = default_jobs() if args.jobs is None else max(1, args.jobs)
    try:
        files = phh_files(args.paths)
    except PhhCliError as exc:
        sys.stderr.write(f"CommandError: {exc}\n")  # as Django's command reports it
        return 1
    failed = replay_files(files, args.out, jobs=jobs, stdout=sys.stdout, stderr=sys.stderr)
    if failed:
        sys.stderr.write(f"CommandError: {failed} file(s) could not be replayed\n")
        return 1
    return 0


def runs_without_django(argv: Sequence[str]) -> bool:
    """True when :func:`main` can run ``argv`` itself: it uses no option but ours.

    Django's own options (``--settings``, ``--verbosity``, ``--help``...) need the
    management command.
    """
    options = [arg.split("=", 1)[0] for arg in argv if arg.startswith("-")]
    return all(option in ("--out", "--jobs") for option in options)
