"""Golden replays of RULES.md examples: pot after every street and final stacks.

The expected numbers are worked out by hand in the comments (pokerkit ``test_wsop`` style),
not copied from the engine's output.
"""

from tables.engine.config import KillInfo, KillMode, TableConfig
from tables.engine.events import Event, Pots, Raked, Shown, Won
from tables.engine.testing import act, begin, run


def pots_by_street(events: list[Event]) -> dict[str, list[tuple[int, tuple[int, ...]]]]:
    return {
        e.street: [(p.amount, p.eligible) for p in e.pots] for e in events if isinstance(e, Pots)
    }


def test_replay_pot_limit_raise_to_800() -> None:
    """RULES 2: pot 200, A bets 150, B calls, C raises to 800 (150 + 650)."""
    cfg = TableConfig(game="omaha", structure="PL", big_blind=50)  # 5 % rake, cap 300
    holes = {1: "7c7d8c8d", 2: "AhAdKhKd", 3: "2c3c4d5d", 4: "JcJdTcTd"}
    state, log = begin(cfg, {s: 5000 for s in (1, 2, 3, 4)}, button=4, holes=holes,
                       board="AsKc7h8s9d")  # fmt: skip
    # A = seat 1 (SB), B = seat 2 (BB), C = seat 3, D = seat 4 (button).
    state, ev = run(state, "call", "call", "call", "check")
    log += ev
    assert state.pot_total == 200
    state, ev = run(state, "bet 150", "call")
    log += ev
    assert state.legal_actions().max_to == 800
    state, ev = run(state, "raise 800", "fold", "fold", "call")
    log += ev
    state, ev = run(state, "check", "check", "check", "check")
    log += ev
    assert pots_by_street(log) == {
        "preflop": [(200, (1, 2, 3, 4))],
        "flop": [(200 + 150 + 800 + 800, (2, 3))],
        "turn": [(1950, (2, 3))],
        "river": [(1950, (2, 3))],
    }
    raked = next(e for e in log if isinstance(e, Raked))
    assert raked.amount == 97  # 5 % of 1950, floored
    # Shares 9/42/42/2 floored; the two left-over cents to B and C (largest, clockwise).
    assert [(s.seat, s.amount) for s in raked.contributed] == [(1, 9), (2, 43), (3, 43), (4, 2)]
    assert [e.seat for e in log if isinstance(e, Shown)] == [2]  # C mucks the losing hand
    assert state.stacks == [4800, 5000 - 850 + 1853, 4150, 4950]
    assert sum(state.stacks) + 97 == 20_000


def test_replay_short_all_in_does_not_reopen() -> None:
    """RULES 2: A bets 30, B calls, C all-in to 50 (< 60): A may only call or fold."""
    cfg = TableConfig(game="holdem", structure="NL", big_blind=10)
    holes = {1: "QhQd", 2: "JhJd", 3: "AhAd", 4: "KhKd"}
    state, log = begin(cfg, {1: 1000, 2: 1000, 3: 60, 4: 1000}, button=4, holes=holes,
                       board="2s5s9c3h8d")  # fmt: skip
    state, ev = run(state, "call", "call", "call", "check")  # C, D, A (SB), B (BB)
    log += ev
    state, ev = run(state, "bet 30", "call", "raise 50", "call")  # A, B, C all-in, D
    log += ev
    assert state.actor == 1 and state.legal_actions().raise_closed == "raise_not_reopened"
    state, ev = run(state, "call", "call")
    log += ev
    state, ev = run(state, "bet 100", "fold", "call", "check", "check")  # turn A, B, D; river
    log += ev
    assert pots_by_street(log) == {
        "preflop": [(40, (1, 2, 3, 4))],
        "flop": [(240, (1, 2, 3, 4))],
        "turn": [(240, (1, 3, 4)), (200, (1, 4))],
        "river": [(240, (1, 3, 4)), (200, (1, 4))],
    }
    won = [(e.seat, e.pot, e.amount) for e in log if isinstance(e, Won)]
    assert won == [(3, 0, 240 - 22), (4, 1, 200)]  # 5 % of 440 from the main pot first
    assert state.stacks == [840, 940, 218, 1040]


def test_replay_odd_chip_split_seven_seven_six() -> None:
    """RULES 3.9: 20 split three ways: 7/7/6, odd chips clockwise from the button's left."""
    cfg = TableConfig(game="holdem", structure="NL", big_blind=6, small_blind=2, rake_percent=0)
    holes = {1: "4d5c", 2: "2c3d", 3: "4c5d", 4: "2d3c"}
    state, log = begin(cfg, {s: 1000 for s in (1, 2, 3, 4)}, button=4, holes=holes,
                       board="AsKsQsJsTs")  # fmt: skip
    state, ev = run(state, "call", "call", "fold", "check", *["check"] * 9)
    log += ev
    assert pots_by_street(log)["river"] == [(20, (2, 3, 4))]
    won = [(e.seat, e.amount) for e in log if isinstance(e, Won)]
    assert won == [(2, 7), (3, 7), (4, 6)]
    assert state.stacks == [998, 1001, 1001, 1000]


