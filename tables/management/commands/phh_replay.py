"""``manage.py phh_replay FILE_OR_DIR... [--out DIR] [--jobs N]``: replay PHH hand histories.

Each ``.phh`` file (directories are searched recursively) is played through our engine
with its own cards and rake settings (:func:`tables.engine.phh.replay_phh`); the hand is
written back as PHH with the finishing stacks, winnings and rake the engine computed, to
``--out`` (same file name; a clash inside one run gets its parent folders prefixed) or,
without ``--out``, to standard output. A file the engine refuses is reported with the
action's index and the engine's reason, and the command exits with status 1.

The work is :mod:`tables.engine.phh_cli`'s, which needs no Django: ``manage.py
phh_replay`` runs it before Django is set up. This class serves ``call_command`` and
``manage.py help phh_replay`` (and any call using Django's own options).
"""

from pathlib import Path
from typing import cast

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tables.engine.phh_cli import PhhCliError, default_jobs, phh_files, replay_files


class Command(BaseCommand):
    help = "Replay PHH hand histories through the engine and write the engine's result."

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
        try:
            files = phh_files(paths)
        except PhhCliError as exc:
            raise CommandError(str(exc)) from None
        failed = replay_files(
            files,
            out,
            jobs=default_jobs() if jobs is None else max(1, jobs),
            stdout=self.stdout,  # type: ignore[arg-type]  # OutputWrapper writes text
            stderr=self.stderr,  # type: ignore[arg-type]
        )
        if failed:
            raise CommandError(f"{failed} file(s) could not be replayed", returncode=1)
