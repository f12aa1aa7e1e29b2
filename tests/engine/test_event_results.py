"""Events carry results (issue #17): a client that only copies the numbers the events
carry (no arithmetic of its own) holds, after every transition, exactly the stacks,
street commitments, chips in the pot, amount to match and pot total of the state."""

import random
from typing import Any

from hypothesis import given

from tables.engine.events import Acted, Event, HandEnded, Posted, Pots, UncalledReturned, Won
from tables.engine.hand_state import HandState
from tables.engine.state import apply_in_place, start_hand
from tables.engine.testing import random_action
from tests.engine.test_properties import SETTINGS, hands


class CopyingClient:
    """What store.js does with the events: copy, never compute."""

    def __init__(self, state: HandState) -> None:
        self.players: dict[int, dict[str, int]] = {
            seat: {"stack": stack, "committed": 0, "in_pot": 0}
            for seat, stack in zip(state.seats, state.starting_stacks, strict=True)
        }
        self.to_match = 0
        self.pot_total = 0

    def apply(self, event: Event) -> None:
        if isinstance(event, Posted | UncalledReturned):
            self._copy(event.seat, event, committed=event.committed)
        elif isinstance(event, Acted):
            self._copy(event.seat, event, committed=event.street_total)
        elif isinstance(event, Pots):
            for p in self.players.values():
                p["committed"] = 0
            self.to_match = 0
        elif isinstance(event, Won):
            assert event.stack is not None
            self.players[event.seat]["stack"] = event.stack
        elif isinstance(event, HandEnded):
            for s in event.stacks:
                self.players[s.seat]["stack"] = s.amount

    def _copy(self, seat: int, event: Any, *, committed: int | None) -> None:
        for value in (event.stack, event.in_pot, committed, event.to_match, event.pot_total):
            assert value is not None, f"{event} carries no results"
        self.players[seat].update(stack=event.stack, committed=committed, in_pot=event.in_pot)
        self.to_match = event.to_match
        self.pot_total = event.pot_total

    def matches(self, state: HandState) -> None:
        for i, seat in enumerate(state.seats):
            assert self.players[seat]["stack"] == state.stacks[i], seat
            if not state.over:
                assert self.players[seat]["committed"] == state.committed[i], seat
                assert self.players[seat]["in_pot"] == state.contributed[i], seat
        if not state.over:
            assert self.to_match == state.to_match
            assert self.pot_total == sum(state.contributed)


@SETTINGS
@given(hands())
def test_a_client_copying_the_events_holds_the_states_numbers(hand) -> None:  # type: ignore[no-untyped-def]
    config, entries, button, deck, kill, seed = hand
    rng = random.Random(seed)
    state, events = start_hand(config, entries, button=button, deck=deck, kill=kill)
    client = CopyingClient(state)
    for event in events:
        client.apply(event)
    # A blind not posted (its player all-in from the ante) still sets the amount to
    # match: the table's first `turn` message carries it, as it does every turn's.
    client.to_match = state.to_match
    client.matches(state)
    while not state.over:
        for event in apply_in_place(state, random_action(state, rng)):
            client.apply(event)
        client.matches(state)
