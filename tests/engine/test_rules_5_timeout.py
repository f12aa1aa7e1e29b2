"""RULES.md section 5 and finer point 8: what a timeout does, all-in protection."""

from tables.engine.config import TableConfig
from tables.engine.events import Acted, Protected, TimedOut, Won
from tables.engine.testing import act, begin, run

NL = TableConfig(game="holdem", structure="NL", big_blind=100, rake_percent=0)


def even(n: int) -> dict[int, int]:
    return {seat: 10_000 for seat in range(1, n + 1)}


def test_rules_5_timeout_checks_when_checking_is_free() -> None:
    state, _ = begin(NL, even(3), button=1)
    state, _ = run(state, "call", "call")
    state, events = act(state, "timeout")  # big blind's option
    assert events[0] == TimedOut(3, "check")
    assert isinstance(events[1], Acted) and events[1].action == "check"
    assert state.street == "flop"


def test_rules_5_timeout_with_blind_in_is_all_in_protected() -> None:
    holes = {1: "KhKd", 2: "AhAd", 3: "QhQd"}
    state, _ = begin(NL, even(3), button=1, holes=holes, board="2s5s9c3h8d")
    state, _ = act(state, "raise 300")  # button
    state, events = act(state, "timeout")  # small blind: 50 in
    assert events == [TimedOut(2, "protected"), Protected(2, 50)]
    assert state.status[1] == "protected" and state.stacks[1] == 9950
    state, _ = act(state, "call")  # big blind
    assert state.street == "flop" and state.actor == 3  # the protected seat is skipped
    state, events = run(state, "bet 1000", "call", "check", "check", "check", "check")
    assert state.is_over
    won = sorted((e.seat, e.pot, e.amount) for e in events if isinstance(e, Won))
    # The protected aces win only the pot as it stood (3 x 50); kings win the rest.
    assert won == [(1, 1, 2 * 1250), (2, 0, 150)]
    assert state.stacks == [10_000 - 1300 + 2500, 9950 + 150, 10_000 - 1300]


def test_finer_point_8_antes_do_not_count_as_money_in() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, ante=10)
    state, _ = begin(cfg, even(4), button=1)
    state, events = act(state, "timeout")  # seat 4: only an ante in
    assert events[0] == TimedOut(4, "fold")
    assert state.status[3] == "folded"


def test_rules_5_timeout_with_nothing_in_folds() -> None:
    state, _ = begin(NL, even(4), button=1)
    state, events = act(state, "timeout")
    assert events[0] == TimedOut(4, "fold") and state.status[3] == "folded"


def test_rules_5_protection_setting_off_folds() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, allin_protection=False)
    state, _ = begin(cfg, even(3), button=1)
    state, _ = act(state, "raise 300")
    state, events = act(state, "timeout")
    assert events[0] == TimedOut(2, "fold")


def test_rules_5_daily_protection_used_up_folds() -> None:
    state, _ = begin(NL, even(3), button=1)
    state, _ = act(state, "raise 300")
    state, events = act(state, "timeout noprotect")
    assert events[0] == TimedOut(2, "fold")


def test_protected_heads_up_runs_out_and_returns_uncalled() -> None:
    state, _ = begin(NL, even(2), button=1)
    state, _ = act(state, "raise 500")  # button/SB
    state, events = act(state, "timeout")  # BB protected with 100 in
    assert state.is_over
    returned = [e for e in events if e.type == "uncalled_returned"]
    assert [(e.seat, e.amount) for e in returned] == [(1, 400)]
    assert sum(state.stacks) == 20_000
