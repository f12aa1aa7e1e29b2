"""Fixtures of the chaos machines: no timer loop running, the published messages
recorded (services machine), decks shuffled from a seed Hypothesis draws, the fault
injection in place."""

from collections.abc import Iterator

import pytest

from tables import events
from tables.engine.state import HandState
from tables.services import hands
from tests.chaos import recording
from tests.chaos.stats import STATS


@pytest.fixture
def chaos_ready(timers_stopped, monkeypatch) -> Iterator[recording.Recorded]:
    """No timer loop (the machine is the clock); seeded decks; the fault injection ready."""
    recording.RECORDED.clear()
    STATS.reset()
    monkeypatch.setattr(hands, "shuffled_deck", recording.shuffled_deck_seeded)
    monkeypatch.setattr(HandState, "from_dict", staticmethod(recording.load_state_with_faults))
    yield recording.RECORDED
    print(STATS.summary())
    recording.RECORDED.clear()


@pytest.fixture
def messages_recorded(chaos_ready, monkeypatch) -> recording.Recorded:
    """The published messages are recorded instead of going to the channel layer."""
    monkeypatch.setattr(events, "_publish", recording.publish_recorded)
    return chaos_ready
