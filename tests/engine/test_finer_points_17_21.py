"""RULES.md section 8, finer points 17 to 21, played through the state machine.

17: a blind posted all-in for less counts in full for everyone else. 18: the preflop
pot-limit maximum counts every blind in full. 19: several short all-ins that together make
a full bet or raise reopen the betting for a player who already acted. 20: nobody may bet
or raise when nobody else could call any of it. 21: finer point 1 in fixed limit.

Where pokerkit plays these differently, ``test_differential.py`` pins the difference; the
golden replays of these points are in ``test_replays.py``.
"""

import json

import pytest

from tables.engine import errors
from tables.engine.config import KillInfo, KillMode, TableConfig
from tables.engine.events import Event, HandStarted, Posted, Pots
from tables.engine.state import HandState
from tables.engine.testing import act, begin, run

NL_1_2 = TableConfig(game="holdem", structure="NL", big_blind=2, rake_percent=0)


def posts(events: list[Event]) -> list[tuple[int, str, int, bool]]:
    return [(e.seat, e.kind, e.amount, e.all_in) for e in events if isinstance(e, Posted)]


def options(state: HandState) -> tuple[int | None, int | None, int | None, str | None]:
    """(call amount, min to, max to, why no raise) of the player to act."""
    legal = state.legal_actions()
    return legal.call_amount, legal.min_to, legal.max_to, legal.raise_closed


def preflop_pots(events: list[Event]) -> list[tuple[int, tuple[int, ...]]]:
    pots = next(e for e in events if isinstance(e, Pots) and e.street == "preflop")
    return [(p.amount, p.eligible) for p in pots.pots]


# -- 17: a short blind counts in full for everyone else -----------------------------------


def test_finer_point_17_no_limit_short_big_blind_counts_in_full() -> None:
    """RULES example: blinds 1/2, big blind all-in for 1: calling costs 2, min raise to 4."""
    state, events = begin(NL_1_2, {1: 100, 2: 100, 3: 1, 4: 100}, button=1)
    assert posts(events) == [(2, "small_blind", 1, False), (3, "big_blind", 1, True)]
    assert state.actor == 4 and options(state) == (2, 4, 100, None)
    state, _ = run(state, "call", "call")  # seat 4, the button
    assert state.actor == 2 and state.legal_actions().call_amount == 1  # SB completes to 2
    state, events = act(state, "call")
    # The short poster wins from each player only what they posted.
    assert state.street == "flop" and preflop_pots(events) == [(4, (1, 2, 3, 4)), (3, (1, 2, 4))]


def test_finer_point_17_fixed_limit_short_big_blind_counts_in_full() -> None:
    """RULES example: $3/$6 limit, big blind all-in for $1: calling costs $3, a raise is to
    $6, and the blind is the first of the four bets."""
    cfg = TableConfig(game="holdem", structure="FL", big_blind=300)
    state, events = begin(cfg, {1: 10_000, 2: 10_000, 3: 100, 4: 10_000, 5: 10_000}, button=1)
    assert posts(events) == [(2, "small_blind", 100, False), (3, "big_blind", 100, True)]
    assert state.actor == 4 and options(state) == (300, 600, 600, None)
    state, _ = run(state, "raise 600", "raise 900", "raise 1200")  # bets 2, 3 and 4
    assert state.actor == 2 and options(state) == (1100, None, None, "betting_capped")


def test_finer_point_17_spread_limit_short_big_blind_counts_in_full() -> None:
    cfg = TableConfig(game="holdem", structure="SL", big_blind=100, spread_min=100,
                      spread_max=300)  # fmt: skip
    state, events = begin(cfg, {1: 10_000, 2: 10_000, 3: 40, 4: 10_000}, button=1)
    assert posts(events)[-1] == (3, "big_blind", 40, True)
    assert state.actor == 4 and options(state) == (100, 200, 400, None)
    state, _ = run(state, "call", "call")
    assert state.actor == 2 and state.legal_actions().call_amount == 50


