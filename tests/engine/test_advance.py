"""Queued advance actions (tables/engine/advance.py), no database."""

from tables.engine.actions import Action
from tables.engine.advance import advance_action, advance_still_valid
from tables.engine.config import TableConfig
from tables.engine.testing import act, begin

NL = TableConfig(game="holdem", structure="NL", big_blind=100, rake_percent=0)


def test_a_bet_or_raise_clears_calls_and_checks_but_not_folds() -> None:
    # Three-handed, button 1: seat 1 acts first preflop (to match: 100).
    state, _ = begin(NL, {1: 5000, 2: 5000, 3: 5000}, button=1)
    call = {"kind": "call", "street": "preflop", "to_match": 100}
    check_fold = {"kind": "check_fold", "street": "preflop", "to_match": 100}
    assert advance_still_valid(call, state) and advance_still_valid(check_fold, state)
    state, _ = act(state, "raise 300")
    assert not advance_still_valid(call, state)
    assert advance_still_valid(check_fold, state)
    assert not advance_still_valid({**check_fold, "street": "flop"}, state)


def test_what_an_advance_becomes_on_the_turn() -> None:
    state, _ = begin(NL, {1: 5000, 2: 5000, 3: 5000}, button=1)
    state, _ = act(state, "call")  # seat 1 calls; seat 2 (small blind) to act
    assert advance_action({"kind": "check_fold"}, state, 2) == Action.fold(2)
    assert advance_action({"kind": "check"}, state, 2) is None
    assert advance_action({"kind": "call"}, state, 2) == Action.call(2)
    assert advance_action({"kind": "bet_raise", "amount": 300}, state, 2) == Action.bet_raise(
        2, 300
    )
    assert advance_action({"kind": "bet_raise", "amount": 150}, state, 2) is None  # below min
    state, _ = act(state, "call")  # seat 3, the big blind, may check
    assert advance_action({"kind": "check_fold"}, state, 3) == Action.check(3)
    assert advance_action({"kind": "call"}, state, 3) is None
