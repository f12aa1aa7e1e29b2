"""The stream every viewer receives is one numbered stream and shows only what that
viewer may see (tests/streams.py runs every table service from every seat's view and a
spectator's; tests/browser/test_stream_replay.py checks what the page makes of it)."""

import json
import re

import pytest

from tests.streams import Recording, Step

CARD = re.compile(r'"([2-9TJQKA][cdhs])"')


@pytest.mark.django_db  # the recording needs the test database
def test_the_stream_contract_holds_for_every_service_and_viewer(stream_recording: Recording):
    """Recorded once (the scenarios take a while), checked four ways."""
    steps = stream_recording.steps
    every_service_is_in_a_scenario(steps)
    snapshot_before_plus_the_messages_is_the_version_after(steps)
    every_viewer_receives_every_message_of_the_stream(steps)
    no_viewer_receives_a_card_they_may_not_see(steps)


def every_service_is_in_a_scenario(steps: list[Step]) -> None:
    names = {step.name.split()[0] for step in steps}
    assert {
        "seat_take",
        "hand_start",
        "hand_act",
        "turn_timeout",
        "advance",
        "sit_out",
        "sit_in",
        "top_up",
        "leave",
        "pause",
        "open",
        "straddle",
        "disconnected",
        "reconnected",
        "chat",
        "auto_top_up",
        "run_twice",
    } <= names


def snapshot_before_plus_the_messages_is_the_version_after(steps: list[Step]) -> None:
    for step in steps:
        for viewer, (before, messages, after) in step.views.items():
            versions = [m["v"] for m in messages]
            expected = list(range(before["v"] + 1, after["v"] + 1))
            assert versions == expected, f"{step.scenario} / {step.name} / {viewer}"


def every_viewer_receives_every_message_of_the_stream(steps: list[Step]) -> None:
    for step in steps:
        kinds = {tuple(m["type"] for m in messages) for _, messages, _ in step.views.values()}
        assert len(kinds) == 1, f"{step.scenario} / {step.name}: {kinds}"


def no_viewer_receives_a_card_they_may_not_see(steps: list[Step]) -> None:
    """A card in a message is on the board, shown, or the viewer's own hole card (as
    their snapshot after the step says)."""
    for step in steps:
        for viewer, (before, messages, after) in step.views.items():
            allowed = set()
            for snapshot in (before, after):
                hand = snapshot["hand"]
                if hand is None:
                    continue
                allowed |= set(hand["board"])
                for p in hand["players"]:
                    allowed |= set(p["cards"] or ())
            for message in messages:
                if message["type"] in ("dealt_board", "shown", "hand_ended", "won", "pots"):
                    allowed |= set(CARD.findall(json.dumps(message)))
                    continue
                leaked = set(CARD.findall(json.dumps(message))) - allowed
                assert not leaked, f"{step.scenario} / {step.name} / {viewer}: {message}"
