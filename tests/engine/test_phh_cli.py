"""The shortcuts of ``phh_replay`` (tables/engine/phh_cli.py) behave as what they replace.

* Paths: ``phh_files`` lists what ``sorted(Path(p).rglob("*.phh"))`` lists, written as
  ``str(path)``; ``_pathname`` and ``_parts`` are ``str(PurePosixPath(p))`` and ``.parts``.
* The command line: whatever ``_arguments`` reads, argparse reads the same way.
* Files: ``_read`` is ``Path.read_text`` and ``_write`` is ``Path.write_text``, also over
  a longer file; the names of clashing files do not depend on ``--jobs``.
* A worker that fails makes the run fail with the worker's traceback.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path, PurePosixPath

import pytest

from tables.engine import phh_cli
from tables.engine.phh import export_phh
from tests.engine.test_phh import golden


@pytest.mark.parametrize(
    "path",
    ["", ".", "./", "a", "a/", "a//b", "./a/./b/", "/", "//", "///", "//a//b", "///a", "a/../b"],
)
def test_pathname_and_parts_are_pathlibs(path: str) -> None:
    assert phh_cli._pathname(path) == str(PurePosixPath(path))
    assert phh_cli._parts(phh_cli._pathname(path)) == list(PurePosixPath(path).parts)


def test_phh_files_lists_what_rglob_lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ["a/b.phh", "a-b/c.phh", "a/b/c.phh", "A.phh", ".hidden.phh", "x.txt", "d/.phh"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "dir.phh").mkdir()  # a directory with the suffix is listed too
    (tmp_path / "linked").symlink_to(tmp_path / "a")  # not followed
    (tmp_path / "link.phh").symlink_to(tmp_path / "A.phh")
    (tmp_path / "broken.phh").symlink_to(tmp_path / "nowhere")
    single = tmp_path / "a" / "b.phh"
    monkeypatch.chdir(tmp_path)
    for args in ([str(tmp_path)], [f"{tmp_path}/"], ["."], ["a", str(single)], ["./a//"]):
        expected = [str(p) for arg in args for p in _pathlib_files(Path(arg))]
        assert phh_cli.phh_files(args) == expected
        assert phh_cli.phh_files([Path(arg) for arg in args]) == expected
    with pytest.raises(phh_cli.PhhCliError, match=r"nope\.phh: no such file"):
        phh_cli.phh_files(["./nope.phh"])


def _pathlib_files(path: Path) -> list[Path]:
    return sorted(path.rglob("*.phh")) if path.is_dir() else [path]


def _argparse_reading(argv: list[str]) -> tuple[list[str], str | None, int | None] | None:
    try:
        args = phh_cli.parser().parse_args(argv)
    except SystemExit:
        return None
    return args.paths, args.out, args.jobs


def test_arguments_are_read_as_argparse_reads_them(capsys: pytest.CaptureFixture[str]) -> None:
    words = ["a", "b c", "", "--out", "--jobs", "--out=o", "--jobs=2", "3", "-1", "=", "x=y"]
    rng = random.Random(3)
    read = 0
    for _ in range(3000):
        argv = rng.choices(words, k=rng.randint(0, 6))
        ours = phh_cli._arguments(argv)
        if ours is not None:
            read += 1
            assert ours == _argparse_reading(argv), argv
    assert read > 300
    capsys.readouterr()  # argparse's error messages


def test_read_and_write_are_pathlibs(tmp_path: Path) -> None:
    path = tmp_path / "f.phh"
    for raw in [b"a\r\nb\rc\n", b"caf\xc3\xa9\n", b"\xef\xbb\xbfbom", b""]:
        path.write_bytes(raw)
        assert phh_cli._read(str(path)) == path.read_text(encoding="utf-8")
    path.write_bytes(b"\xff")
    with pytest.raises(UnicodeDecodeError) as ours:
        phh_cli._read(str(path))
    with pytest.raises(UnicodeDecodeError) as theirs:
        path.read_text(encoding="utf-8")
    assert str(ours.value) == str(theirs.value)
    path.write_bytes(b"x" * (phh_cli._READ_SIZE + 5))  # more than one read
    assert phh_cli._read(str(path)) == path.read_text(encoding="utf-8")
    for missing_or_folder in (tmp_path / "none.phh", tmp_path):
        with pytest.raises(OSError) as ours:
            phh_cli._read(str(missing_or_folder))
        with pytest.raises(OSError) as theirs:
            missing_or_folder.read_text(encoding="utf-8")
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
    phh_cli._write(str(path), "a much longer text\n" * 10)
    phh_cli._write(str(path), "caf\u00e9\n")  # shorter: the rest is cut off
    assert path.read_bytes() == "caf\u00e9\n".encode()


@pytest.mark.parametrize("jobs", [1, 3])
def test_names_of_clashing_files_do_not_depend_on_jobs(tmp_path: Path, jobs: int) -> None:
    state, events = golden()
    text = export_phh(state, events)
    bad = text.replace('"p3 cbr 300"', '"p3 cbr 150"')
    files = []
    for k in range(30):
        # Clashing names (some failing), and names that a clash with folders gives.
        name = ["hand.phh", f"own{k}.phh", "in_f03_hand.phh", "f05_hand.phh"][k % 4]
        path = tmp_path / "in" / f"f{k:02d}" / name
        path.parent.mkdir(parents=True)
        path.write_text(bad if k % 7 == 0 else text)
        files.append(str(path))
    out = tmp_path / "out"
    with open(os.devnull, "w") as sink:
        failed = phh_cli.replay_files(files, out, jobs=jobs, stdout=sink, stderr=sink)
    assert failed == 5
    assert {p.name: p.read_text() for p in out.iterdir()} == _expected_outputs(files, text)


def _expected_outputs(files: list[str], text: str) -> dict[str, str]:
    """What the one-process version wrote: names in file order, failures skipped."""
    used: set[str] = set()
    for k, path in enumerate(files):
        if k % 7 == 0:
            continue
        name = Path(path).name
        if name in used:
            name = "_".join(Path(path).parts[-3:])
        used.add(name)
    return dict.fromkeys(used, text)


def test_a_failing_worker_fails_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state, events = golden()
    for k in range(20):
        (tmp_path / f"{k}.phh").write_text(export_phh(state, events))
    parent = os.getpid()

    def replay(text: str) -> object:
        if os.getpid() != parent:
            raise KeyError("in the worker")
        time.sleep(0.05)  # leave the worker some files
        return state, text

    monkeypatch.setattr(phh_cli, "replay_phh", replay)
    files = phh_cli.phh_files([tmp_path])
    with (
        open(os.devnull, "w") as sink,
        pytest.raises(RuntimeError, match=r"worker process failed:(.|\n)*KeyError"),
    ):
        phh_cli.replay_files(files, tmp_path / "out", jobs=2, stdout=sink, stderr=sink)
