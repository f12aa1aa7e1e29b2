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
1 replays in this process). Reports and standard output are written by this process in
file order, so the output is the same whatever N is.

Speed: start-up is a good part of a run, so this module imports little. Paths are plain
strings written as :mod:`pathlib` writes them (``pathlib`` and its imports cost more than
a hundred files' replays), the command line is read by hand (``argparse`` only reports
the errors), files are read and written with plain system calls, and ``--jobs`` forks
workers with :func:`os.fork` rather than :mod:`multiprocessing` (whose import alone
costs about as much as the engine's). Each process writes the files it replays; this
one writes only the names a clash may give to more than one file (:func:`_targets`).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn, TextIO

from tables.engine.phh import PhhError, PhhReplayError, replay_phh

if TYPE_CHECKING:
    import argparse

#: Below this many files per job, the processes cost more than they save.
MIN_FILES_PER_JOB = 8
#: Work is handed out in this many chunks per process, so that one slowed down by other
#: programs takes fewer of them.
CHUNKS_PER_JOB = 16
# Chunk numbers are 2 bytes; 256 of them fill 512 bytes, which a pipe takes in one write
# on any POSIX system (PIPE_BUF), before any worker reads.
_MAX_CHUNKS = 256
# Bytes asked for by each read of a file: more than a PHH file holds.
_READ_SIZE = 1 << 16
# The errors for which pathlib says a path does not exist (it raises the others).
_MISSING = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)

#: A file's outcome: ("ok", its PHH text), ("written", "") once written to its target,
#: or ("error", the message naming the file).
Result = tuple[str, str]


class PhhCliError(Exception):
    """A usage error (a path that does not exist)."""


def default_jobs() -> int:
    """The number of CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def phh_files(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Every ``.phh`` file named or found under the named directories (each directory's
    sorted), as ``pathlib`` would list them: ``sorted(Path(p).rglob("*.phh"))``."""
    files: list[str] = []
    for arg in paths:
        path = _pathname(arg)
        kind = _kind(path)
        if kind == "dir":
            found: list[tuple[str, ...]] = []
            _find_phh(path, (), found)
            found.sort()  # pathlib orders paths by their parts
            prefix = "" if path == "." else path if path.endswith("/") else path + "/"
            files.extend(prefix + "/".join(parts) for parts in found)
        elif kind == "other":
            files.append(path)
        else:
            raise PhhCliError(f"{path}: no such file or directory")
    return files


def _pathname(path: str | os.PathLike[str]) -> str:
    """``str(pathlib.PurePosixPath(path))``: no empty or ``.`` parts, no trailing slash."""
    text = os.fspath(path)
    # Two leading slashes are kept (POSIX leaves their meaning to the system), more are one.
    root = "//" if text[:2] == "//" and text[2:3] != "/" else "/" if text[:1] == "/" else ""
    return root + "/".join(part for part in text.split("/") if part and part != ".") or "."