def test_finer_point_17_pot_limit_short_big_blind_counts_in_full() -> None:
    cfg = TableConfig(game="omaha", structure="PL", big_blind=200, small_blind=100)
    state, _ = begin(cfg, {1: 10_000, 2: 10_000, 3: 100, 4: 10_000}, button=1)
    call, min_to, _, _ = options(state)
    assert (call, min_to) == (200, 400)  # the maximum is finer point 18's
    state, _ = run(state, "call", "call")
    assert state.actor == 2 and state.legal_actions().call_amount == 100


FL_KILL = TableConfig(game="holdem", structure="FL", big_blind=100, kill="full")


def test_finer_point_17_short_kill_blind_counts_in_full() -> None:
    """A full kill at 100/200 makes the kill blind 200; the killer has 150."""
    st = {1: 10_000, 2: 10_000, 3: 10_000, 4: 150}
    state, events = begin(FL_KILL, st, button=1, kill=KillInfo(4, KillMode.FULL))
    assert posts(events)[-1] == (4, "kill_blind", 150, True)
    assert state.actor == 1 and options(state) == (200, 400, 400, None)
    # The kill blind is the first bet (finer point 3): three raises cap the round.
    capped, _ = run(state, "raise 400", "raise 600", "raise 800")
    assert capped.actor == 1 and options(capped)[3] == "betting_capped"
    state, events = run(state, "call", "call", "call")  # the SB adds 150, the BB 100
    assert preflop_pots(events) == [(600, (1, 2, 3, 4)), (150, (1, 2, 3))]


def test_finer_point_17_short_kill_blind_replacing_the_big_blind() -> None:
    st = {1: 10_000, 2: 10_000, 3: 150, 4: 10_000}
    state, events = begin(FL_KILL, st, button=1, kill=KillInfo(3, KillMode.FULL))
    assert posts(events) == [(2, "small_blind", 50, False), (3, "kill_blind", 150, True)]
    assert state.actor == 4 and options(state) == (200, 400, 400, None)
    state, _ = run(state, "call", "call")
    assert state.actor == 2 and state.legal_actions().call_amount == 150


def test_finer_point_17_short_newcomer_big_blind_counts_in_full() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, rake_percent=0)
    st = {1: 10_000, 2: 10_000, 3: 10_000, 4: 10_000, 5: 60}
    state, events = begin(cfg, st, button=1, options={5: {"posts_big_blind": True}})
    assert posts(events)[-1] == (5, "newcomer_big_blind", 60, True)
    assert state.actor == 4 and options(state)[:2] == (100, 200)
    state, events = run(state, "call", "call", "call", "check")  # seats 4, 1, 2, 3
    assert preflop_pots(events) == [(300, (1, 2, 3, 4, 5)), (160, (1, 2, 3, 4))]


def test_finer_point_17_straddle_is_never_posted_short() -> None:
    """The engine never posts a short straddle (nor a short overblind): both are voluntary
    and are honoured only when the player has the chips to post them in full (state.py),
    so finer point 17's short straddle cannot arise. A straddle asked for with too few
    chips is simply not posted."""
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, allow_straddle=True)
    st = {1: 10_000, 2: 10_000, 3: 10_000, 4: 150}
    state, events = begin(cfg, st, button=1, options={4: {"straddle": True}})
    started = next(e for e in events if isinstance(e, HandStarted))
    assert started.straddle_seat is None and state.straddler is None
    assert posts(events) == [(2, "small_blind", 50, False), (3, "big_blind", 100, False)]
    assert state.actor == 4 and state.to_match == 100
    _, events = begin(cfg, {**st, 4: 200}, button=1, options={4: {"straddle": True}})
    assert posts(events)[-1] == (4, "straddle", 200, True)  # in full: all-in, not short


# -- 18: the preflop pot-limit maximum counts every blind in full -------------------------

PL_100_200 = TableConfig(game="omaha", structure="PL", big_blind=200, small_blind=100)


