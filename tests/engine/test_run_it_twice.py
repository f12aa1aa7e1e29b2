"""Run it twice (issue #16): the agreement, the two runs from one deck, and the exact
arithmetic of settling (rake once on the whole pot, every pot halved with the odd chip
to the first run, each half awarded on its own board by the usual rules)."""

import pytest

from tables.engine.actions import Action
from tables.engine.cards import parse_cards
from tables.engine.config import TableConfig
from tables.engine.errors import IllegalAction
from tables.engine.events import (
    DealtBoard,
    Raked,
    RunTwiceAnswered,
    RunTwiceAsked,
    RunTwiceDecided,
    Shown,
    Won,
    event_from_dict,
)
from tables.engine.hand_state import HandState
from tables.engine.state import apply
from tables.engine.testing import begin, run

HOLDEM = TableConfig(game="holdem", structure="NL", big_blind=100, rake_caps=(), run_it_twice=True)


def heads_up_all_in(board: str) -> tuple[HandState, list]:
    """Aces (seat 1, the button) against kings, 10050 each, all-in preflop; ``board``
    is what the deck holds after the hole cards. Returns the state and every event."""
    holes = {1: "AhAd", 2: "KhKd"}
    state, dealt = begin(HOLDEM, {1: 10_050, 2: 10_050}, button=1, holes=holes, board=board)
    state, events = run(state, "raise 10050", "call")
    return state, dealt + events


def agree_all(state: HandState, *seats: int) -> tuple[HandState, list]:
    events: list = []
    for seat in seats:
        state, new = apply(state, Action.run_twice(seat, agree=True))
        events.extend(new)
    return state, events


def won(events: list) -> list[tuple[int, int, int, int, str | None]]:
    """(run, pot, seat, amount, share) of every Won event, in order."""
    return [(e.run, e.pot, e.seat, e.amount, e.share) for e in events if isinstance(e, Won)]


def boards(events: list) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for e in events:
        if isinstance(e, DealtBoard):
            out.setdefault(e.run, []).extend(e.cards)
    return out


def test_run_it_twice_heads_up_preflop_all_in_halves_the_raked_pot_odd_chip_to_run_one() -> None:
    # Pot 2 x 10050 = 20100; rake 5 % = 1005, taken once: 19095 left, halved into
    # 9548 (run 1, the odd chip) and 9547 (run 2).
    state, events = heads_up_all_in("2s5c9c3h8d" + "KsKc7d4s6h")
    assert [e for e in events if isinstance(e, RunTwiceAsked)] == [RunTwiceAsked(seats=(2, 1))]
    assert state.asking_run_twice and state.actor is None and not state.is_over
    assert state.board == []  # nothing dealt while the players decide
    state, events = agree_all(state, 1, 2)
    assert [e.runs for e in events if isinstance(e, RunTwiceDecided)] == [2]
    assert boards(events) == {1: parse_cards("2s5c9c3h8d"), 2: parse_cards("KsKc7d4s6h")}
    assert next(e for e in events if isinstance(e, Raked)).amount == 1005
    assert won(events) == [(1, 0, 1, 9548, None), (2, 0, 2, 9547, None)]
    assert state.stacks == [9548, 9547]
    assert state.result is not None and state.result.rake == 1005
    assert state.result.scooped_by is None
    assert state.board == parse_cards("2s5c9c3h8d")
    assert state.run_twice is not None and state.run_twice.runs == 2
    assert list(state.run_twice.second_board) == parse_cards("KsKc7d4s6h")
    # Every hand is shown on each run's board, with that board's words.
    shown = [(e.run, e.seat, e.high) for e in events if isinstance(e, Shown)]
    assert [(r, s) for r, s, _ in shown] == [(1, 2), (1, 1), (2, 2), (2, 1)]
    assert shown[2][2] == "four of a kind, Kings"


def test_run_it_twice_side_pots_each_halved_rake_from_the_main_pot_first() -> None:
    # Seat 1 all-in for 1001, seats 2 and 3 for 5000: main pot 3 x 1001 = 3003, side pot
    # 2 x 3999 = 7998, 11001 in all; rake 10 % = 1100 from the main pot: 1903 left.
    # Main pot: 952 (run 1) + 951 (run 2); side pot: 3999 + 3999.
    config = TableConfig(
        game="holdem", structure="NL", big_blind=100, rake_percent=1000, rake_caps=(),
        run_it_twice=True,
    )  # fmt: skip
    state, _ = begin(
        config, {1: 1001, 2: 5000, 3: 5000}, button=3,
        holes={1: "AhAd", 2: "KhKd", 3: "QhQd"}, board="2s5c9c3h8d" + "QsQc7d4sJh",
    )  # fmt: skip
    state, _ = run(state, "raise 5000", "call", "call")
    assert state.run_twice is not None and state.run_twice.asked == (1, 2, 3)
    state, events = agree_all(state, 3, 1, 2)  # in any order
    assert next(e for e in events if isinstance(e, Raked)).amount == 1100
    assert won(events) == [
        (1, 0, 1, 952, None),  # run 1: aces win the main pot's first half
        (2, 0, 3, 951, None),  # run 2: four queens
        (1, 1, 2, 3999, None),  # run 1: kings beat queens for the side pot
        (2, 1, 3, 3999, None),
    ]
    assert state.stacks == [952, 3999, 951 + 3999]
    assert sum(state.stacks) + 1100 == 11_001