def _kind(path: str) -> str | None:
    """Whether ``path`` is a directory ("dir"), something else ("other") or nothing
    (None), as ``Path.is_dir`` and ``Path.exists`` tell."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno not in _MISSING:
            raise
        return None
    except ValueError:  # a NUL character in the path
        return None
    return "dir" if stat.S_ISDIR(mode) else "other"


def _find_phh(top: str, parts: tuple[str, ...], found: list[tuple[str, ...]]) -> None:
    """Add to ``found`` the parts (below ``top``) of every ``*.phh`` entry of the
    directory ``top/parts...`` and, recursively, of its subdirectories (not those behind
    a symbolic link): what ``Path.rglob`` yields (unreadable directories are skipped)."""
    try:
        with os.scandir(os.path.join(top, *parts)) as it:
            entries = list(it)
    except PermissionError:
        return
    for entry in entries:
        name = entry.name
        if name.endswith(".phh"):
            found.append((*parts, name))
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in _MISSING:
                raise
            is_dir = False
        if is_dir:
            _find_phh(top, (*parts, name), found)


def _parts(path: str) -> list[str]:
    """``PurePosixPath(path).parts`` of a path written by :func:`_pathname`."""
    root = "//" if path.startswith("//") else "/" if path.startswith("/") else ""
    rest = path[len(root) :]
    parts = rest.split("/") if rest not in ("", ".") else []
    return [root, *parts] if root else parts


def replay_file(path: str, target: str | None = None) -> Result:
    """Replay one file; write the result to ``target`` if given (see :data:`Result`)."""
    try:
        _, text = replay_phh(_read(path))
    except PhhReplayError as exc:
        return "error", f"{path}: illegal action {exc.index} ({exc.action!r}): {exc.reason}"
    except (PhhError, OSError, UnicodeDecodeError) as exc:
        return "error", f"{path}: {exc}"
    if target is None:
        return "ok", text
    _write(target, text)
    return "written", ""


def _read(path: str) -> str:
    """``Path(path).read_text(encoding="utf-8")`` with plain system calls: a file object
    would also ask the system for the file's status and position, which costs more than
    reading a PHH file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, _READ_SIZE):
            chunks.append(chunk)
    except OSError as exc:  # a directory: named, as open() names it
        raise OSError(exc.errno, exc.strerror, path) from None
    finally:
        os.close(fd)
    text = (chunks[0] if len(chunks) == 1 else b"".join(chunks)).decode("utf-8")
    if "\r" in text:  # universal newlines, as read_text has them
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` in UTF-8, as ``Path.write_text`` would.

    An existing file is truncated after the write, not before: ext4 flushes a file that
    was truncated to nothing and written again as it is closed (``auto_da_alloc``), which
    made re-runs into the same ``--out`` several times slower.
    """
    data = text.encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def _targets(files: list[str], out: str | None) -> list[str | None]:
    """Where whichever process replays each file may write it: ``out/<its name>`` when
    that is sure to be its name; None where it depends on which files failed before it
    (:func:`replay_files` names those, in file order).

    A file is named after its parent folders only when its name was taken before it, so
    a name that no other file has, and that is none of the names with folders, is sure.
    """
    if out is None:
        return [None] * len(files)
    names = [path.rpartition("/")[2] for path in files]
    with_folders = ["_".join(_parts(path)[-3:]) for path in files]
    name_count, with_folders_count = Counter(names), Counter(with_folders)
    targets: list[str | None] = []
    for name, own in zip(names, with_folders, strict=True):
        others_with_folders = with_folders_count[name] - (own == name)
        sure = name_count[name] == 1 and others_with_folders == 0
        targets.append(os.path.join(out, name) if sure else None)
    return targets


def _results(files: list[str], targets: list[str | None], jobs: int) -> list[Result]:
    """:func:`replay_file` of every file, in order, in up to ``jobs`` processes."""
    jobs = min(jobs, len(files) // MIN_FILES_PER_JOB)
    if jobs <= 1 or not hasattr(os, "fork"):
        return [replay_file(path, target) for path, target in zip(files, targets, strict=True)]
    size = -(-len(files) // min(jobs * CHUNKS_PER_JOB, _MAX_CHUNKS))  # files per chunk
    chunks = -(-len(files) // size)
    # The chunk numbers wait in a pipe; each process reads the next one when it is free.
    queue, queue_end = os.pipe()
    os.write(queue_end, b"".join(k.to_bytes(2, "little") for k in range(chunks)))
    os.close(queue_end)
    children: dict[int, int] = {}  # pid: the read end of the pipe of its results
    try:
        for _ in range(jobs - 1):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker
                os.close(read_end)
                for fd in children.values():
                    os.close(fd)  # the parent must see each worker's pipe end with it
                _work_and_exit(queue, write_end, files, targets, size)
            os.close(write_end)
            children[pid] = read_end
        done = _work(queue, files, targets, size)
        for pid in list(children):
            done.update(_collect(pid, children.pop(pid)))
    finally:
        # After an error here: leave the workers no more chunks, and wait for them.
        while os.read(queue, 2):
            pass
        os.close(queue)
        for pid, fd in children.items():
            os.close(fd)
            os.waitpid(pid, 0)
    return [result for k in range(chunks) for result in done[k]]


def _work(
    queue: int, files: list[str], targets: list[str | None], size: int
) -> dict[int, list[Result]]:
    """Replay the chunks of ``size`` files whose numbers are read from ``queue`` until it
    is empty: their results by chunk number."""
    done: dict[int, list[Result]] = {}
    while chunk := os.read(queue, 2):  # a pipe read returns the 2 bytes or none
        k = int.from_bytes(chunk, "little")
        chunk_files = range(k * size, min((k + 1) * size, len(files)))
        done[k] = [replay_file(files[i], targets[i]) for i in chunk_files]
    return done


def _work_and_exit(
    queue: int, pipe: int, files: list[str], targets: list[str | None], size: int
) -> NoReturn:
    """In a forked worker: :func:`_work`, its results written to ``pipe`` with
    :mod:`marshal` (or the error's traceback as text), then ``os._exit`` (none of the
    parent's clean-up)."""
    import marshal

    status = 1
    try:
        try:
            payload = marshal.dumps(_work(queue, files, targets, size))
            status = 0
        except BaseException:
            import traceback

            payload = traceback.format_exc().encode()
        with open(pipe, "wb") as stream:
            stream.write(payload)
    finally:
        os._exit(status)


def _collect(pid: int, pipe: int) -> dict[int, list[Result]]:
    """The results a worker sent; raise if it failed."""
    import marshal

    with open(pipe, "rb") as stream:
        payload = stream.read()
    _, status = os.waitpid(pid, 0)
    if status != 0:
        code = os.waitstatus_to_exitcode(status)
        detail = payload.decode(errors="replace") or f"exit code {code}"
        raise RuntimeError(f"a phh_replay worker process failed:\n{detail}")
    results: dict[int, list[Result]] = marshal.loads(payload)  # noqa: S302 - our worker's
    return results


def replay_files(
    files: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None,
    *,
    jobs: int,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """Replay ``files`` (see the module docstring); return how many failed."""
    paths = [_pathname(path) for path in files]
    out_dir = None if out is None else _pathname(out)
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
    targets = _targets(paths, out_dir)
    failed = 0
    used: set[str] = set()
    results = _results(paths, targets, jobs)
    for path, target, (outcome, text) in zip(paths, targets, results, strict=True):
        if outcome == "error":
            failed += 1
            stderr.write(text + "\n")
            continue
        if out_dir is None:
            stdout.write(f"# {path}\n{text}")
            continue
        name = path.rpartition("/")[2]
        if name in used:
            name = "_".join(_parts(path)[-3:])
        used.add(name)
        if target is None:
            _write(os.path.join(out_dir, name), text)
    stderr.write(f"{len(files) - failed} of {len(files)} hands replayed\n")
    return failed


def parser() -> argparse.ArgumentParser:
    """The command line of ``phh_replay`` (:func:`main` reads the usual ones itself)."""
    import argparse

    p = argparse.ArgumentParser(
        prog="manage.py phh_replay",
        description="Replay PHH hand histories through the engine and write the engine's result.",
    )
    p.add_argument("paths", nargs="+", help="PHH files or directories")
    p.add_argument("--out", help="directory for the replayed files")
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="processes replaying files (default: the number of CPUs)",
    )
    return p


def _arguments(argv: Sequence[str]) -> tuple[list[str], str | None, int | None] | None:
    """``(paths, out, jobs)`` of a command line as :func:`parser` reads it, or None for
    one it might read otherwise or refuse (then it reads it, and reports the error).

    argparse and what it imports (gettext, locale, shutil) would be a tenth of a short
    run's start-up; the usual command line, its paths in one run and its options
    ``--out DIR``/``--out=DIR``/``--jobs N``/``--jobs=N`` (the last one counts), is simple.
    """
    paths: list[str] = []
    out: str | None = None
    jobs: int | None = None
    paths_ended = False
    args = iter(argv)
    for arg in args:
        if not arg.startswith("-"):
            if paths_ended:
                return None  # argparse refuses paths on both sides of an option
            paths.append(arg)
            continue
        paths_ended = bool(paths)
        name, equals, value = arg.partition("=")
        if not equals:
            value = next(args, "-")
            if value.startswith("-"):
                return None  # a missing value, or one argparse may read as an option
        if name == "--out":
            out = value
        elif name == "--jobs":
            try:
                jobs = int(value)
            except ValueError:
                return None
        else:
            return None
    return (paths, out, jobs) if paths else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``phh_replay`` with ``argv`` (the arguments after the command name)."""
    argv = sys.argv[1:] if argv is None else argv
    arguments = _arguments(argv)
    if arguments is None:
        args = parser().parse_args(argv)  # exits with argparse's message if it is wrong
        arguments = args.paths, args.out, args.jobs
    paths, out, jobs = arguments
    jobs = default_jobs() if jobs is None else max(1, jobs)
    try:
        files = phh_files(paths)
    except PhhCliError as exc:
        sys.stderr.write(f"CommandError: {exc}\n")  # as Django's command reports it
        return 1
    failed = replay_files(files, out, jobs=jobs, stdout=sys.stdout, stderr=sys.stderr)
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