def test_finer_point_18_preflop_pot_limit_counts_a_short_big_blind_in_full() -> None:
    """RULES example: PL 100/200, SB 100, BB all-in for 100: the first player may raise to
    700 (200 to call, then the pot 100 + 200 + 200)."""
    state, _ = begin(PL_100_200, {1: 10_000, 2: 10_000, 3: 100, 4: 10_000}, button=1)
    assert state.pot_total == 200  # the chips really in
    assert options(state) == (200, 400, 700, None)
    with pytest.raises(errors.AbovePotLimit):
        act(state, "raise 701")
    state, _ = act(state, "raise 700")
    # The button: 700 to call; the pot after calling is 100 + 200 + 700 + 700 = 1700.
    assert options(state) == (700, 1200, 700 + 1700, None)


def test_finer_point_18_from_the_flop_on_only_chips_in_the_pot_count() -> None:
    state, _ = begin(PL_100_200, {1: 10_000, 2: 10_000, 3: 100, 4: 10_000}, button=1)
    state, _ = run(state, "call", "call", "call")  # seat 4, the button, the SB
    assert state.street == "flop" and state.pot_total == 700  # 200 + 200 + 200 + 100
    assert state.actor == 2 and options(state) == (None, 200, 700, None)


def test_finer_point_18_short_small_blind_counts_in_full() -> None:
    state, events = begin(PL_100_200, {1: 10_000, 2: 30, 3: 10_000, 4: 10_000}, button=1)
    assert posts(events)[0] == (2, "small_blind", 30, True)
    assert options(state) == (200, 400, 200 + (100 + 200 + 200), None)


def test_finer_point_18_short_newcomer_big_blind_counts_in_full() -> None:
    cfg = TableConfig(game="omaha", structure="PL", big_blind=100)
    st = {1: 10_000, 2: 10_000, 3: 10_000, 4: 10_000, 5: 60}
    state, _ = begin(cfg, st, button=1, options={5: {"posts_big_blind": True}})
    assert options(state) == (100, 200, 100 + (50 + 100 + 100 + 100), None)


def test_finer_point_18_big_blind_all_in_from_the_ante_counts_in_full() -> None:
    """A big blind the ante put all-in posts nothing, yet still sets the call (17) and
    counts in full in the pot (18)."""
    cfg = TableConfig(game="omaha", structure="PL", big_blind=200, small_blind=100, ante=20)
    state, events = begin(cfg, {1: 10_000, 2: 10_000, 3: 20, 4: 10_000}, button=1)
    assert (3, "big_blind", 0, True) not in posts(events) and state.to_match == 200
    assert options(state) == (200, 400, 200 + (4 * 20 + 100 + 200 + 200), None)


def test_finer_point_18_shortfall_survives_json_and_older_states_load() -> None:
    """The table services keep the state as JSON between actions; a state saved before
    ``blind_shortfall`` existed loads with none."""
    state, _ = begin(PL_100_200, {1: 10_000, 2: 10_000, 3: 100, 4: 10_000}, button=1)
    saved = json.loads(json.dumps(state.to_dict()))
    assert saved["blind_shortfall"] == 100
    assert options(HandState.from_dict(saved))[2] == 700
    del saved["blind_shortfall"]
    assert options(HandState.from_dict(saved))[2] == 600  # as the engine played it then


# -- 19: several short all-ins reopen the betting for a player who acted ------------------


def _flop_a_b_x_c_d(cfg: TableConfig, a_stack: int = 1000) -> HandState:
    """The RULES example up to D's call: A bets 100, B all-in 150, X calls, C all-in 210,
    D calls. Seats: A 1 (SB), B 2 (BB), X 3, C 4, D 5, button 6 (folds); all limp in for
    one big blind, so B has 150 and C 210 behind on the flop."""
    bb = cfg.big_blind
    st = {1: a_stack, 2: bb + 150, 3: 1000, 4: bb + 210, 5: 1000, 6: 1000}
    state, _ = begin(cfg, st, button=6)
    state, _ = run(state, "call", "call", "call", "fold", "call", "check")
    assert state.street == "flop" and state.actor == 1
    state, _ = run(state, "bet 100", "raise 150", "call", "raise 210", "call")
    assert state.actor == 1 and state.full_bets == 1  # the short all-ins are not bets
    return state


