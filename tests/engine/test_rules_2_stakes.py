"""RULES.md section 2: stakes and betting structures, played through the state machine."""

import pytest

from tables.engine import errors
from tables.engine.actions import Action
from tables.engine.config import TableConfig
from tables.engine.events import Acted, Posted, UncalledReturned
from tables.engine.testing import act, begin, run

NL = TableConfig(game="holdem", structure="NL", big_blind=100)
PL = TableConfig(game="omaha", structure="PL", big_blind=100)
FL = TableConfig(game="holdem", structure="FL", big_blind=100)
SL = TableConfig(game="holdem", structure="SL", big_blind=100, spread_min=100, spread_max=300)


def stacks(n: int, chips: int = 10_000) -> dict[int, int]:
    return {seat: chips for seat in range(1, n + 1)}


# -- blinds and antes --------------------------------------------------------------------


def test_rules_2_blinds_left_of_button_and_first_to_act() -> None:
    state, events = begin(NL, stacks(4), button=1)
    posts = [(e.seat, e.kind, e.amount) for e in events if isinstance(e, Posted)]
    assert posts == [(2, "small_blind", 50), (3, "big_blind", 100)]
    assert state.actor == 4  # left of the big blind
    assert state.to_match == 100 and state.pot_total == 150


def test_rules_2_small_blind_is_half_rounded_down_in_play() -> None:
    cfg = TableConfig(game="holdem", structure="FL", big_blind=500)  # $5/$10 limit
    _, events = begin(cfg, stacks(3), button=1)
    assert [e.amount for e in events if isinstance(e, Posted)] == [200, 500]


def test_rules_2_antes_are_dead_money() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, ante=10)
    state, events = begin(cfg, stacks(3), button=1)
    antes = [(e.seat, e.amount) for e in events if isinstance(e, Posted) and e.kind == "ante"]
    assert antes == [(2, 10), (3, 10), (1, 10)]  # posted before the blinds, from the SB
    assert state.pot_total == 30 + 150
    legal = state.legal_actions()
    assert legal.call_amount == 100  # the ante does not count toward the call
    # Pot limit counts the antes in the pot; no-limit min raise ignores them.
    assert legal.min_to == 200


def test_rules_2_blinds_are_live_big_blind_option() -> None:
    state, _ = begin(NL, stacks(3), button=1)
    state, _ = run(state, "call", "call")  # button, small blind
    assert state.actor == 3
    legal = state.legal_actions()
    assert legal.can_check and legal.min_to == 200 and not legal.can_fold
    state, _ = act(state, "raise 300")
    assert state.actor == 1 and state.street == "preflop"


def test_rules_2_small_blind_can_raise_when_limped_to() -> None:
    state, _ = begin(NL, stacks(3), button=1)
    state, _ = act(state, "call")
    assert state.actor == 2
    legal = state.legal_actions()
    assert legal.call_amount == 50 and legal.min_to == 200


# -- fixed limit -------------------------------------------------------------------------


def test_rules_2_fixed_limit_exact_sizes_small_small_big_big() -> None:
    state, _ = begin(FL, stacks(2), button=1)
    legal = state.legal_actions()
    assert (legal.min_to, legal.max_to) == (200, 200)
    with pytest.raises(errors.BelowMinRaise):
        act(state, "raise 150")
    with pytest.raises(errors.AboveLimit):
        act(state, "raise 250")
    state, _ = run(state, "call", "check")
    for street, size in (("flop", 100), ("turn", 200), ("river", 200)):
        assert state.street == street
        legal = state.legal_actions()
        assert legal.is_bet and (legal.min_to, legal.max_to) == (size, size)
        state, _ = run(state, f"bet {size}", "call")
    assert state.is_over


def test_rules_2_fixed_limit_cap_preflop_big_blind_is_first_bet() -> None:
    state, _ = begin(FL, stacks(4), button=1)
    state, _ = run(state, "raise 200", "raise 300", "raise 400")  # raise, re-raise, cap
    legal = state.legal_actions()
    assert legal.min_to is None and legal.raise_closed == "betting_capped"
    with pytest.raises(errors.BettingCapped):
        act(state, "raise 500")
    assert state.actor == 3 and legal.call_amount == 300  # the big blind has 100 in


def test_rules_2_fixed_limit_cap_postflop_four_bets() -> None:
    state, _ = begin(FL, stacks(3), button=1)
    state, _ = run(state, "call", "call", "check")
    state, _ = run(state, "bet 100", "raise 200", "raise 300", "raise 400")
    assert state.legal_actions().raise_closed == "betting_capped"
    state, _ = run(state, "call", "call")
    assert state.street == "turn"


# -- spread limit ------------------------------------------------------------------------


def test_rules_2_spread_limit_min_max_and_previous_raise() -> None:
    state, _ = begin(SL, stacks(3), button=1)
    legal = state.legal_actions()
    assert (legal.min_to, legal.max_to) == (200, 400)
    state, _ = act(state, "raise 350")  # raise of 250
    legal = state.legal_actions()
    assert (legal.min_to, legal.max_to) == (600, 650)  # at least the previous raise
    with pytest.raises(errors.AboveLimit):
        act(state, "raise 700")


