"""The HandState API: set-up checks, errors, purity, JSON, views and event visibility."""

import dataclasses
import json

import pytest

from tables.engine import errors
from tables.engine.actions import Action, ActionKind
from tables.engine.config import TableConfig
from tables.engine.events import HoleCards, event_from_dict, events_for
from tables.engine.start import table_limits
from tables.engine.state import HandState, SeatEntry, apply, apply_in_place, start_hand
from tables.engine.testing import act, begin, run, stacked_deck

NL = TableConfig(game="holdem", structure="NL", big_blind=100)
OMAHA = TableConfig(game="omaha", structure="PL", big_blind=100)


def entries(n: int, chips: int = 10_000) -> list[SeatEntry]:
    return [SeatEntry(seat=s, player=f"p{s}", stack=chips) for s in range(1, n + 1)]


# -- set-up ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seats", "button", "deck", "message"),
    [
        (entries(1), 1, list(range(52)), "2 to 10"),
        (entries(11), 1, list(range(52)), "2 to 10"),
        ([*entries(2), SeatEntry(2, "x", 100)], 1, list(range(52)), "twice"),
        ([SeatEntry(1, "a", 100), SeatEntry(2, "b", 0)], 1, list(range(52)), "chips"),
        (entries(3), 7, list(range(52)), "button"),
        (entries(3), 1, list(range(51)), "52 cards"),
        (entries(3), 1, [0, *range(51)], "52 cards"),
    ],
)
def test_start_hand_rejects_bad_setup(seats, button, deck, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(errors.SetupError, match=message):
        start_hand(NL, seats, button=button, deck=deck)


def test_start_hand_validates_config() -> None:
    with pytest.raises(errors.ConfigError):
        start_hand(TableConfig(structure="PL", kill="full"), entries(3), button=1,
                   deck=list(range(52)))  # fmt: skip


def test_configurations_are_checked_once_per_object_and_never_remembered_when_wrong() -> None:
    wrong = TableConfig(structure="PL", kill="full")
    for _ in range(2):  # a wrong configuration is refused every time
        with pytest.raises(errors.ConfigError):
            start_hand(wrong, entries(3), button=1, deck=list(range(52)))
    config = TableConfig(structure="FL", game="omaha8")
    first, _ = start_hand(config, entries(3), button=1, deck=list(range(52)))
    again, _ = start_hand(config, entries(3), button=1, deck=list(range(52)))
    equal, _ = start_hand(TableConfig(structure="FL", game="omaha8"), entries(3), button=1,
                          deck=list(range(52)))  # fmt: skip
    assert first == again == equal and again.limits is first.limits
    for big_blind in range(2, 200):  # many tables: the memory stays small
        start_hand(TableConfig(big_blind=big_blind), entries(3), button=1, deck=list(range(52)))
    info = table_limits.cache_info()
    assert info.maxsize is not None and info.currsize <= info.maxsize


def test_hand_started_event_and_commitment() -> None:
    state, events = start_hand(NL, entries(3), button=2, deck=list(range(52)), hand_id="h-1",
                               deck_commitment="abc")  # fmt: skip
    started = events[0]
    assert started.type == "hand_started" and started.hand_id == "h-1"
    assert started.deck_commitment == "abc" and started.button == 2
    assert [(s.seat, s.stack) for s in started.seats] == [(1, 10_000), (2, 10_000), (3, 10_000)]
    assert state.deck == tuple(range(52))


def test_stacked_deck_deals_requested_cards() -> None:
    deck = stacked_deck({1: "AsKs", 2: "2c2d", 3: "7h8h"}, "QsJsTs9s8s", button=1)
    state, _ = start_hand(NL, entries(3), button=1, deck=deck)
    assert state.hole == ((51, 47), (0, 1), (22, 26))


# -- errors ------------------------------------------------------------------------------


def test_not_your_turn() -> None:
    state, _ = begin(NL, {1: 1000, 2: 1000, 3: 1000}, button=1)
    with pytest.raises(errors.NotYourTurn) as info:
        apply(state, Action.call(2))
    assert info.value.code == "not_your_turn"
    assert info.value.to_dict() == {"code": "not_your_turn", "reason": info.value.reason}
    assert not state.can(Action.call(2)) and state.can(Action.call(1))


def test_no_such_action_variants() -> None:
    state, _ = begin(NL, {1: 1000, 2: 1000, 3: 1000}, button=1)
    with pytest.raises(errors.NoSuchAction, match="cannot check"):
        act(state, "check")
    with pytest.raises(errors.NoSuchAction, match="needs an amount"):
        apply(state, Action(ActionKind.BET_RAISE, 1))
    state, _ = run(state, "call", "call")
    with pytest.raises(errors.NoSuchAction, match="nothing to call"):
        act(state, "call")
    with pytest.raises(errors.NoSuchAction, match="check for free"):
        act(state, "fold")
    assert errors.NoSuchAction("x").code == "no_such_action"


def test_hand_over() -> None:
    state, _ = begin(NL, {1: 1000, 2: 1000}, button=1)
    state, _ = act(state, "fold")
    assert state.is_over and state.actor is None
    with pytest.raises(errors.HandOver):
        apply(state, Action.check(2))
    with pytest.raises(errors.HandOver):
        state.legal_actions()


def test_exceeds_stack_and_all_in_for_less_only() -> None:
    state, _ = begin(NL, {1: 1000, 2: 1000, 3: 150}, button=2)
    # button 2: SB 3 (150), BB 1; first to act is seat 2.
    state, _ = act(state, "raise 500")
    legal = state.legal_actions()  # seat 3: 50 in, 100 behind: only all-in for less
    assert state.actor == 3 and legal.call_amount == 100 and legal.call_all_in
    assert legal.min_to is None and legal.raise_closed is None
    with pytest.raises(errors.ExceedsStack):
        act(state, "raise 600")


def test_all_in_below_min_raise_is_only_option() -> None:
    state, _ = begin(NL, {1: 1000, 2: 1000, 3: 250}, button=2)
    state, _ = act(state, "raise 200")  # seat 2
    legal = state.legal_actions()  # seat 3 (SB): 250 total < min raise 300
    assert (legal.min_to, legal.max_to, legal.all_in_to) == (250, 250, 250)
    with pytest.raises(errors.BelowMinRaise, match="all-in"):
        act(state, "raise 240")
    state, events = act(state, "raise 250")
    assert events[0].all_in and state.last_raise == 100  # short: last raise unchanged


def test_illegal_action_leaves_state_unchanged() -> None:
    state, _ = begin(NL, {1: 1000, 2: 1000, 3: 1000}, button=1)
    before = state.to_dict()
    with pytest.raises(errors.IllegalAction):
        act(state, "raise 99999")
    assert state.to_dict() == before
    for illegal in (
        Action.bet_raise(state.actor, 99999),
        Action.check(state.actor),
        Action.fold(9),
    ):
        with pytest.raises(errors.IllegalAction):
            apply_in_place(state, illegal)
        assert state.to_dict() == before


# -- purity and JSON ---------------------------------------------------------------------


def _scripted() -> list[str]:
    return ["raise 300", "call", "call", "bet 200", "raise 800", "fold", "call",
            "check", "check", "bet 1000", "call"]  # fmt: skip


def test_apply_is_pure_and_json_round_trips_at_every_step() -> None:
    state, events = begin(OMAHA, {1: 5000, 2: 5000, 3: 5000}, button=1)
    all_events = list(events)
    for spec in _scripted():
        before = json.dumps(state.to_dict())
        new, events = act(state, spec)
        assert json.dumps(state.to_dict()) == before  # input untouched
        assert HandState.from_dict(json.loads(json.dumps(new.to_dict()))) == new
        all_events += events
        state = new
    assert state.is_over
    for event in all_events:
        assert event_from_dict(json.loads(json.dumps(event.to_dict()))) == event


def test_state_saved_with_every_player_in_its_order_loads_and_plays_on_the_same() -> None:
    """States saved before ``order`` held only the players who can still act listed the
    whole round; loading one keeps the players who can act, in the same order."""
    state, _ = begin(OMAHA, {1: 5000, 2: 5000, 3: 5000, 4: 5000}, button=1)
    state, _ = run(state, "fold", "raise 300")  # seat 4 folds; seat 1 raises
    saved = state.to_dict()
    assert saved["order"] == [0, 1, 2]
    saved["order"] = [3, 0, 1, 2]  # the old form: seat 4 folded but still listed
    loaded = HandState.from_dict(json.loads(json.dumps(saved)))
    assert loaded == state
    for spec in ("call", "fold", "check", "bet 200", "call", *["check"] * 4):
        state, expected = act(state, spec)
        loaded, events = act(loaded, spec)
        assert events == expected and loaded == state
    assert state.is_over


def test_action_json_round_trip() -> None:
    actions = [Action.fold(1), Action.bet_raise(3, 500)]
    actions.append(Action.timeout(2, protection_allowed=False))
    for action in actions:
        assert Action.from_dict(json.loads(json.dumps(action.to_dict()))) == action


# -- views and visibility ----------------------------------------------------------------


def test_view_shows_only_own_hole_cards() -> None:
    state, _ = begin(OMAHA, {1: 5000, 2: 5000, 3: 5000}, button=1)
    view = state.view(2)
    cards = {p["seat"]: p["cards"] for p in view["players"]}
    assert cards[1] is None and cards[3] is None and len(cards[2]) == 4
    assert view["legal_actions"] is None  # seat 1 is to act
    assert state.view(1)["legal_actions"]["call_amount"] == 100
    assert all(p["cards"] is None for p in state.view(None)["players"])
    assert "deck" not in view and "hole" not in view
    json.dumps(view)


def test_auditor_view_has_everything() -> None:
    state, _ = begin(OMAHA, {1: 5000, 2: 5000, 3: 5000}, button=1)
    audit = state.auditor_view()
    assert len(audit["deck_cards"]) == 52 and len(audit["hole_cards"]) == 3
    json.dumps(audit)


def test_hole_card_events_private_to_owner() -> None:
    _, events = begin(OMAHA, {1: 5000, 2: 5000, 3: 5000}, button=1)
    mine = events_for(events, 2)
    assert [e.seat for e in mine if isinstance(e, HoleCards)] == [2]
    assert not [e for e in events_for(events, None) if isinstance(e, HoleCards)]
    assert len(events_for(events, None, auditor=True)) == len(events)


def test_pots_view_during_and_after_hand() -> None:
    state, _ = begin(NL, {1: 1000, 2: 1000, 3: 300}, button=1)
    assert state.pots == [] and state.pot_total == 150  # blinds still on the table
    state, _ = run(state, "raise 1000", "call", "call")
    assert state.is_over and state.pot_total == 0
    assert [p.amount for p in state.pots] == [900, 1400]
    assert sum(state.stacks) + state.result.rake == 2300


def test_action_kind_is_normalised_and_actions_are_frozen() -> None:
    assert Action("fold", 3) == Action.fold(3)  # type: ignore[arg-type]
    assert type(Action("check", 1).kind) is ActionKind  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Action("dance", 1)  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Action.fold(1).seat = 2  # type: ignore[misc]
