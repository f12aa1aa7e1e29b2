"""Hand histories of a hand run twice (issue #16): PHH records both runs and replays them
through the engine; the PokerStars text writes FIRST/SECOND streets, showdowns and
boards; OHH keeps the board of each run."""

import datetime
import warnings
from decimal import Decimal

from tables.engine.actions import Action
from tables.engine.state import apply
from tables.formats import HandRecord
from tables.formats.ohh import hand_to_ohh
from tables.formats.phh import export_phh, replay_phh
from tables.formats.pokerstars import hand_to_pokerstars
from tests.engine import pokerkit_adapter as pka
from tests.engine.test_run_it_twice import agree_all, heads_up_all_in

BOARD = "2s5c9c3h8d" + "KsKc7d4s6h"


def record(state, events) -> HandRecord:
    return HandRecord(
        state=state,
        events=tuple(events),
        hand_id=42,
        table_name="Aurora",
        seat_count=6,
        started_at=datetime.datetime(2026, 12, 1, 20, 0, tzinfo=datetime.UTC),
        currency="USD",
        hero=None,
        all_cards=True,
    )


def twice() -> tuple:
    state, events = heads_up_all_in(BOARD)
    state, more = agree_all(state, 2, 1)
    return state, events + more


def test_phh_records_the_answers_and_both_runs_and_replays_them() -> None:
    state, events = twice()
    text = export_phh(state, events)
    assert "_run_it_twice = true" in text and "_run_twice = true" in text
    assert "# p1 agrees to run it twice" in text  # p1 is seat 2 (left of the button)
    assert "# run 2: d db KsKc7d" in text and "# run 2: d db 6h" in text
    assert text.count(" sm ") == 2  # each hand shown once
    assert "finishing_stacks = [9547, 9548]" in text  # p1 = seat 2, p2 = seat 1
    replayed, again = replay_phh(text)
    assert again == text and replayed.stacks == state.stacks
    # The file's second run must be the one the deck deals.
    broken = text.replace("# run 2: d db 6h", "# run 2: d db 6d")
    try:
        replay_phh(broken)
    except ValueError as exc:
        assert "second-run cards" in str(exc)
    else:
        raise AssertionError("a wrong second run replayed")


def test_phh_of_a_refusal_by_timeout_replays_as_one_run() -> None:
    state, events = heads_up_all_in(BOARD)
    state, more = apply(state, Action.timeout(1))
    text = export_phh(state, events + more)
    assert "# p2 refuses to run it twice: timeout" in text and "_run_twice" not in text.replace(
        "_run_it_twice", ""
    )
    replayed, again = replay_phh(text)
    assert again == text and replayed.stacks == [19_095, 0]


def test_pokerstars_text_writes_both_runs() -> None:
    state, events = twice()
    text = hand_to_pokerstars(record(state, events))
    lines = text.splitlines()
    for title in (
        "*** FIRST FLOP *** [2s 5c 9c]",
        "*** FIRST RIVER *** [2s 5c 9c 3h] [8d]",
        "*** SECOND FLOP *** [Ks Kc 7d]",
        "*** SECOND RIVER *** [Ks Kc 7d 4s] [6h]",
        "Hand was run twice",
        "FIRST Board [2s 5c 9c 3h 8d]",
        "SECOND Board [Ks Kc 7d 4s 6h]",
    ):
        assert title in lines, title
    first, second = lines.index("*** FIRST SHOW DOWN ***"), lines.index("*** SECOND SHOW DOWN ***")
    summary = lines.index("*** SUMMARY ***")
    assert first < second < summary
    assert "p1 collected $95.48 from pot" in lines[first:second]
    assert "p2 collected $95.47 from pot" in lines[second:summary]
    assert "p2: agrees to run it twice" in lines


def test_ohh_keeps_each_runs_board() -> None:
    state, events = twice()
    ohh = hand_to_ohh(record(state, events), site_name="room")["ohh"]
    assert ohh["flags"] == ["Run_It_Twice"]
    cards = [(r["street"], r["cards"]) for r in ohh["rounds"] if r["cards"]]
    assert cards[0] == ("Flop", ["2s", "5c", "9c"]) and cards[3] == ("Flop", ["Ks", "Kc", "7d"])
    showdown = ohh["rounds"][-1]
    assert [a["player_id"] for a in showdown["actions"]] == [2, 1]  # each hand shown once
    assert ohh["pots"][0]["player_wins"] == [
        {"player_id": 1, "win_amount": Decimal("95.48")},
        {"player_id": 2, "win_amount": Decimal("95.47")},
    ]


def test_pokerkit_reads_the_phh_of_a_hand_run_twice_as_one_run() -> None:
    # PHH readers skip the comment lines: one board, whole pots (hence `_run_twice`).
    state, events = twice()
    text = export_phh(state, events)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pokerkit warns about the user fields
        final = list(pka.RoomHandHistory.loads(text))[-1]
    assert not final.status
    assert sorted(final.stacks) == [0, 19_095]  # the aces take it all on the first board