def test_run_it_twice_hi_lo_halves_split_high_and_low_within_each_run() -> None:
    # Omaha hi-lo, 2 x 1011 = 2022; rake 5 % = 101: 1921 left, 961 for run 1 and 960
    # for run 2. Run 1: seat 2's queens high 481 (the odd chip of the half to high),
    # seat 1's A-2 low 480. Run 2: no low on J-J-4-7-T, seat 2's four jacks take 960.
    config = TableConfig(game="omaha8", structure="PL", big_blind=100, run_it_twice=True)
    state, _ = begin(
        config, {1: 1011, 2: 1011}, button=1,
        holes={1: "As2sKhKd", 2: "QcQhJcJh"}, board="3c5d8hQd9s" + "JdJs4c7hTd",
    )  # fmt: skip
    state, _ = run(state, "raise 300", "raise 900", "raise 1011", "call")
    state, events = agree_all(state, 2, 1)
    assert next(e for e in events if isinstance(e, Raked)).amount == 101
    assert won(events) == [(1, 0, 2, 481, "high"), (1, 0, 1, 480, "low"), (2, 0, 2, 960, None)]
    assert state.stacks == [480, 1441]
    assert state.result is not None and state.result.scooped_by is None


def test_run_it_twice_a_tied_run_splits_its_half_odd_chip_left_of_the_button() -> None:
    # 19095 after rake as above: run 1 (9548) to the aces; run 2's board plays for
    # both (a royal flush), 9547 split 4774 to seat 2 (left of the button) and 4773.
    state, _ = heads_up_all_in("2s5c9c3h8d" + "AsKsQsJsTs")
    state, events = agree_all(state, 2, 1)
    assert won(events) == [(1, 0, 1, 9548, None), (2, 0, 2, 4774, None), (2, 0, 1, 4773, None)]
    assert state.stacks == [9548 + 4773, 4774]


def test_run_it_twice_after_the_flop_both_runs_share_it_and_run_two_follows_run_one() -> None:
    state, _ = begin(
        HOLDEM, {1: 5000, 2: 5000}, button=1,
        holes={1: "AhAd", 2: "KhKd"}, board="2s5c9c" + "3h8d" + "Ks7d",
    )  # fmt: skip
    state, _ = run(state, "call", "check", "bet 4900", "call")
    assert state.asking_run_twice
    assert state.board == parse_cards("2s5c9c")
    state, events = agree_all(state, 1, 2)
    assert [(e.run, e.street) for e in events if isinstance(e, DealtBoard)] == [
        (1, "turn"),
        (1, "river"),
        (2, "turn"),
        (2, "river"),
    ]
    assert state.board == parse_cards("2s5c9c3h8d")
    assert state.run_twice is not None
    assert list(state.run_twice.second_board) == parse_cards("2s5c9cKs7d")
    # 10000, rake 5 % = 500: 9500 = 4750 + 4750.
    assert won(events) == [(1, 0, 1, 4750, None), (2, 0, 2, 4750, None)]


def test_run_it_twice_one_refusal_runs_the_board_once() -> None:
    state, _ = heads_up_all_in("2s5c9c3h8d" + "KsKc7d4s6h")
    state, events = apply(state, Action.run_twice(1, agree=True))
    assert events == [RunTwiceAnswered(seat=1, agree=True, timed_out=False, undecided=(2,))]
    state, events = apply(state, Action.run_twice(2, agree=False))
    assert [e.runs for e in events if isinstance(e, RunTwiceDecided)] == [1]
    assert boards(events) == {1: parse_cards("2s5c9c3h8d")}
    assert won(events) == [(1, 0, 1, 19_095, None)]
    assert state.is_over and state.stacks == [19_095, 0]
    assert state.run_twice is not None and state.run_twice.second_board == ()


def test_run_it_twice_a_timeout_refuses_for_the_undecided() -> None:
    state, _ = heads_up_all_in("2s5c9c3h8d")
    state, events = apply(state, Action.timeout(2))
    assert events[0] == RunTwiceAnswered(seat=2, agree=False, timed_out=True, undecided=())
    assert [e.runs for e in events if isinstance(e, RunTwiceDecided)] == [1]
    assert state.is_over and state.stacks == [19_095, 0]


