"""Golden replays of RULES.md examples: pot after every street and final stacks.

The expected numbers are worked out by hand in the comments (pokerkit ``test_wsop`` style),
not copied from the engine's output.
"""

from tables.engine.config import KillInfo, KillMode, TableConfig
from tables.engine.events import Event, Pots, Raked, Shown, Won
from tables.engine.testing import begin, run


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