def test_finer_point_1_spread_limit_short_all_in_not_counted_toward_cap() -> None:
    st = {1: 10_000, 2: 10_000, 3: 10_000, 4: 550}
    state, _ = begin(SL, st, button=1)
    # Seat 4 first: raise to 300 (bet 2), seat 1 raises to 500 (bet 3).
    state, _ = run(state, "raise 300", "raise 500")
    # Seat 2 (SB) raises to 700 (bet 4 = cap)... first check short all-ins at seat 4 later.
    assert state.full_bets == 3
    state, _ = run(state, "call", "call")  # SB, BB call 500
    assert state.actor == 4
    state, events = act(state, "raise 550")  # all-in for a raise of 50: short
    assert events[0].all_in and state.full_bets == 3  # not counted toward the cap
    # Seat 1 already acted: the short all-in does not reopen the betting for them.
    assert state.legal_actions().raise_closed == "raise_not_reopened"


def test_finer_point_1_next_raise_on_top_of_short_all_in() -> None:
    st = {1: 10_000, 2: 10_000, 3: 10_000, 4: 10_000, 5: 250}
    state, _ = begin(SL, st, button=1)
    # Seat 4 raises to 200 (raise of 100); seat 5 all-in to 250 (short: +50).
    state, _ = run(state, "raise 200", "raise 250")
    assert state.full_bets == 2 and state.to_match == 250
    legal = state.legal_actions()  # seat 1 has not acted: may raise
    assert legal.min_to == 250 + 100 and legal.max_to == 250 + 300


# -- pot limit ---------------------------------------------------------------------------


def _pl_flop_pot_200() -> object:
    cfg = TableConfig(game="omaha", structure="PL", big_blind=50)
    state, _ = begin(cfg, stacks(4), button=4)  # SB 1, BB 2, UTG 3, button 4
    state, _ = run(state, "call", "call", "call", "check")
    assert state.street == "flop" and state.pot_total == 200
    return state


def test_rules_2_pot_limit_worked_example_through_state() -> None:
    state = _pl_flop_pot_200()
    state, _ = run(state, "bet 150", "call")  # A (seat 1) bets 150, B (seat 2) calls
    legal = state.legal_actions()  # C (seat 3)
    assert legal.call_amount == 150 and legal.max_to == 800
    with pytest.raises(errors.AbovePotLimit):
        act(state, "raise 801")
    state, _ = act(state, "raise 800")
    assert state.to_match == 800 and state.last_raise == 650


def test_rules_2_pot_limit_min_raise_is_previous_bet_or_raise() -> None:
    state = _pl_flop_pot_200()
    legal = state.legal_actions()
    assert (legal.min_to, legal.max_to) == (50, 200)  # min bet = big blind
    state, _ = act(state, "bet 150")
    assert state.legal_actions().min_to == 300
    state, _ = act(state, "raise 500")  # a raise of 350
    assert state.legal_actions().min_to == 850
    with pytest.raises(errors.BelowMinRaise):
        act(state, "raise 849")


def test_rules_2_min_bet_doubles_late_no_limit() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, min_bet_doubles_late=True)
    state, _ = begin(cfg, stacks(2), button=1)
    state, _ = run(state, "call", "check")
    assert state.legal_actions().min_to == 100  # flop: the big blind
    state, _ = run(state, "check", "check")
    assert state.street == "turn" and state.legal_actions().min_to == 200


def test_finer_point_11_pot_limit_big_bet_into_smaller_pot() -> None:
    cfg = TableConfig(game="omaha", structure="PL", big_blind=100, big_bet=1000,
                      min_bet_doubles_late=True)  # fmt: skip
    state, _ = begin(cfg, stacks(2), button=1)
    state, _ = run(state, "call", "check", "check", "check")
    assert state.street == "turn" and state.pot_total == 200
    legal = state.legal_actions()
    assert (legal.min_to, legal.max_to) == (1000, 1000)


# -- no limit ----------------------------------------------------------------------------


def test_rules_2_no_limit_max_is_the_stack() -> None:
    state, _ = begin(NL, {1: 5000, 2: 3000, 3: 8000}, button=3)
    legal = state.legal_actions()  # seat 3 (button, first), stack 8000
    assert (legal.min_to, legal.max_to) == (200, 8000)
    with pytest.raises(errors.ExceedsStack):
        act(state, "raise 8001")


def test_rules_2_cannot_reraise_own_raise() -> None:
    state, _ = begin(NL, stacks(3), button=1)
    state, _ = run(state, "raise 300", "call", "call")
    assert state.street == "flop"  # the raiser did not get the action back
    state, _ = run(state, "bet 100", "call", "call")
    assert state.street == "turn"


