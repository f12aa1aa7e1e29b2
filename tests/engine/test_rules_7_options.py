"""RULES.md section 7 (straddle, chop, kill, overblind) and section 4 (newcomer blinds)."""

import pytest

from tables.engine import errors
from tables.engine.config import KillInfo, KillMode, TableConfig
from tables.engine.events import Chopped, HandStarted, Posted
from tables.engine.testing import act, begin, run


def even(n: int, chips: int = 10_000) -> dict[int, int]:
    return {seat: chips for seat in range(1, n + 1)}


def posts(events: list) -> list[tuple[int, str, int]]:
    return [(e.seat, e.kind, e.amount) for e in events if isinstance(e, Posted)]


def preflop_order(state, steps: int) -> list[int]:  # type: ignore[no-untyped-def]
    order = []
    for _ in range(steps):
        order.append(state.actor)
        state, _ = act(state, "call" if state.legal_actions().can_call else "check")
    return order


# -- straddle ----------------------------------------------------------------------------

STRADDLE = {4: {"straddle": True}}


def test_rules_7_straddle_posted_left_of_big_blind_acts_last() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, allow_straddle=True)
    state, events = begin(cfg, even(4), button=1, options=STRADDLE)
    assert posts(events) == [(2, "small_blind", 50), (3, "big_blind", 100), (4, "straddle", 200)]
    assert state.actor == 1  # left of the straddle
    state, _ = run(state, "call", "call", "call")
    legal = state.legal_actions()
    assert state.actor == 4 and legal.can_check  # live: the straddler has the option
    assert legal.min_to == 400


def test_finer_point_4_straddle_is_a_bigger_big_blind_in_pot_and_no_limit() -> None:
    nl = TableConfig(game="holdem", structure="NL", big_blind=100, allow_straddle=True)
    state, _ = begin(nl, even(4), button=1, options=STRADDLE)
    assert state.legal_actions().min_to == 400  # twice the straddle
    pl = TableConfig(game="omaha", structure="PL", big_blind=100, allow_straddle=True)
    state, _ = begin(pl, even(4), button=1, options=STRADDLE)
    legal = state.legal_actions()
    assert (legal.min_to, legal.max_to) == (400, 200 + 350 + 200)  # counts in the pot


def test_finer_point_3_fixed_limit_straddle_is_the_second_bet() -> None:
    cfg = TableConfig(game="holdem", structure="FL", big_blind=100, allow_straddle=True)
    state, _ = begin(cfg, even(5), button=1, options=STRADDLE)
    assert (state.to_match, state.full_bets) == (200, 2)
    state, _ = run(state, "raise 300", "raise 400")
    assert state.legal_actions().raise_closed == "betting_capped"


def test_straddle_needs_the_setting_and_three_players() -> None:
    off = TableConfig(game="holdem", structure="NL", big_blind=100)
    _, events = begin(off, even(4), button=1, options=STRADDLE)
    assert "straddle" not in [p[1] for p in posts(events)]
    on = TableConfig(game="holdem", structure="NL", big_blind=100, allow_straddle=True)
    _, events = begin(on, even(2), button=1, options={1: {"straddle": True}})
    assert "straddle" not in [p[1] for p in posts(events)]


# -- chop --------------------------------------------------------------------------------

CHOP = {2: {"chop": True}, 3: {"chop": True}}


def test_rules_7_chop_returns_blinds_and_antes_no_rake() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, ante=10, allow_chop=True)
    state, _ = begin(cfg, even(3), button=1, options=CHOP)
    state, events = act(state, "fold")  # the button folds to the blinds
    chopped = next(e for e in events if isinstance(e, Chopped))
    assert chopped.seats == (2, 3)
    assert state.is_over and state.result.chopped and state.result.rake == 0
    assert state.stacks == [10_000, 10_000, 10_000]  # antes and blinds back
    assert events[-1].type == "hand_ended" and events[-1].chopped


def test_rules_7_chop_needs_both_blinds_to_agree() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, allow_chop=True)
    state, _ = begin(cfg, even(3), button=1, options={2: {"chop": True}})
    state, _ = act(state, "fold")
    assert not state.is_over and state.actor == 2


def test_finer_point_7_chop_needs_three_players_and_the_setting() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, allow_chop=True)
    state, _ = begin(cfg, even(2), button=1, options={1: {"chop": True}, 2: {"chop": True}})
    assert not state.chop_possible
    off = TableConfig(game="holdem", structure="NL", big_blind=100)
    state, _ = begin(off, even(3), button=1, options=CHOP)
    state, _ = act(state, "fold")
    assert not state.is_over


