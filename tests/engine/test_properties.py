"""Hypothesis: random configurations and random legal play keep every invariant.

Every game x structure, random options (antes, straddles, kills, overblinds, chops,
newcomer blinds, protection), 2-10 players with often-short stacks so that side pots are
common. At every step: chips are conserved, no stack goes negative, the offered bet bounds
are exactly what ``apply`` accepts, the state round-trips through JSON, ``apply`` never
mutates its input, ``apply_in_place`` makes the same state and events, and no view leaks a
hidden hole card, and the round's order holds exactly the players who can still act. At
the end: finishing stacks plus rake equal the starting stacks and the rake respects the
cap.
"""

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tables.engine.actions import Action
from tables.engine.config import KillInfo, KillMode, Structure, TableConfig
from tables.engine.events import HoleCards, event_from_dict
from tables.engine.state import HandState, SeatEntry, apply, apply_in_place, start_hand
from tables.engine.testing import random_action

Hand = tuple[TableConfig, list[SeatEntry], int, list[int], KillInfo | None, int]

SETTINGS = settings(
    max_examples=400,
    deadline=None,
    database=None,  # no .hypothesis/ directory in the shared checkout
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def configs(draw: st.DrawFn) -> TableConfig:
    structure = draw(st.sampled_from(list(Structure)))
    big_blind = draw(st.sampled_from([2, 10, 25, 100, 200, 500]))
    limit = structure.is_limit
    return TableConfig(
        game=draw(st.sampled_from(["holdem", "omaha", "omaha8"])),
        structure=structure,
        big_blind=big_blind,
        small_blind=draw(st.integers(1, big_blind)) if draw(st.booleans()) else -1,
        ante=draw(st.sampled_from([0, 0, 1, big_blind // 10])),
        min_bet_doubles_late=draw(st.booleans()),
        allow_straddle=draw(st.booleans()),
        allow_chop=draw(st.booleans()),
        kill=draw(st.sampled_from(list(KillMode))) if limit else KillMode.NONE,
        kill_min_pot=draw(st.sampled_from([0, big_blind * 4])),
        killer_acts_last=draw(st.booleans()),
        allow_overblind=limit and draw(st.booleans()),
        allin_protection=draw(st.booleans()),
        rake_percent=draw(st.sampled_from([0, 500, 1000, 10_000])),
        rake_caps=draw(st.sampled_from([(), ((2, 100), (3, 200), (5, 300)), ((2, 1),)])),
        no_flop_no_drop=draw(st.booleans()),
        run_it_twice=draw(st.booleans()),
    )


@st.composite
def hands(draw: st.DrawFn) -> Hand:
    config = draw(configs())
    n = draw(st.integers(2, 10))
    seat_numbers = sorted(draw(st.lists(st.integers(1, 10), min_size=n, max_size=n, unique=True)))
    button = draw(st.sampled_from(seat_numbers))
    b = seat_numbers.index(button)
    sb = seat_numbers[b if n == 2 else (b + 1) % n]
    bb_amount = config.big_blind
    entries = []
    for seat in seat_numbers:
        stack = draw(
            st.one_of(
                st.integers(1, bb_amount * 4),  # short: all-ins and side pots
                st.integers(bb_amount * 4, bb_amount * 60),
                st.integers(bb_amount * 100, bb_amount * 400),  # deep: full betting rounds
            )
        )
        entries.append(
            SeatEntry(
                seat=seat,
                player=f"p{seat}",
                stack=stack,
                posts_big_blind=seat not in (button, sb) and draw(st.booleans()),
                straddle=draw(st.booleans()),
                overblind=draw(st.booleans()),
                chop=draw(st.booleans()),
                auto_muck=draw(st.booleans()),
            )
        )
    kill = None
    if config.kill is not KillMode.NONE and draw(st.booleans()):
        kill = KillInfo(draw(st.sampled_from([*seat_numbers, 11])), config.kill)
    deck = list(range(52))
    seed = draw(st.integers(0, 2**32))
    random.Random(seed).shuffle(deck)
    return config, entries, button, deck, kill, seed


def check_bounds(state: HandState) -> None:
    """The offered bounds are exactly the accepted ones."""
    legal = state.legal_actions()
    seat = legal.seat
    assert state.can(Action.fold(seat)) == legal.can_fold
    assert state.can(Action.check(seat)) == legal.can_check
    assert state.can(Action.call(seat)) == (legal.call_amount is not None)
    assert state.can(Action.timeout(seat))
    assert not state.can(Action.call(seat + 100))  # nobody sits there: not your turn
    if legal.min_to is None or legal.max_to is None:
        for to in (state.to_match + 1, legal.all_in_to, state.to_match * 2 + 1):
            assert not state.can(Action.bet_raise(seat, to))
        return
    assert state.to_match < legal.min_to <= legal.max_to <= legal.all_in_to
    assert state.can(Action.bet_raise(seat, legal.min_to))
    assert state.can(Action.bet_raise(seat, legal.max_to))
    assert not state.can(Action.bet_raise(seat, legal.min_to - 1))
    assert not state.can(Action.bet_raise(seat, legal.max_to + 1))
    if legal.min_to < legal.all_in_to:
        assert legal.min_to - state.to_match >= 1


def check_views(state: HandState) -> None:
    for i, seat in enumerate(state.seats):
        view = state.view(seat)
        for p in view["players"]:
            if p["seat"] != seat and not p["shown"]:
                assert p["cards"] is None
        assert view["players"][i]["cards"] is not None
    assert all(p["cards"] is None or p["shown"] for p in state.view(None)["players"])


@SETTINGS
@given(hands())
def test_random_hands_keep_every_invariant(hand) -> None:  # type: ignore[no-untyped-def]
    config, entries, button, deck, kill, seed = hand
    rng = random.Random(seed)
    state, events = start_hand(config, entries, button=button, deck=deck, kill=kill)
    total = sum(e.stack for e in entries)
    steps = 0
    while True:
        assert min(state.stacks) >= 0 and min(state.committed) >= 0
        assert HandState.from_dict(json.loads(json.dumps(state.to_dict()))) == state
        for event in events:
            assert event_from_dict(json.loads(json.dumps(event.to_dict()))) == event
            if isinstance(event, HoleCards):
                assert event.visible_to(event.seat) and not event.visible_to(None)
        if state.is_over:
            break
        assert sum(state.stacks) + sum(state.contributed) == total
        if state.asking_run_twice:
            # Nobody acts while the players all-in decide whether to run it twice.
            assert state.actor is None and state.run_twice and state.run_twice.undecided
            assert len(state.board) < 5 and state.committed == [0] * len(state.seats)
        else:
            assert state.actor is not None
            # Nobody has more in this street than to_match (the engine relies on it).
            assert max(state.committed) <= state.to_match
            # The round's order is exactly the players who can still act.
            assert sorted(state.order) == [i for i, s in enumerate(state.status) if s == "in"]
            assert state.actor_index in state.order
            check_bounds(state)
        if steps % 3 == 0:
            check_views(state)
        action = random_action(state, rng)
        state, events = apply(state, action)
        steps += 1
        assert steps < 400
    result = state.result
    assert result is not None
    assert sum(state.stacks) + result.rake == total
    assert sum(result.contributed_rake) == result.rake
    cap = config.rake_cap(len(entries))
    assert cap is None or result.rake <= cap
    assert sum(result.winnings) + result.rake == sum(p.amount for p in result.pots)
    if result.chopped:
        assert result.rake == 0 and state.stacks == [e.stack for e in entries]
    if result.next_kill is not None:
        assert result.next_kill.seat == result.scooped_by
    check_views(state)


@settings(max_examples=80, deadline=None, database=None)
@given(hands())
def test_apply_never_mutates_its_input(hand) -> None:  # type: ignore[no-untyped-def]
    config, entries, button, deck, kill, seed = hand
    rng = random.Random(seed)
    state, _ = start_hand(config, entries, button=button, deck=deck, kill=kill)
    while not state.is_over:
        snapshot = json.dumps(state.to_dict())
        copy = HandState.from_dict(json.loads(snapshot))
        action = random_action(state, rng)
        new, events = apply(state, action)
        assert json.dumps(state.to_dict()) == snapshot and state == copy
        # The in-place transition ends in the same state with the same events.
        assert apply_in_place(copy, action) == events and copy == new
        state = new
