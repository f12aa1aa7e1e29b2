"""RULES.md section 3: the hand step by step (button, dealing, order, showdown, pots)."""

from tables.engine.cards import parse_cards
from tables.engine.config import TableConfig
from tables.engine.events import DealtBoard, HoleCards, Mucked, Shown, Won
from tables.engine.positions import blind_seats, next_button
from tables.engine.testing import act, begin, run

HOLDEM = TableConfig(game="holdem", structure="NL", big_blind=100, rake_percent=0)
OMAHA = TableConfig(game="omaha", structure="PL", big_blind=100, rake_percent=0)
OMAHA8 = TableConfig(game="omaha8", structure="PL", big_blind=100, rake_percent=0)


def even(n: int, chips: int = 10_000) -> dict[int, int]:
    return {seat: chips for seat in range(1, n + 1)}


def test_rules_3_1_button_moves_clockwise_to_next_dealt_in() -> None:
    assert next_button(None, [3, 5, 8]) == 3  # first hand: the first player seated
    assert next_button(3, [3, 5, 8]) == 5
    assert next_button(8, [3, 5, 8]) == 3  # wraps
    assert next_button(4, [3, 5, 8]) == 5  # the old button left
    assert blind_seats(8, [3, 5, 8]) == (3, 5)
    assert blind_seats(5, [5, 8]) == (5, 8)  # heads-up: button posts the small blind


def test_rules_3_3_cards_one_at_a_time_clockwise_from_small_blind() -> None:
    state, events = begin(OMAHA, even(3), button=1)  # deck = 0..51 in order
    holes = {e.seat: e.cards for e in events if isinstance(e, HoleCards)}
    assert list(holes) == [2, 3, 1]  # dealt from the small blind
    assert holes[2] == (0, 3, 6, 9) and holes[3] == (1, 4, 7, 10) and holes[1] == (2, 5, 8, 11)
    state, events = run(state, "call", "call", "check")
    board = [e for e in events if isinstance(e, DealtBoard)]
    assert board[0].cards == (12, 13, 14)  # the next cards of the deck: no burn cards
    state, events = run(state, "check", "check", "check")
    assert next(e for e in events if isinstance(e, DealtBoard)).cards == (15,)


def test_rules_3_hold_em_two_cards() -> None:
    _, events = begin(HOLDEM, even(4), button=1)
    assert all(len(e.cards) == 2 for e in events if isinstance(e, HoleCards))


def test_rules_3_4_and_5_betting_order() -> None:
    state, _ = begin(HOLDEM, even(5), button=3)  # SB 4, BB 5, first to act 1
    order = []
    for _ in range(4):
        order.append(state.actor)
        state, _ = act(state, "call")
    assert order == [1, 2, 3, 4] and state.actor == 5  # big blind acts last
    state, _ = act(state, "check")
    assert state.street == "flop" and state.actor == 4  # first left of the button
    state, _ = run(state, "check", "bet 100", "fold", "call", "call", "fold")
    assert state.street == "turn" and state.actor == 5  # seat 4 folded: next active


def test_rules_3_6_heads_up_button_small_blind_first_preflop_last_after() -> None:
    state, events = begin(HOLDEM, even(2), button=2)
    assert [(e.seat, e.kind) for e in events if e.type == "posted"] == [
        (2, "small_blind"),
        (1, "big_blind"),
    ]
    assert state.actor == 2
    state, _ = run(state, "call", "check")
    assert state.actor == 1  # the big blind opens after the flop


def test_rules_3_7_everyone_folds_win_at_once_no_show() -> None:
    state, events = begin(HOLDEM, even(4), button=1)
    state, events = run(state, "raise 300", "fold", "fold", "fold")
    assert state.is_over and state.board == []
    assert not [e for e in events if isinstance(e, Shown | Mucked)]
    won = [e for e in events if isinstance(e, Won)]
    # 200 of the raise went back uncalled.
    assert [(e.seat, e.amount, e.share, e.description) for e in won] == [(4, 250, None, None)]
    assert state.view(None)["players"][3]["cards"] is None