def test_finer_point_19_several_short_all_ins_reopen_for_a_player_who_acted() -> None:
    """RULES example, NL 1/2: A faces 110 more and may raise, to at least 310; the player
    who had called 150 faces 60 and may only call or fold."""
    state = _flop_a_b_x_c_d(NL_1_2)
    assert options(state) == (110, 310, 998, None)
    with pytest.raises(errors.BelowMinRaise):
        act(state, "raise 309")
    called, _ = act(state, "call")
    assert called.actor == 3 and options(called) == (60, None, None, "raise_not_reopened")
    with pytest.raises(errors.RaiseNotReopened):
        act(called, "raise 400")
    raised, _ = act(state, "raise 310")  # a full raise: reopens for everyone
    assert raised.actor == 3 and options(raised) == (160, 410, 998, None)


def test_finer_point_19_fixed_limit_one_full_bet_on_top_of_the_largest_all_in() -> None:
    cfg = TableConfig(game="holdem", structure="FL", big_blind=100)
    state = _flop_a_b_x_c_d(cfg)
    assert options(state) == (110, 310, 310, None)
    called, _ = act(state, "call")
    assert options(called) == (60, None, None, "raise_not_reopened")
    raised, _ = act(state, "raise 310")
    assert raised.full_bets == 2 and options(raised) == (160, 410, 410, None)


def test_finer_point_19_spread_limit() -> None:
    cfg = TableConfig(game="holdem", structure="SL", big_blind=100, spread_min=100,
                      spread_max=300)  # fmt: skip
    state = _flop_a_b_x_c_d(cfg)
    assert options(state) == (110, 310, 210 + 300, None)
    called, _ = act(state, "call")
    assert options(called) == (60, None, None, "raise_not_reopened")


def test_finer_point_19_pot_limit() -> None:
    cfg = TableConfig(game="holdem", structure="PL", big_blind=100)
    state = _flop_a_b_x_c_d(cfg, a_stack=5000)
    pot = 5 * 100 + 100 + 150 + 150 + 210 + 210  # 1320
    assert options(state) == (110, 310, 210 + pot + 110, None)


def test_finer_point_19_short_all_ins_short_of_a_full_raise_still_do_not_reopen() -> None:
    """A bets 100, B all-in 130, C all-in 180: A faces 80, less than the 100 bet."""
    st = {1: 1000, 2: 132, 3: 182, 4: 1000}
    state, _ = begin(NL_1_2, st, button=4)
    state, _ = run(state, "call", "call", "call", "check")
    state, _ = run(state, "bet 100", "raise 130", "raise 180", "call")
    assert state.actor == 1 and options(state) == (80, None, None, "raise_not_reopened")


def test_finer_point_19_reopens_for_a_player_who_checked() -> None:
    """A checks, B bets all-in 50 (below the 100 minimum), C all-in to 120, D calls: A
    faces 120, more than a full bet, and may raise to at least 220."""
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100)
    st = {1: 10_000, 2: 150, 3: 220, 4: 10_000}  # SB 1 (A), BB 2 (B), 3 (C), button 4 (D)
    state, _ = begin(cfg, st, button=4)
    state, _ = run(state, "call", "call", "call", "check")
    state, _ = run(state, "check", "bet 50", "raise 120", "call")
    assert state.actor == 1 and options(state) == (120, 220, 9900, None)


def test_finer_point_19_counts_every_short_all_in_since_the_player_acted() -> None:
    """After B's and C's all-ins make 110, D's all-in to 260 adds 50: A (acted at 100)
    faces 160 and may raise; X (acted at 150) faces 110 and may raise too; E, who called
    C's 210, faces 50 and may not."""
    st = {1: 1000, 2: 152, 3: 1000, 4: 212, 5: 1000, 6: 262}  # A, B, X, C, E, D
    state, _ = begin(NL_1_2, st, button=6)
    state, _ = run(state, *["call"] * 5, "check")
    state, _ = run(state, "bet 100", "raise 150", "call", "raise 210", "call", "raise 260")
    assert state.actor == 1 and options(state) == (160, 360, 998, None)
    state, _ = act(state, "call")
    assert state.actor == 3 and options(state) == (110, 360, 998, None)
    state, _ = act(state, "call")
    assert state.actor == 5 and options(state) == (50, None, None, "raise_not_reopened")


