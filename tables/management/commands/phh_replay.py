"""``manage.py phh_replay FILE_OR_DIR... [--out DIR] [--jobs N]``: replay PHH hand histories.

Each ``.phh`` file (directories are searched recursively, each directory's files in
sorted order) is played through our engine with its own cards and rake settings
(:func:`tables.formats.phh.replay_phh`); the hand is written back as PHH with the
finishing stacks, winnings and rake the engine computed, to ``--out`` (same file name;
a name already written in this run gets the file's parent folders prefixed) or, without
``--out``, to standard output. A file the engine refuses is reported with the action's
index and the engine's reason, and the command exits with status 1.

``--jobs N`` replays the files in N processes (default: the CPUs this process may use).
The output is written by this process in file order, so it is the same whatever N is.
Replaying needs no database: the command only reads and writes files.
"""

import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import cast

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tables.formats.phh import PhhError, PhhReplayError, replay_phh

#: Below this many files per process, starting the processes costs more than it saves.
MIN_FILES_PER_JOB = 8


def default_jobs() -> int:
    """The number of CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def phh_files(paths: list[Path]) -> list[Path]:
    """Every ``.phh`` file named or found under the named directories (sorted in each)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(path.rglob("*.phh")))
        elif path.exists():
            files.append(path)
        else:
            raise CommandError(f"{path}: no such file or directory")
    return files


def replay_file(path: Path) -> tuple[bool, str]:
    """``(True, the replayed PHH text)``, or ``(False, the error naming the file)``."""
    try:
        _, text = replay_phh(path.read_text(encoding="utf-8"))
    except PhhReplayError as exc:
        return False, f"{path}: illegal action {exc.index} ({exc.action!r}): {exc.reason}"
    except (PhhError, OSError, UnicodeDecodeError) as exc:
        return False, f"{path}: {exc}"
    return True, text


class Command(BaseCommand):
    help = "Replay PHH hand histories through the engine and write the engine's result."
    # It reads and writes files only: the system checks (URLs, models, the database)
    # have nothing to say about it, and importing every view for them is most of its
    # start-up.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path, help="PHH files or directories")
        parser.add_argument("--out", type=Path, help="directory for the replayed files")
        parser.add_argument(
            "--jobs", type=int, help="processes replaying files (default: the number of CPUs)"
        )

    def handle(self, *args: object, **options: object) -> None:
        paths = cast(list[Path], options["paths"])
        out = cast(Path | None, options["out"])
        jobs = cast(int | None, options["jobs"])
        files = phh_files(paths)
        jobs = min(default_jobs() if jobs is None else jobs, len(files) // MIN_FILES_PER_JOB)
        if jobs > 1:
            # Forked workers start at once; but a process running other threads (a test
            # run, a server's call_command) may fork while one of them holds a lock that
            # the child then waits on for ever: such a process spawns fresh workers.
            method = "fork" if threading.active_count() == 1 else "spawn"
            context = multiprocessing.get_context(method)
            with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
                chunk = max(1, len(files) // (jobs * 16))
                results = list(pool.map(replay_file, files, chunksize=chunk))
        else:
            results = [replay_file(path) for path in files]
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
        failed = 0
        written: set[str] = set()
        for path, (ok, text) in zip(files, results, strict=True):
            if not ok:
                failed += 1
                self.stderr.write(text)
            elif out is None:
                self.stdout.write(f"# {path}\n{text}", ending="")
            else:
                name = path.name
                if name in written:
                    name = "_".join(path.parts[-3:])
                written.add(name)
                (out / name).write_text(text, encoding="utf-8")
        self.stderr.write(f"{len(files) - failed} of {len(files)} hands replayed")
        if failed:
            raise CommandError(f"{failed} file(s) could not be replayed", returncode=1)