def test_rules_3_7_run_out_when_at_most_one_can_bet() -> None:
    state, _ = begin(HOLDEM, {1: 10_000, 2: 800, 3: 10_000}, button=3)  # SB 1, BB 2
    state, _ = run(state, "call", "call")  # button, SB
    state, events = act(state, "raise 800")  # BB all-in
    state, _ = run(state, "call", "call")
    assert state.street == "flop" and not state.is_over  # two players can still bet
    state, events = run(state, "bet 500", "fold")
    assert state.is_over
    # Now everyone is all-in: the board comes at once and all hands are face up.
    st2, _ = begin(HOLDEM, {1: 10_000, 2: 800, 3: 800}, button=3)
    st2, events = run(st2, "raise 800", "fold", "call")
    streets = [e.street for e in events if isinstance(e, DealtBoard)]
    assert streets == ["flop", "turn", "river"] and st2.is_over
    assert {e.seat for e in events if isinstance(e, Shown)} == {2, 3}


def _showdown_hand(auto_muck: bool = True):  # type: ignore[no-untyped-def]
    holes = {1: "AhAd", 2: "KhKd", 3: "2c7d"}
    options = {s: {"auto_muck": auto_muck} for s in (1, 2, 3)}
    return begin(HOLDEM, even(3), button=3, holes=holes, board="Qs9s4c3h8d", options=options)


def test_rules_3_8_showdown_last_river_aggressor_first_then_clockwise() -> None:
    state, _ = _showdown_hand()
    state, _ = run(state, "call", "call", "check")  # preflop
    state, _ = run(state, "check", "check", "check", "check", "check", "check")
    state, events = run(state, "check", "bet 200", "call", "call")  # seat 2 bets river
    shows = [(e.type, e.seat) for e in events if isinstance(e, Shown | Mucked)]
    # Seat 2 shows first (kings); seat 3 (no pair) mucks; seat 1 (aces) shows.
    assert shows == [("shown", 2), ("mucked", 3), ("shown", 1)]
    assert state.shown == [True, True, False]


def test_rules_3_8_showdown_order_without_bet() -> None:
    state, _ = _showdown_hand()
    state, _ = run(state, "call", "call", "check", *["check"] * 6)
    state, events = run(state, "check", "check", "check")
    shows = [(e.type, e.seat) for e in events if isinstance(e, Shown | Mucked)]
    assert shows == [("shown", 1), ("mucked", 2), ("mucked", 3)]


def test_finer_point_12_auto_muck_off_shows_without_asking() -> None:
    state, _ = _showdown_hand(auto_muck=False)
    state, events = run(state, "call", "call", "check", *["check"] * 9)
    assert [e.seat for e in events if isinstance(e, Shown)] == [1, 2, 3]
    view = state.view(None)
    assert [p["cards"] for p in view["players"]] == [["Ah", "Ad"], ["Kh", "Kd"], ["2c", "7d"]]


def test_finer_point_12_tie_with_shown_hand_is_shown() -> None:
    holes = {1: "AhKd", 2: "AdKh", 3: "2c7d"}
    state, _ = begin(HOLDEM, even(3), button=3, holes=holes, board="Qs9s4c3h8d")
    state, events = run(state, "call", "call", "check", *["check"] * 9)
    shows = [(e.type, e.seat) for e in events if isinstance(e, Shown | Mucked)]
    assert shows == [("shown", 1), ("shown", 2), ("mucked", 3)]
    won = sorted((e.seat, e.amount) for e in events if isinstance(e, Won))
    assert won == [(1, 150), (2, 150)]


def test_rules_3_9_side_pots_awarded_separately() -> None:
    holes = {1: "AhAd", 2: "KhKd", 3: "QhQd"}
    state, _ = begin(HOLDEM, {1: 500, 2: 2000, 3: 5000}, button=3, holes=holes, board="2s5s9c3h8d")
    state, events = run(state, "raise 5000", "call", "call")
    won = sorted((e.seat, e.pot, e.amount) for e in events if isinstance(e, Won))
    # Main pot 1500 to the aces (all-in for 500); side pot 3000 to the kings.
    assert won == [(1, 0, 1500), (2, 1, 3000)]
    assert state.stacks == [1500, 3000, 3000]


