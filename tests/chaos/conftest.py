"""Fixtures of the chaos machines: the Celery tasks recorded instead of sent, the
published messages recorded (services machine), decks shuffled from a seed Hypothesis
draws, the fault injection in place."""

from collections.abc import Iterator

import pytest

from tables import events, scheduling
from tables.engine.state import HandState
from tables.services import hands
from tests.chaos import recording
from tests.chaos.stats import STATS


@pytest.fixture
def tasks_recorded(monkeypatch) -> Iterator[recording.Recorded]:
    """No worker: what the services schedule is recorded; the fault injection is ready."""
    recording.RECORDED.clear()
    STATS.reset()
    monkeypatch.setattr(scheduling, "_send_on_commit", recording.send_recorded)
    monkeypatch.setattr(hands, "shuffled_deck", recording.shuffled_deck_seeded)
    monkeypatch.setattr(HandState, "from_dict", staticmethod(recording.load_state_with_faults))
    yield recording.RECORDED
    print(STATS.summary())
    recording.RECORDED.clear()


@pytest.fixture
def messages_recorded(tasks_recorded, monkeypatch) -> recording.Recorded:
    """The published messages are recorded instead of going to the channel layer."""
    monkeypatch.setattr(events, "_publish", recording.publish_recorded)
    return tasks_recorded