def test_rules_2_short_all_in_does_not_reopen_for_players_who_acted() -> None:
    """A bets 30, B calls, C raises all-in to less than 60: A may not raise again."""
    cfg = TableConfig(game="holdem", structure="NL", big_blind=10)
    st = {1: 1000, 2: 1000, 3: 60, 4: 1000}  # button 4: SB 1 (A), BB 2 (B), UTG 3 (C)
    state, _ = begin(cfg, st, button=4)
    state, _ = run(state, "call", "call", "call", "check")
    assert state.street == "flop" and state.stacks[2] == 50
    state, _ = run(state, "bet 30", "call")  # A bets 30, B calls
    state, events = act(state, "raise 50")  # C all-in to 50 (< 60)
    assert isinstance(events[0], Acted) and events[0].all_in
    # D (button) has not acted: may raise, at least a full 30 on top of the all-in.
    legal = state.legal_actions()
    assert state.actor == 4 and legal.min_to == 80
    state, _ = act(state, "call")
    legal = state.legal_actions()
    assert state.actor == 1 and legal.min_to is None
    assert legal.raise_closed == "raise_not_reopened" and legal.call_amount == 20
    with pytest.raises(errors.RaiseNotReopened):
        act(state, "raise 200")
    state, _ = run(state, "call", "call")
    assert state.street == "turn"


def test_short_all_in_then_full_raise_reopens() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=10)
    st = {1: 1000, 2: 1000, 3: 60, 4: 1000}
    state, _ = begin(cfg, st, button=4)
    state, _ = run(state, "call", "call", "call", "check", "bet 30", "call", "raise 50")
    state, _ = act(state, "raise 200")  # D: a full raise
    legal = state.legal_actions()
    assert state.actor == 1 and legal.min_to == 350


# -- table stakes, side pots and uncalled bets -------------------------------------------


def test_rules_2_all_in_for_less_call() -> None:
    state, _ = begin(NL, {1: 10_000, 2: 10_000, 3: 700}, button=1)
    state, _ = act(state, "raise 1000")  # button
    state, _ = act(state, "fold")  # SB
    legal = state.legal_actions()
    assert legal.call_amount == 600 and legal.call_all_in and legal.min_to is None


def test_rules_2_uncalled_bet_returned_before_pots() -> None:
    state, _ = begin(NL, stacks(3), button=1)
    state, events = run(state, "raise 1000", "fold", "fold")
    kinds = [e.type for e in events]
    assert kinds.index("uncalled_returned") < kinds.index("pots")
    returned = next(e for e in events if isinstance(e, UncalledReturned))
    assert (returned.seat, returned.amount) == (1, 900)
    assert state.is_over and state.stacks == [10_150, 9950, 9900]


def test_rules_2_uncalled_part_of_all_in_returned() -> None:
    state, _ = begin(NL, {1: 5000, 2: 10_000, 3: 800}, button=1)
    state, events = run(state, "raise 5000", "fold", "call")
    returned = next(e for e in events if isinstance(e, UncalledReturned))
    assert (returned.seat, returned.amount) == (1, 4200)
    assert state.is_over
    assert sum(state.stacks) + state.result.rake == 15_800


def test_big_blind_short_all_in_others_must_still_call_full_blind() -> None:
    state, events = begin(NL, {1: 10_000, 2: 10_000, 3: 30}, button=1)
    assert [(e.kind, e.amount, e.all_in) for e in events if isinstance(e, Posted)] == [
        ("small_blind", 50, False),
        ("big_blind", 30, True),
    ]
    assert state.legal_actions().call_amount == 100
    state, _ = run(state, "call", "call")  # button and SB: nobody else can act now
    assert state.street == "flop" and state.actor == 2


def test_heads_up_small_blind_covers_short_big_blind_no_action() -> None:
    state, events = begin(NL, {1: 10_000, 2: 30}, button=1)
    assert state.is_over  # SB already matches the all-in big blind: run it out
    returned = [e for e in events if isinstance(e, UncalledReturned)]
    assert [(e.seat, e.amount) for e in returned] == [(1, 20)]
    assert sum(state.stacks) + state.result.rake == 10_030


def test_raise_not_allowed_when_everyone_else_all_in() -> None:
    state, _ = begin(NL, {1: 10_000, 2: 10_000, 3: 500}, button=1)
    state, _ = run(state, "call", "fold")  # button calls, SB folds; BB (500 stack) to act
    state, _ = act(state, "raise 500")  # BB all-in
    legal = state.legal_actions()
    assert state.actor == 1 and legal.raise_closed == "opponents_all_in"
    with pytest.raises(errors.OpponentsAllIn):
        state.verify(Action.bet_raise(1, 2000))


def test_raise_not_allowed_when_nobody_could_call_any_of_it() -> None:
    state, _ = begin(NL, {1: 10_000, 2: 10_000, 3: 600, 4: 1000}, button=1)
    state, _ = run(state, "raise 1000", "fold")  # seat 4 all-in, the button folds
    legal = state.legal_actions()
    # Seat 3 (big blind) is still in but has only 600: nobody could call a raise.
    assert state.actor == 2 and legal.call_amount == 950
    assert legal.min_to is None and legal.raise_closed == "opponents_all_in"
    state, _ = run(state, "call", "call")
    assert state.is_over and sum(state.stacks) + state.result.rake == 21_600