def test_rules_1_and_3_9_hi_lo_halves_odd_chip_to_high() -> None:
    holes = {1: "Ah4sJdJc", 2: "KdQh9s9d", 3: "5h6hTsTc"}
    cfg = TableConfig(game="omaha8", structure="PL", big_blind=100, small_blind=50,
                      rake_percent=0, ante=1)  # fmt: skip
    state, _ = begin(cfg, even(3), button=3, holes=holes, board="2c3d7hKcKs")
    state, events = run(state, "fold", "call", "check", *["check"] * 6)
    # Pot: 3 antes + 100 + 100 = 203 -> high 102, low 101.
    won = [(e.seat, e.amount, e.share) for e in events if isinstance(e, Won)]
    assert sorted(won) == [(1, 101, "low"), (2, 102, "high")]
    assert state.result.scooped_by is None


def test_rules_1_hi_lo_no_qualifying_low_high_takes_all() -> None:
    holes = {1: "Ah4sJdJc", 2: "KdQh9s9d"}
    state, _ = begin(OMAHA8, even(2), button=1, holes=holes, board="KcQdJh9c2s")
    state, events = run(state, "call", "check", *["check"] * 6)
    won = [(e.seat, e.amount, e.share) for e in events if isinstance(e, Won)]
    assert won == [(1, 200, None)]  # trip jacks; nobody has a low
    assert state.result.scooped_by == 1


def test_rules_1_omaha_needs_two_hole_cards_of_the_flush_suit() -> None:
    # Four spades on board; seat 1 has one spade (no flush), seat 2 has two small spades.
    holes = {1: "AsKdKhQc", 2: "3s2sJdJc"}
    state, _ = begin(OMAHA, even(2), button=1, holes=holes, board="9sTs5s7s8d")
    state, events = run(state, "call", "check", *["check"] * 6)
    assert [e.seat for e in events if isinstance(e, Won)] == [2]


def test_hi_lo_scoop_with_both_halves() -> None:
    holes = {1: "Ah2h5d9c", 2: "KdKs9s9d"}
    state, _ = begin(OMAHA8, even(2), button=1, holes=holes, board="3h4h8hKcQs")
    state, events = run(state, "call", "check", *["check"] * 6)
    won = sorted((e.seat, e.amount, e.share) for e in events if isinstance(e, Won))
    assert won == [(1, 100, "high"), (1, 100, "low")]  # flush and wheel-ish low
    assert state.result.scooped_by == 1
    assert parse_cards("Ah")[0] in state.hole[0]


def test_finer_point_12_hi_lo_muck_judged_on_high_and_low() -> None:
    holes = {1: "KdQh9s9d", 2: "Ah4sJdJc", 3: "5h6hTsTc"}
    state, _ = begin(OMAHA8, even(3), button=3, holes=holes, board="2c3d7hKcKs")
    state, events = run(state, "call", "call", "check", *["check"] * 9)
    shows = [(e.type, e.seat) for e in events if isinstance(e, Shown | Mucked)]
    # Seat 2 loses the high but has the best low so far: shown; seat 3 can win nothing.
    assert shows == [("shown", 1), ("shown", 2), ("mucked", 3)]
    won = sorted((e.seat, e.amount, e.share) for e in events if isinstance(e, Won))
    assert won == [(1, 150, "high"), (2, 150, "low")]


def test_finer_point_12_side_pot_contender_shows() -> None:
    holes = {1: "AhAd", 2: "KhKd", 3: "QhQd"}
    state, _ = begin(
        HOLDEM, {1: 300, 2: 10_000, 3: 10_000}, button=3, holes=holes, board="2s5s9c3h8d"
    )
    state, _ = run(state, "raise 300", "call", "call", *["check"] * 4)
    state, events = run(state, "check", "bet 500", "call")  # seat 3 bets the river
    shows = [(e.type, e.seat) for e in events if isinstance(e, Shown | Mucked)]
    # The kings lose the main pot to the aces but beat the queens for the side pot.
    assert shows == [("shown", 3), ("shown", 1), ("shown", 2)]
    won = sorted((e.seat, e.pot, e.amount) for e in events if isinstance(e, Won))
    assert won == [(1, 0, 900), (2, 1, 1000)]
