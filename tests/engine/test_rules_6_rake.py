"""RULES.md section 6 and finer point 13: rake of whole hands."""

from tables.engine.config import TableConfig
from tables.engine.events import Raked, Won
from tables.engine.testing import begin, run

CAPS = ((2, 100), (3, 200), (5, 300))


def cfg(**kw: object) -> TableConfig:
    base: dict[str, object] = {"game": "holdem", "structure": "NL", "big_blind": 100}
    return TableConfig(**{**base, **kw})  # type: ignore[arg-type]


def even(n: int, chips: int = 100_000) -> dict[int, int]:
    return {seat: chips for seat in range(1, n + 1)}


def rake_of(events: list) -> Raked:
    return next(e for e in events if isinstance(e, Raked))


def test_rules_6_no_flop_no_drop() -> None:
    state, _ = begin(cfg(), even(3), button=1)
    state, events = run(state, "raise 1000", "call", "fold")
    assert state.street == "flop"
    state, events = run(state, "bet 20000", "fold")  # won uncontested on the flop: raked
    assert state.is_over and state.result.rake == 105  # 5 % of 2100, under the 300 cap
    state, _ = begin(cfg(), even(3), button=1)
    state, events = run(state, "raise 1000", "fold", "fold")
    assert state.is_over and state.result.rake == 0 and rake_of(events).amount == 0


def test_rules_6_uncontested_after_flop_is_raked_after_uncalled_return() -> None:
    state, _ = begin(cfg(rake_caps=()), even(3), button=1)
    state, _ = run(state, "call", "call", "check")  # pot 300
    state, events = run(state, "bet 5000", "fold", "fold")
    assert rake_of(events).amount == 15  # 5 % of 300; the uncalled 5000 is not raked
    assert [(e.seat, e.amount) for e in events if isinstance(e, Won)] == [(2, 285)]


def test_rules_6_cap_depends_on_players_dealt_in() -> None:
    for n, cap in ((2, 100), (3, 200), (4, 200), (5, 300), (7, 300)):
        state, _ = begin(cfg(rake_caps=CAPS), even(n), button=1)
        state, _ = run(state, "raise 100000", *["call"] * (n - 1))
        assert state.is_over and state.result.rake == cap, n


def test_rules_6_rake_taken_from_main_pot_first() -> None:
    holes = {1: "AhAd", 2: "KhKd", 3: "QhQd"}
    state, _ = begin(
        cfg(rake_percent=1000, rake_caps=()), {1: 100, 2: 1000, 3: 1000},
        button=3, holes=holes, board="2s5s9c3h8d",
    )  # fmt: skip
    state, events = run(state, "raise 1000", "call", "call")
    # Main pot 300 (x3 of 100), side pot 1800; rake 10 % of 2100 = 210 > main pot.
    assert state.result.rake == 210
    won = sorted((e.seat, e.pot, e.amount) for e in events if isinstance(e, Won))
    assert won == [(1, 0, 300 - 210), (2, 1, 1800)]


def test_rules_6_all_in_preflop_run_out_is_raked() -> None:
    state, _ = begin(cfg(rake_caps=()), even(2, 1000), button=1)
    state, _ = run(state, "raise 1000", "call")
    assert len(state.board) == 5 and state.result.rake == 100


def test_finer_point_13_contributed_rake_sums_to_rake() -> None:
    state, _ = begin(cfg(rake_caps=(), ante=7), even(3), button=1)
    state, _ = run(state, "call", "fold", "check", "bet 333", "call")
    state, events2 = run(state, "check", "check", "check", "check")
    raked = rake_of(events2)
    assert sum(s.amount for s in raked.contributed) == raked.amount == state.result.rake
    assert sum(state.result.contributed_rake) == raked.amount
    # The small blind folded with 57 in: a small share, but a share.
    shares = dict(zip(state.seats, state.result.contributed_rake, strict=True))
    assert shares[2] < shares[1] and shares[2] >= 1
