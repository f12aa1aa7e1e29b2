"""``manage.py phh_replay``: replays PHH files through the engine (tables/engine/phh.py)."""

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tables.engine.phh import export_phh
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