def test_replay_kill_pot() -> None:
    """RULES 7: a scoop of at least kill_min_pot makes the next hand a full kill."""
    cfg = TableConfig(game="holdem", structure="FL", big_blind=100, kill="full", kill_min_pot=400)
    # Hand 1: seat 1 (button) scoops 800.
    state, log = begin(cfg, {1: 10_000, 2: 10_000, 3: 10_000}, button=1,
                       holes={1: "AhAd", 2: "KhKd", 3: "QhQd"}, board="2s5s9c3h8d")  # fmt: skip
    state, ev = run(state, "raise 200", "call", "call", "bet 100", "fold", "call")
    log += ev
    state, ev = run(state, *["check"] * 4)
    log += ev
    assert [p[0] for p in pots_by_street(log)["river"]] == [800]
    assert state.result.rake == 40 and state.result.next_kill == KillInfo(1, KillMode.FULL)
    stacks = dict(zip(state.seats, state.stacks, strict=True))
    assert stacks == {1: 10_460, 2: 9700, 3: 9800}

    # Hand 2: the button moves to seat 2; the killer is the big blind: the kill blind
    # (200, the new small bet) replaces the big blind; limits are 200/400.
    state, log = begin(cfg, stacks, button=2, kill=state.result.next_kill,
                       holes={1: "7h7d", 2: "AcAs", 3: "JhJd"}, board="KsQd4c2h9h")  # fmt: skip
    assert [(e.seat, e.kind, e.amount) for e in log if e.type == "posted"] == [
        (3, "small_blind", 50),
        (1, "kill_blind", 200),
    ]
    state, ev = run(state, "raise 400", "fold", "call")  # button, SB, killer
    log += ev
    state, ev = run(state, "bet 200", "raise 400", "call")  # flop: killer, button, killer
    log += ev
    state, ev = run(state, "check", "bet 400", "call", "check", "check")
    log += ev
    assert {k: [p[0] for p in v] for k, v in pots_by_street(log).items()} == {
        "preflop": [850],
        "flop": [1650],
        "turn": [2450],
        "river": [2450],
    }
    assert state.result.rake == 122
    assert dict(zip(state.seats, state.stacks, strict=True)) == {1: 9260, 2: 10_828, 3: 9750}
    assert state.result.next_kill == KillInfo(2, KillMode.FULL)  # same level, no compounding


# -- finer points 17 to 21 (RULES.md section 8) -------------------------------------------


def test_replay_finer_point_17_short_big_blind_wins_only_what_it_posted() -> None:
    """Blinds 1/2, the big blind all-in for 1: the others call 2, and the big blind's
    aces win 1 from each of the four players; the rest is a side pot."""
    cfg = TableConfig(game="holdem", structure="NL", big_blind=2, rake_percent=0)
    holes = {1: "KhQd", 2: "JhTd", 3: "AhAd", 4: "7c7d"}
    state, log = begin(cfg, {1: 100, 2: 100, 3: 1, 4: 100}, button=1, holes=holes,
                       board="2s5s9c3h8d")  # fmt: skip
    # Seat 2 is the small blind, seat 3 the short big blind, seat 4 first to act.
    state, ev = run(state, "call", "call", "call")  # seat 4, the button, the SB completes
    log += ev
    state, ev = run(state, *["check"] * 9)  # seats 2, 4 and 1 on flop, turn and river
    log += ev
    main, side = (4, (1, 2, 3, 4)), (3, (1, 2, 4))  # 1 from each of 4; 1 more from 3
    assert pots_by_street(log) == {s: [main, side] for s in ("preflop", "flop", "turn", "river")}
    won = [(e.seat, e.pot, e.amount) for e in log if isinstance(e, Won)]
    assert won == [(3, 0, 4), (4, 1, 3)]  # the sevens beat K-Q and J-T for the side pot
    assert state.stacks == [98, 98, 4, 101]


def test_replay_finer_point_18_pot_limit_raise_over_a_short_big_blind() -> None:
    """PL 100/200, the big blind all-in for 100: seat 4 raises the pot, to 700 (200 to
    call + 100 + 200 + 200, the big blind counted in full); the small blind calls. On the
    flop only chips count: the pot bet is 1500."""
    cfg = TableConfig(game="omaha", structure="PL", big_blind=200, small_blind=100,
                      rake_percent=0)  # fmt: skip
    holes = {1: "7s7h7d7c", 2: "QsQdJsJd", 3: "AsAhKsKh", 4: "KcKdTcTd"}
    state, log = begin(cfg, {1: 10_000, 2: 10_000, 3: 100, 4: 10_000}, button=1,
                       holes=holes, board="2s5d9c3h8c")  # fmt: skip
    assert state.legal_actions().max_to == 700
    state, ev = run(state, "raise 700", "fold", "call")  # seat 4, the button, the SB
    log += ev
    assert state.street == "flop" and state.legal_actions().max_to == 1500
    state, ev = run(state, "bet 1500", "call", *["check"] * 4)
    log += ev
    main = (300, (2, 3, 4))  # 100 from each of the three
    assert pots_by_street(log) == {
        "preflop": [main, (1200, (2, 4))],
        "flop": [main, (1200 + 3000, (2, 4))],
        "turn": [main, (4200, (2, 4))],
        "river": [main, (4200, (2, 4))],
    }
    won = [(e.seat, e.pot, e.amount) for e in log if isinstance(e, Won)]
    assert won == [(3, 0, 300), (4, 1, 4200)]  # aces win the main pot, kings the side pot
    assert state.stacks == [10_000, 10_000 - 2200, 300, 10_000 - 2200 + 4200]