def test_no_chop_after_a_call() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100, allow_chop=True)
    state, _ = begin(cfg, even(4), button=1, options=CHOP)
    state, _ = run(state, "call", "fold")  # seat 4 limps: not "everyone folds to the blinds"
    assert not state.is_over and state.actor == 2


# -- kill --------------------------------------------------------------------------------

FL_KILL = TableConfig(game="holdem", structure="FL", big_blind=100, kill="full")


def test_rules_7_full_kill_doubles_limits_killer_posts_and_acts_last() -> None:
    state, events = begin(FL_KILL, even(4), button=1, kill=KillInfo(4, KillMode.FULL))
    started = events[0]
    assert isinstance(started, HandStarted)
    assert (started.small_bet, started.big_bet, started.limit_multiplier) == (200, 400, "2")
    assert started.kill == KillInfo(4, KillMode.FULL)
    assert posts(events) == [(2, "small_blind", 50), (3, "big_blind", 100), (4, "kill_blind", 200)]
    assert preflop_order(state, 4) == [1, 2, 3, 4]
    legal = state.legal_actions()
    assert (legal.call_amount, legal.min_to, legal.max_to) == (200, 400, 400)


def test_finer_point_3_kill_blind_is_first_bet_for_the_cap() -> None:
    state, _ = begin(FL_KILL, even(4), button=1, kill=KillInfo(4, KillMode.FULL))
    state, _ = run(state, "raise 400", "raise 600", "raise 800")
    assert state.actor == 4 and state.legal_actions().raise_closed == "betting_capped"


def test_rules_7_kill_blind_replaces_the_killers_blind() -> None:
    _, events = begin(FL_KILL, even(4), button=1, kill=KillInfo(3, KillMode.FULL))
    assert posts(events) == [(2, "small_blind", 50), (3, "kill_blind", 200)]
    state, events = begin(FL_KILL, even(4), button=1, kill=KillInfo(2, KillMode.FULL))
    assert posts(events) == [(3, "big_blind", 100), (2, "kill_blind", 200)]
    assert preflop_order(state, 4) == [4, 1, 3, 2]  # the killer (small blind) acts last


def test_finer_point_5_killer_acts_last_off_normal_order_with_option() -> None:
    cfg = TableConfig(game="holdem", structure="FL", big_blind=100, kill="full",
                      killer_acts_last=False)  # fmt: skip
    state, _ = begin(cfg, even(4), button=1, kill=KillInfo(2, KillMode.FULL))
    state, _ = run(state, "call", "call")  # seats 4 and 1
    legal = state.legal_actions()
    assert state.actor == 2 and legal.can_check and legal.min_to == 400  # option
    state, _ = act(state, "check")
    assert state.actor == 3  # the big blind still has to call the kill blind
    state, _ = act(state, "call")
    assert state.street == "flop"


def test_rules_7_half_kill_and_spread_limit_kill() -> None:
    half = TableConfig(game="holdem", structure="FL", big_blind=100, kill="half")
    _, events = begin(half, even(4), button=1, kill=KillInfo(4, KillMode.HALF))
    assert events[0].small_bet == 150 and posts(events)[-1] == (4, "kill_blind", 150)
    sl = TableConfig(game="holdem", structure="SL", big_blind=25, spread_min=25,
                     spread_max=75, kill="half")  # fmt: skip
    state, events = begin(sl, even(4), button=1, kill=KillInfo(4, KillMode.HALF))
    assert posts(events)[-1] == (4, "kill_blind", 37)  # finer point 2: floored
    assert (state.limits.spread_min, state.limits.spread_max) == (37, 112)
    legal = state.legal_actions()
    assert (legal.min_to, legal.max_to) == (37 + 37, 37 + 112)


def test_finer_point_5_killer_gone_or_kill_off_means_no_kill() -> None:
    state, events = begin(FL_KILL, even(4), button=1, kill=KillInfo(9, KillMode.FULL))
    assert state.kill is None and events[0].kill is None and state.limits.small_bet == 100
    off = TableConfig(game="holdem", structure="FL", big_blind=100)
    state, _ = begin(off, even(4), button=1, kill=KillInfo(4, KillMode.FULL))
    assert state.kill is None and state.limits.multiplier == "1"


