"""``manage.py phh_replay FILE_OR_DIR... [--out DIR]``: replay PHH hand histories.

Each ``.phh`` file (directories are searched recursively) is played through our engine
with its own cards and rake settings (:func:`tables.engine.phh.replay_phh`); the hand is
written back as PHH with the finishing stacks, winnings and rake the engine computed, to
``--out`` (same file name; a clash inside one run gets its parent folders prefixed) or,
without ``--out``, to standard output. A file the engine refuses is reported with the
action's index and the engine's reason, and the command exits with status 1.
"""

from pathlib import Path
from typing import cast

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tables.engine.phh import PhhError, PhhReplayError, replay_phh


class Command(BaseCommand):
    help = "Replay PHH hand histories through the engine and write the engine's result."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path, help="PHH files or directories")
        parser.add_argument("--out", type=Path, help="directory for the replayed files")

    def handle(self, *args: object, **options: object) -> None:
        paths = cast(list[Path], options["paths"])
        out = cast(Path | None, options["out"])
        files = _phh_files(paths)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
        failed = 0
        used: set[str] = set()
        for path in files:
            try:
                _, text = replay_phh(path.read_text(encoding="utf-8"))
            except PhhReplayError as exc:
                failed += 1
                self.stderr.write(
                    f"{path}: illegal action {exc.index} ({exc.action!r}): {exc.reason}"
                )
                continue
            except (PhhError, OSError, UnicodeDecodeError) as exc:
                failed += 1
                self.stderr.write(f"{path}: {exc}")
                continue
            if out is None:
                self.stdout.write(f"# {path}\n{text}")
                continue
            name = path.name if path.name not in used else "_".join(path.parts[-3:])
            used.add(name)
            (out / name).write_text(text, encoding="utf-8")
        self.stderr.write(f"{len(files) - failed} of {len(files)} hands replayed")
        if failed:
            raise CommandError(f"{failed} file(s) could not be replayed", returncode=1)


def _phh_files(paths: list[Path]) -> list[Path]:
    """Every ``.phh`` file named or found under the named directories, sorted."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(path.rglob("*.phh")))
        elif path.exists():
            files.append(path)
        else:
            raise CommandError(f"{path}: no such file or directory")
    return files
