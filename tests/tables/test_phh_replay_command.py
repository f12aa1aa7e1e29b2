"""``manage.py phh_replay``: replays PHH files through the engine (tables/formats/phh.py)."""

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tables.formats.phh import export_phh
from tests.engine.test_phh import golden


def write_golden(folder: Path, name: str = "hand.phh") -> str:
    state, events = golden()
    text = export_phh(state, events)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return text


def test_replays_a_folder_into_out_with_the_engines_results(tmp_path: Path) -> None:
    text = write_golden(tmp_path / "in" / "a")
    forged = text.replace("finishing_stacks = [10815", "finishing_stacks = [1").replace(
        "_rake = 85", "_rake = 0"
    )
    (tmp_path / "in" / "forged.phh").write_text(forged)
    call_command("phh_replay", str(tmp_path / "in"), "--out", str(tmp_path / "out"))
    assert (tmp_path / "out" / "hand.phh").read_text() == text
    assert (tmp_path / "out" / "forged.phh").read_text() == text


def test_prints_to_stdout_without_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = write_golden(tmp_path)
    call_command("phh_replay", str(tmp_path / "hand.phh"))
    assert text in capsys.readouterr().out


def test_illegal_action_is_reported_with_index_and_reason_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = write_golden(tmp_path)
    (tmp_path / "bad.phh").write_text(text.replace('"p3 cbr 300"', '"p3 cbr 150"'))
    with pytest.raises(CommandError) as info:
        call_command("phh_replay", str(tmp_path), "--out", str(tmp_path / "out"))
    assert info.value.returncode == 1
    err = capsys.readouterr().err
    assert "bad.phh: illegal action 3 ('p3 cbr 150'): The minimum raise is to 200." in err
    assert "1 of 2 hands replayed" in err
    assert (tmp_path / "out" / "hand.phh").read_text() == text


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="no such file"):
        call_command("phh_replay", str(tmp_path / "nope.phh"))


def test_manage_py_phh_replay_gives_the_same_files_whatever_the_jobs(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    text = write_golden(tmp_path / "in")
    for k in range(20):
        (tmp_path / "in" / f"copy{k:02d}.phh").write_text(text)
    for jobs in ("1", "3"):
        out = tmp_path / f"out{jobs}"
        result = subprocess.run(
            [
                sys.executable,
                "manage.py",
                "phh_replay",
                str(tmp_path / "in"),
                "--out",
                str(out),
                "--jobs",
                jobs,
            ],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert "21 of 21 hands replayed" in result.stderr
        assert {p.name for p in out.iterdir()} == {p.name for p in (tmp_path / "in").iterdir()}
        assert all(p.read_text() == text for p in out.iterdir())


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_clashing_names_are_the_same_whatever_the_jobs(tmp_path: Path, jobs: str) -> None:
    text = write_golden(tmp_path / "in" / "a")
    bad = text.replace('"p3 cbr 300"', '"p3 cbr 150"')
    for k in range(12):  # enough files for three processes
        folder = tmp_path / "in" / f"f{k:02d}"
        folder.mkdir()
        # One clash fails: the next file with that name takes the plain name then.
        (folder / "hand.phh").write_text(bad if k == 0 else text)
        (folder / f"own{k}.phh").write_text(text)
    out = tmp_path / "out"
    with pytest.raises(CommandError) as info:
        call_command("phh_replay", str(tmp_path / "in"), "--out", str(out), "--jobs", jobs)
    assert info.value.returncode == 1
    names = sorted(p.name for p in out.iterdir())
    # a/hand.phh is first; f00's fails; the others get their folders in the name.
    expected = ["hand.phh", *(f"in_f{k:02d}_hand.phh" for k in range(1, 12))]
    assert names == sorted(expected + [f"own{k}.phh" for k in range(12)])
    assert all(p.read_text() == text for p in out.iterdir())


def test_a_wrong_command_line_is_refused_by_argparse() -> None:
    with pytest.raises(CommandError, match="invalid int value"):
        call_command("phh_replay", "--jobs", "x", "some.phh")


def test_a_process_running_other_threads_spawns_its_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import multiprocessing
    import threading

    from tables.management.commands import phh_replay

    methods: list[str] = []
    original = multiprocessing.get_context

    def get_context(method: str) -> multiprocessing.context.BaseContext:
        methods.append(method)
        return original(method)

    monkeypatch.setattr(phh_replay.multiprocessing, "get_context", get_context)
    text = write_golden(tmp_path / "in")
    for k in range(20):
        (tmp_path / "in" / f"copy{k:02d}.phh").write_text(text)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        call_command(
            "phh_replay", str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--jobs", "2"
        )
    finally:
        stop.set()
        other.join()
    assert methods == ["spawn"]  # forking a threaded process may deadlock the child
    assert len(list((tmp_path / "out").iterdir())) == 21
    assert all(p.read_text() == text for p in (tmp_path / "out").iterdir())