def test_run_it_twice_answers_out_of_turn_are_refused_with_a_reason() -> None:
    state, _ = begin(
        HOLDEM, {1: 10_050, 2: 10_050, 3: 10_050}, button=3,
        holes={1: "AhAd", 2: "KhKd", 3: "QhQd"}, board="2s5c9c3h8d",
    )  # fmt: skip
    state, _ = run(state, "fold", "raise 10050", "call")
    assert state.run_twice is not None and state.run_twice.asked == (1, 2)
    with pytest.raises(IllegalAction, match="not asked"):
        apply(state, Action.run_twice(3, agree=True))  # folded
    with pytest.raises(IllegalAction, match="deciding whether to run it twice"):
        apply(state, Action.call(1))
    state, _ = apply(state, Action.run_twice(1, agree=True))
    with pytest.raises(IllegalAction, match="already agreed"):
        apply(state, Action.run_twice(1, agree=False))
    assert state.can(Action.run_twice(2, agree=False))
    assert not state.can(Action.run_twice(1, agree=True))


def test_run_it_twice_is_not_offered_when_off_on_the_river_or_to_a_player_to_act() -> None:
    off = TableConfig(game="holdem", structure="NL", big_blind=100)
    state, _ = begin(off, {1: 10_000, 2: 10_000}, button=1)
    state, _ = run(state, "raise 10000", "call")
    assert state.is_over and state.run_twice is None
    # All-in on the river: nothing left to run.
    state, _ = begin(HOLDEM, {1: 10_000, 2: 10_000}, button=1)
    state, _ = run(state, "call", "check", "check", "check", "check", "check", "bet 9900")
    state, _ = run(state, "call")
    assert state.is_over and state.run_twice is None
    # Nobody is asked about an answer while the betting goes on.
    state, _ = begin(HOLDEM, {1: 10_000, 2: 10_000}, button=1)
    with pytest.raises(IllegalAction, match="Nobody is being asked"):
        apply(state, Action.run_twice(1, agree=True))


def test_run_it_twice_asks_the_one_player_with_chips_who_matched() -> None:
    state, _ = begin(
        HOLDEM, {1: 3000, 2: 10_000}, button=1, holes={1: "AhAd", 2: "KhKd"}, board="2s5c9c3h8d"
    )
    state, _ = run(state, "raise 3000", "call")
    assert state.run_twice is not None and state.run_twice.asked == (2, 1)
    assert state.stacks == [0, 7000]


def test_run_it_twice_state_and_events_round_trip_through_json() -> None:
    state, asked = heads_up_all_in("2s5c9c3h8d" + "KsKc7d4s6h")
    assert HandState.from_dict(state.to_dict()) == state
    assert state.view(None)["run_twice"] == {
        "asked": [2, 1],
        "agreed": [],
        "undecided": [2, 1],
        "runs": 0,
        "second_board": [],
    }
    state, events = agree_all(state, 1, 2)
    assert HandState.from_dict(state.to_dict()) == state
    assert state.view(2)["run_twice"]["second_board"] == ["Ks", "Kc", "7d", "4s", "6h"]
    for event in asked + events:
        assert event_from_dict(event.to_dict()) == event
    # A state and events stored before run it twice existed still load (one run).
    old = state.to_dict()
    del old["run_twice"], old["config"]["run_it_twice"]
    assert HandState.from_dict(old).run_twice is None
    old_board = {"type": "dealt_board", "street": "flop", "cards": ["2s", "5c", "9c"]}
    flop = tuple(parse_cards("2s5c9c"))
    assert event_from_dict(old_board) == DealtBoard(street="flop", cards=flop, run=1)


def test_run_it_twice_a_scoop_is_winning_both_runs_of_every_pot_whole() -> None:
    # Finer point 5 with two runs: the kill goes to a player who wins every half.
    config = TableConfig(
        game="holdem", structure="FL", big_blind=100, kill="full", run_it_twice=True
    )
    for board, scooper in (("2s5c9c3h8d" + "7s4d3c2hJc", 1), ("2s5c9c3h8d" + "KsKc7d4s6h", None)):
        state, _ = begin(
            config, {1: 300, 2: 300}, button=1, holes={1: "AhAd", 2: "KhKd"}, board=board
        )
        state, _ = run(state, "raise 200", "call")  # 200 each preflop
        state, _ = run(state, "bet 100", "call")  # all-in on the flop
        state, _ = agree_all(state, 2, 1)
        assert state.result is not None and state.result.scooped_by == scooper
        assert (state.result.next_kill is not None) == (scooper is not None)
