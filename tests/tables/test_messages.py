"""The table's message vocabulary (tables/messages.py): every type round-trips through
JSON, and each one's visibility rule gives every viewer exactly what they may see."""

import json

import pytest

from tables.engine.events import Acted, HoleCards, Posted
from tables.messages import (
    MESSAGE_TYPES,
    AdvanceNote,
    BlindOptionAsked,
    BlindOptionsNote,
    BlindRequestsNote,
    ChatSent,
    HandEventMessage,
    RunTwiceAsk,
    SeatLeft,
    SeatsChanged,
    ShowdownHands,
    TableStatusChanged,
    Turn,
    message_from_dict,
)

LEGAL = {"seat": 3, "can_fold": True, "can_check": False, "call_amount": 200}
SAMPLES = [
    Turn(
        hand=7,
        seat=3,
        turn=12,
        deadline="2026-12-01T18:00:00+00:00",
        time_bank_seconds=30,
        to_match=200,
        pot_total=300,
        legal_actions=LEGAL,
        presets={"min": 400, "half": 450, "pot": 700, "allin": 10_000},
        waiting=[{"seat": 5, "owed": 200, "raise_to": 400}],
        reconnect_bonus_seconds=20,
    ),
    RunTwiceAsk(hand=7, turn=13, deadline="2026-12-01T18:00:10+00:00", seats=[1, 3]),
    SeatsChanged(seats=[{"seat": 1, "player": "ann", "stack": 500, "status": "active"}]),
    SeatLeft(seat=2, player="bob"),
    TableStatusChanged(status="paused"),
    BlindOptionAsked(seat=4, kind="straddle", wanted=True),
    HandEventMessage(
        hand=7, event=Acted(seat=3, action="call", amount=200, street_total=200, all_in=False)
    ),
    HandEventMessage(hand=7, event=HoleCards(seat=3, cards=(0, 1, 2, 3))),
    ShowdownHands(
        hand=7,
        hands=[{"seat": 1, "high": "a pair of Aces", "high_cards": ["As"], "low": None}],
    ),
    ChatSent(id=4, seat=1, player="ann", text="gl", at="2026-12-01T18:00:00+00:00"),
    ChatSent(
        id=5, seat=1, player="ann", text="gl", at="2026-12-01T18:00:00+00:00", readers=[101, 103]
    ),
]
# Seat -> user id of the players dealt in.
DEALT = {1: 101, 3: 103, 5: 105}


def test_every_table_message_type_has_a_sample():
    sampled = {type(m) for m in SAMPLES}
    assert set(MESSAGE_TYPES.values()) <= sampled
    assert HandEventMessage in sampled


@pytest.mark.parametrize("message", SAMPLES, ids=lambda m: type(m).__name__)
def test_a_message_round_trips_through_json(message):
    assert message_from_dict(json.loads(json.dumps(message.to_dict()))) == message


def test_a_turn_shows_its_legal_actions_to_the_actor_and_each_waiting_player_their_options():
    turn = SAMPLES[0]
    public = turn.public()
    assert "legal_actions" not in public and "presets" not in public and "waiting" not in public
    assert public["seat"] == 3 and public["reconnect_bonus_seconds"] == 20
    assert public["to_match"] == 200 and public["pot_total"] == 300
    private = turn.private(DEALT)
    assert private[103] == {**public, "legal_actions": LEGAL, "presets": turn.presets}
    # The waiting player gets their own options, nobody else's; seat 1 is not waiting.
    assert private[105] == {**public, "advance_options": {"owed": 200, "raise_to": 400}}
    assert 101 not in private


def test_hole_cards_go_whole_to_their_owner_and_as_a_bare_fact_to_everyone_else():
    message = HandEventMessage(hand=7, event=HoleCards(seat=3, cards=(0, 1, 2, 3)))
    assert message.public() == {"hand": 7, "type": "hole_cards", "seat": 3}
    private = message.private(DEALT)
    assert list(private) == [103]
    assert private[103]["cards"] == message.to_dict()["cards"]


def test_a_public_hand_event_has_no_private_forms():
    message = HandEventMessage(hand=7, event=Posted(seat=1, kind="ante", amount=25, all_in=False))
    assert message.private(DEALT) == {}
    assert message.public() == {"hand": 7, **message.event.to_dict()}


@pytest.mark.parametrize(
    "note",
    [
        AdvanceNote(advance=None),
        BlindOptionsNote(blind_options={"straddle": {"open": True}}),
        BlindRequestsNote(blind_requests=[{"kind": "straddle", "posted": True}]),
    ],
    ids=lambda n: n.key,
)
def test_a_note_is_one_key_of_the_players_own_form(note):
    assert list(note.fields()) == [note.key]


LINE = {"id": 4, "seat": 1, "player": "ann", "text": "gl", "at": "2026-12-01T18:00:00+00:00"}


def test_a_chat_line_is_public_and_reaches_a_muter_as_muted_only():
    line = ChatSent(**LINE, muted_by=[105])
    assert line.public() == {"type": "chat", **LINE}
    muted = {"type": "chat", "id": 4, "seat": 1, "player": "ann", "muted": True}
    assert line.private(DEALT) == {105: muted}
    assert line.form_for(105) == muted and line.form_for(None) == line.public()


def test_a_chat_line_kept_from_spectators_reaches_its_readers_only():
    line = ChatSent(**LINE, readers=[101, 103], muted_by=[103])
    assert line.public() == {"type": "chat", "id": 4, "hidden": True}
    private = line.private(DEALT)
    assert private[101] == {"type": "chat", **LINE}
    assert private[103]["muted"] is True and "text" not in private[103]
    assert 105 not in private


def test_a_hidden_line_tells_a_muter_who_may_not_read_it_nothing_more_than_the_rest():
    """Finding: a spectator who had muted the author (a mute holds at every table) got the
    muted form, seat and name, of a line the table keeps from spectators."""
    line = ChatSent(**LINE, readers=[101], muted_by=[105])
    assert 105 not in line.private(DEALT)
    assert line.form_for(105) == {"type": "chat", "id": 4, "hidden": True}