def test_replay_finer_point_19_short_all_ins_reopen_the_betting() -> None:
    """RULES example, NL 1/2: A bets 100, B all-in 150, X calls, C all-in 210, D calls; A
    faces 110 and raises to 310; X faces 160 and folds; D calls."""
    cfg = TableConfig(game="holdem", structure="NL", big_blind=2, rake_percent=0)
    holes = {1: "QhQd", 2: "AhAd", 3: "7c7d", 4: "KhKd", 5: "JhJd", 6: "4c4d"}
    st = {1: 1000, 2: 152, 3: 1000, 4: 212, 5: 1000, 6: 1000}
    state, log = begin(cfg, st, button=6, holes=holes, board="2s5s9c3hTd")
    # A = seat 1 (SB), B = 2 (BB), X = 3, C = 4, D = 5; the button folds.
    state, ev = run(state, "call", "call", "call", "fold", "call", "check")
    log += ev
    state, ev = run(state, "bet 100", "raise 150", "call", "raise 210", "call")
    log += ev
    assert state.actor == 1 and state.legal_actions().min_to == 310
    state, ev = run(state, "raise 310", "fold", "call", *["check"] * 4)
    log += ev
    # In all: A and D 312, B and X 152 (X folded), C 212.
    pots = [(152 * 5, (1, 2, 4, 5)), (60 * 3, (1, 4, 5)), (100 * 2, (1, 5))]
    assert pots_by_street(log) == {
        "preflop": [(10, (1, 2, 3, 4, 5))],
        "flop": pots,
        "turn": pots,
        "river": pots,
    }
    won = [(e.seat, e.pot, e.amount) for e in log if isinstance(e, Won)]
    assert won == [(2, 0, 760), (4, 1, 180), (1, 2, 200)]
    assert state.stacks == [1000 - 312 + 200, 760, 1000 - 152, 180, 1000 - 312, 1000]


def test_replay_finer_point_20_nobody_left_to_call_a_raise() -> None:
    """The button is all-in for 1000 and the big blind has 1000 in all: the small blind
    may only call; the big blind calls all-in and the board runs out."""
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, rake_percent=0)
    holes = {1: "KhKd", 2: "QhQd", 3: "AhAd"}
    state, log = begin(cfg, {1: 1000, 2: 10_000, 3: 1000}, button=1, holes=holes,
                       board="2s5s9c3h8d")  # fmt: skip
    state, ev = act(state, "raise 1000")
    log += ev
    assert state.legal_actions().raise_closed == "opponents_all_in"
    state, ev = run(state, "call", "call")
    log += ev
    assert state.is_over and state.runout
    assert pots_by_street(log) == {"preflop": [(3000, (1, 2, 3))]}
    assert [(e.seat, e.amount) for e in log if isinstance(e, Won)] == [(3, 3000)]
    assert state.stacks == [0, 9000, 3000]


def test_replay_finer_point_21_fixed_limit_short_all_in_and_the_cap() -> None:
    """FL 100/200 flop: bet, raise, re-raise, then seat 4 all-in for 50 more (not a bet);
    seat 5 caps with a full bet on top of it, to 450; everyone calls."""
    cfg = TableConfig(game="holdem", structure="FL", big_blind=100, rake_percent=0)
    holes = {1: "QhQd", 2: "JhJd", 3: "ThTd", 4: "AhAd", 5: "KhKd"}
    st = {1: 10_000, 2: 10_000, 3: 10_000, 4: 450, 5: 10_000}
    state, log = begin(cfg, st, button=5, holes=holes, board="2s5s9c3h8d")
    state, ev = run(state, "call", "call", "call", "call", "check")
    log += ev
    state, ev = run(state, "bet 100", "raise 200", "raise 300", "raise 350", "raise 450")
    log += ev
    assert state.legal_actions().raise_closed == "betting_capped"
    state, ev = run(state, "call", "call", "call", *["check"] * 8)
    log += ev
    pots = [(450 * 5, (1, 2, 3, 4, 5)), (100 * 4, (1, 2, 3, 5))]
    assert pots_by_street(log) == {
        "preflop": [(500, (1, 2, 3, 4, 5))],
        "flop": pots,
        "turn": pots,
        "river": pots,
    }
    won = [(e.seat, e.pot, e.amount) for e in log if isinstance(e, Won)]
    assert won == [(4, 0, 2250), (5, 1, 400)]
    assert state.stacks == [9450, 9450, 9450, 2250, 9450 + 400]