def _heads_up_to_showdown(cfg: TableConfig, holes: dict[int, str], specs: list[str]):  # type: ignore[no-untyped-def]
    state, _ = begin(cfg, even(2), button=1, holes=holes, board="2s5s9c3h8d")
    state, _ = run(state, *specs)
    assert state.is_over
    return state


def test_finer_point_5_scoop_of_min_pot_kills_next_hand() -> None:
    cfg = TableConfig(game="holdem", structure="FL", big_blind=100, kill="full", kill_min_pot=400)
    holes = {1: "AhAd", 2: "KhKd"}
    small = _heads_up_to_showdown(cfg, holes, ["call", "check", *["check"] * 6])  # pot 200
    assert small.result.scooped_by == 1 and small.result.next_kill is None
    big = _heads_up_to_showdown(cfg, holes, ["raise 200", "call", *["check"] * 6])  # 400
    assert big.result.next_kill == KillInfo(1, KillMode.FULL)
    tie = _heads_up_to_showdown(cfg, {1: "AhKd", 2: "AdKh"}, ["raise 200", "call", *["check"] * 6])
    assert tie.result.scooped_by is None and tie.result.next_kill is None


def test_finer_point_5_kill_during_kill_hand_never_compounds() -> None:
    state, _ = begin(
        FL_KILL, even(2), button=1, kill=KillInfo(2, KillMode.FULL),
        holes={1: "AhAd", 2: "KhKd"}, board="2s5s9c3h8d",
    )  # fmt: skip
    assert state.limits.small_bet == 200
    state, _ = run(state, "call", "check", *["check"] * 6)
    assert state.result.next_kill == KillInfo(1, KillMode.FULL)


def test_uncontested_win_counts_as_scoop() -> None:
    state, _ = begin(FL_KILL, even(3), button=1)
    state, _ = run(state, "fold", "fold")
    assert state.result.scooped_by == 3 and state.result.next_kill == KillInfo(3, KillMode.FULL)


# -- overblind ---------------------------------------------------------------------------

FL_OVER = TableConfig(game="holdem", structure="FL", big_blind=100, allow_overblind=True)


def test_rules_7_overblind_doubles_limits_acts_last_first_round_only() -> None:
    state, events = begin(FL_OVER, even(4), button=1, options={4: {"overblind": True}})
    assert posts(events)[-1] == (4, "overblind", 200)
    assert events[0].overblind_seat == 4 and state.limits.small_bet == 200
    assert preflop_order(state, 4) == [1, 2, 3, 4]
    state, _ = run(state, "call", "call", "call", "check")
    assert state.street == "flop" and state.actor == 2  # normal order after the flop
    assert state.legal_actions().min_to == 200


def test_finer_point_6_one_overblind_first_from_button_left() -> None:
    options = {1: {"overblind": True}, 4: {"overblind": True}}
    _, events = begin(FL_OVER, even(4), button=1, options=options)
    assert [p for p in posts(events) if p[1] == "overblind"] == [(4, "overblind", 200)]


def test_finer_point_6_blind_who_overblinds_replaces_the_blind() -> None:
    _, events = begin(FL_OVER, even(4), button=1, options={2: {"overblind": True}})
    assert posts(events) == [(3, "big_blind", 100), (2, "overblind", 200)]


def test_overblind_not_taken_in_kill_hand() -> None:
    cfg = TableConfig(game="holdem", structure="FL", big_blind=100, kill="full",
                      allow_overblind=True)  # fmt: skip
    state, _ = begin(cfg, even(4), button=1, options={1: {"overblind": True}},
                     kill=KillInfo(4, KillMode.FULL))  # fmt: skip
    assert state.overblinder is None and state.limits.multiplier == "2"


# -- newcomers (section 4, finer point 16) -----------------------------------------------


def test_rules_4_newcomer_posts_live_big_blind() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100)
    state, events = begin(cfg, even(5), button=1, options={5: {"posts_big_blind": True}})
    assert posts(events) == [
        (2, "small_blind", 50),
        (3, "big_blind", 100),
        (5, "newcomer_big_blind", 100),
    ]
    state, _ = act(state, "call")  # seat 4
    legal = state.legal_actions()
    assert state.actor == 5 and legal.can_check and legal.min_to == 200  # live


def test_finer_point_16_newcomer_cannot_post_from_small_blind_or_button() -> None:
    cfg = TableConfig(game="holdem", structure="NL", big_blind=100)
    for seat in (1, 2):
        with pytest.raises(errors.SetupError, match="finer point 16"):
            begin(cfg, even(4), button=1, options={seat: {"posts_big_blind": True}})
