"""RULES §2 as the table offers it (tables/engine/presets.py): the bet-size shortcuts of
the actor and the advance options of the players waiting, each an amount the engine
would accept."""

from tables.engine.actions import Action
from tables.engine.config import TableConfig
from tables.engine.presets import advance_options, bet_presets
from tables.engine.testing import begin, run

HOLES = {1: "7c7d8c8d", 2: "AhAdKhKd", 3: "2c3c4d5d", 4: "JcJdTcTd"}


def pot_limit_facing_a_bet():
    """PL Omaha, blinds 25/50: four limp (pot 200), on the flop A bets 150, B calls;
    C to act (RULES §2's example: C may raise to 800)."""
    cfg = TableConfig(game="omaha", structure="PL", big_blind=50)
    state, _ = begin(cfg, {s: 5000 for s in (1, 2, 3, 4)}, button=4, holes=HOLES,
                     board="AsKc7h8s9d")  # fmt: skip
    state, _ = run(state, "call", "call", "call", "check", "bet 150", "call")
    return state


def test_the_pot_shortcut_is_the_pot_limit_raise_and_half_pot_half_of_it():
    state = pot_limit_facing_a_bet()
    legal = state.legal_actions()
    presets = bet_presets(state, legal)
    # Pot after C calls 150: 200 + 150 + 150 + 150 = 650; pot raise to 150 + 650 = 800.
    assert presets == {"min": 300, "half": 150 + 650 // 2, "pot": 800, "allin": 800}
    assert presets["pot"] == legal.max_to
    for amount in presets.values():
        assert state.can(Action.bet_raise(legal.seat, amount))


def test_shortcuts_are_clamped_to_what_the_player_may_bet():
    cfg = TableConfig(game="omaha", structure="PL", big_blind=50)
    state, _ = begin(cfg, {1: 5000, 2: 5000, 3: 260, 4: 5000}, button=4, holes=HOLES,
                     board="AsKc7h8s9d")  # fmt: skip
    state, _ = run(state, "call", "call", "call", "check", "bet 150", "call")
    legal = state.legal_actions()  # C has 210 behind: every shortcut is the all-in
    assert set(bet_presets(state, legal).values()) == {legal.all_in_to}


def test_no_shortcuts_when_no_bet_or_raise_is_possible():
    cfg = TableConfig(game="omaha", structure="FL", big_blind=50)
    state, _ = begin(cfg, {s: 5000 for s in (1, 2, 3, 4)}, button=4, holes=HOLES,
                     board="AsKc7h8s9d")  # fmt: skip
    state, _ = run(state, "raise 100", "raise 150", "raise 200")  # capped at 4 bets
    assert state.legal_actions().raise_closed == "betting_capped"
    assert bet_presets(state, state.legal_actions()) is None


def test_a_waiting_player_sees_what_a_call_costs_and_where_a_queued_raise_goes():
    state = pot_limit_facing_a_bet()
    options = {o["seat"]: o for o in advance_options(state)}
    assert 3 not in options  # the actor decides now
    # D (seat 4) owes the 150 bet; a queued raise goes to a minimum raise of it.
    assert options[4] == {"seat": 4, "owed": 150, "raise_to": 300}
    assert options[1]["owed"] == 0 and options[2]["owed"] == 0


def test_in_fixed_limit_a_queued_raise_is_one_more_bet():
    cfg = TableConfig(game="omaha", structure="FL", big_blind=50)
    state, _ = begin(cfg, {s: 5000 for s in (1, 2, 3, 4)}, button=4, holes=HOLES,
                     board="AsKc7h8s9d")  # fmt: skip
    state, _ = run(state, "raise 100")
    assert {o["raise_to"] for o in advance_options(state)} == {100 + state.limits.small_bet}