# -- 20: no bet or raise when nobody else could call any of it ----------------------------


def test_finer_point_20_no_raise_when_every_other_player_is_all_in_or_covered() -> None:
    """The button is all-in for 1000; the big blind has exactly 1000 in all (no more than
    the current bet): the small blind may only call or fold."""
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100)
    state, _ = begin(cfg, {1: 1000, 2: 10_000, 3: 1000}, button=1)
    state, _ = act(state, "raise 1000")
    assert state.actor == 2 and options(state) == (950, None, None, "opponents_all_in")
    with pytest.raises(errors.OpponentsAllIn):
        act(state, "raise 2000")
    state, _ = act(state, "call")
    assert state.actor == 3 and state.legal_actions().call_all_in
    # One chip more behind the big blind and the small blind may raise.
    state, _ = begin(cfg, {1: 1000, 2: 10_000, 3: 1001}, button=1)
    state, _ = act(state, "raise 1000")
    assert options(state) == (950, 1900, 10_000, None)


def test_finer_point_20_fixed_limit_call_or_fold_only() -> None:
    cfg = TableConfig(game="holdem", structure="FL", big_blind=100)
    state, _ = begin(cfg, {1: 200, 2: 10_000, 3: 150}, button=1)
    state, _ = act(state, "raise 200")  # the button, all-in for a full raise
    assert state.actor == 2 and options(state) == (150, None, None, "opponents_all_in")


def test_finer_point_20_check_only_when_nobody_could_call_a_bet() -> None:
    """A killer acting in seat order has the option on the kill blind (200), but every
    other player has 200 or less in all: they may only check."""
    cfg = TableConfig(game="holdem", structure="FL", big_blind=100, kill="full",
                      killer_acts_last=False)  # fmt: skip
    st = {1: 150, 2: 180, 3: 190, 4: 10_000}
    state, _ = begin(cfg, st, button=1, kill=KillInfo(4, KillMode.FULL))
    legal = state.legal_actions()
    assert state.actor == 4 and legal.can_check and not legal.can_bet_raise
    assert legal.raise_closed == "opponents_all_in"
    state, _ = act(state, "check")
    assert state.actor == 1 and state.legal_actions().call_all_in


# -- 21: finer point 1 in fixed limit -----------------------------------------------------

FL_100 = TableConfig(game="holdem", structure="FL", big_blind=100)


def test_finer_point_21_fixed_limit_short_all_in_not_counted_toward_the_cap() -> None:
    st = {1: 10_000, 2: 10_000, 3: 10_000, 4: 450, 5: 10_000}  # button 5: SB 1, BB 2
    state, _ = begin(FL_100, st, button=5)
    state, _ = run(state, "call", "call", "call", "call", "check")
    state, _ = run(state, "bet 100", "raise 200", "raise 300", "raise 350")  # 4: all-in
    assert state.full_bets == 3  # bet, raise, re-raise; the short all-in is not a bet
    assert state.actor == 5 and options(state) == (350, 450, 450, None)  # a full bet on top
    state, _ = act(state, "raise 450")  # the cap
    assert state.full_bets == 4 and options(state) == (350, None, None, "betting_capped")


def test_finer_point_21_fixed_limit_short_all_in_reopens_nothing_on_its_own() -> None:
    st = {1: 10_000, 2: 10_000, 3: 250, 4: 10_000}  # button 4: SB 1, BB 2, seat 3 short
    state, _ = begin(FL_100, st, button=4)
    state, _ = run(state, "call", "call", "call", "check")
    state, _ = run(state, "bet 100", "call", "raise 150")  # seat 3 all-in for 50 more
    assert state.actor == 4 and options(state) == (150, 250, 250, None)
    state, _ = act(state, "call")
    assert state.actor == 1 and options(state) == (50, None, None, "raise_not_reopened")
    with pytest.raises(errors.RaiseNotReopened):
        act(state, "raise 250")
    state, _ = run(state, "call", "call")
    assert state.street == "turn"
