"""No frame a viewer sends can stop a table (issue #46, finding 1 and "only the room's own
failures pause a table").

The finding: `{"cmd": "mute", "player": "\\ud800", "on": true}`, sent twice by any
signed-in user, paused the table: the lone surrogate passed the field check, psycopg
raised `UnicodeEncodeError` inside the table command, and the envelope counted it as
the table's failure. Now every string field is held to its rule before any service runs
(tables/commands.py), and a failure of a player's command never counts toward pausing
(tables/services/command.py).

Here every command of `COMMANDS` goes over the real table consumer (real PostgreSQL,
real Redis channel layer), from a seated player and from a signed-in viewer who is not
seated, with hostile strings in every string field and wrong JSON types in every field:
each frame is answered `error` (never `server_error`), nothing is stored, no table is
paused or counts a failure, and the table deals and plays on afterwards. The REST
seating endpoints, whose serializers come from the same command classes, answer the
same values with a 400 (never a 500).
"""

import dataclasses
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async as db
from channels.routing import URLRouter
from django.urls import path

from tables.commands import COMMANDS, field_type
from tables.consumers import TableConsumer
from tables.models import ChatMessage, ChatMute, Seat, Table, TableStatus
from tests.kit import (
    StakeLevelFactory,
    act_passively,
    api_for,
    current,
    deal,
    funded_player,
    key,
    play_passively,
    table_with_players,
)
from tests.tables.test_consumer_hardening import communicator
from tests.tables.test_consumers import Client_

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("timers_stopped")]

THE_FINDINGS_FRAME = '{"cmd":"mute","player":"\\ud800","on":true,"seq":%d}'

HOSTILE_STRINGS = {
    "lone high surrogate": "\ud800",
    "lone low surrogate": "ab\udfffcd",
    "NUL": "a\x00b",
    "control": "bell\x07",
    "RTL override": "\u202eevil",
    "zero-width space": "zero\u200bwidth",
    "byte-order mark": "\ufeffmark",
    "line separator": "line\u2028break",
    "paragraph separator": "para\u2029graph",
    "Zalgo": "z" + "\u0301\u0302\u0303\u0304\u0306\u0307\u0308\u0309" * 4,
    "doubled mark": "e\u0301\u0301",
    "private use": "\ue000",
    "empty": "",
    "blank": "   ",
    "3,900 characters": "x" * 3_900,
    "10k characters": "x" * 10_000,
}
WRONG_TYPES = {
    "number": 5,
    "fraction": 1.5,
    "huge": 2**70,
    "true": True,
    "string": "1",
    "surrogate string": "\ud800",
    "list": ["a", 1],
    "nested object": {"a": [1, {"b": {"c": None}}]},
}
# Codes a refused hostile field may get: the field checks' (and the frame cap's).
FIELD_REFUSALS = {
    "malformed",
    "frame_too_large",
    "idempotency_key_invalid",
    "no_such_player",
    "chat_empty",
    "chat_unprintable",
    "chat_marks",
}


def benign(cls, f) -> Any:
    """A value of the field that its check takes (the hostile one goes in another)."""
    kind = field_type(cls, f)
    if kind is bool:
        return False
    if kind is int:
        return 6 if f.name == "seat" else 10_000 if f.name in ("buy_in", "amount") else 1
    return {"key": key(), "action": "call", "mode": "max", "player": "nobody", "text": "hi"}[f.name]


def hostile_values(cls, f) -> dict[str, Any]:
    """What goes into one field: the wrong JSON types (not its own: "1" is a fine key, 5 a
    fine turn), and for a string the hostile strings."""
    kind = field_type(cls, f)
    values = {what: v for what, v in WRONG_TYPES.items() if type(v) is not kind}
    if kind is int:
        values["past a bigint"] = 2**63
        values["below a bigint"] = -(2**63)
    if kind is str:
        values.update(HOSTILE_STRINGS)
        if f.name == "key":
            values.pop("blank")  # printable ASCII: a key, if an odd one
    return values


def hostile_frames() -> list[tuple[str, dict[str, Any]]]:
    """(what, frame body): every command, each field hostile in turn, the others benign;
    each command with hostile fields it does not have; hostile command names."""
    frames = []
    for name, cls in sorted(COMMANDS.items()):
        fields = dataclasses.fields(cls)
        for f in fields:
            for what, value in hostile_values(cls, f).items():
                body = {g.name: benign(cls, g) for g in fields}
                body[f.name] = value
                frames.append((f"{name}.{f.name} = {what}", {"cmd": name, **body}))
        # Fields the command does not have are ignored (and never stored).
        extras = {label: value for label, value in HOSTILE_STRINGS.items() if len(value) < 100}
        frames.append((f"{name} with hostile extra fields", {"cmd": name, **extras}))
    for what, value in {**HOSTILE_STRINGS, **WRONG_TYPES}.items():
        if len(str(value)) < 1_000:
            frames.append((f"cmd = {what}", {"cmd": value}))
    return frames


FRAMES = hostile_frames()


class Unlimited(TableConsumer):
    """The table consumer without its per-socket rate limit, so that hundreds of frames
    in a row reach the checks (the limits have tests of their own)."""

    rate_burst = 10**9
    rate_per_second = 10**9


router = URLRouter([path("ws/tables/<int:table_id>/", Unlimited.as_asgi())])


@pytest.fixture
def unlimited(settings):
    settings.TABLE_VIEWER_BURST = 10**9
    settings.TABLE_VIEWER_PER_SECOND = 10**9


@pytest.fixture
def room():
    """A table with three players seated and a hand in progress, and a signed-in viewer
    who is not seated."""
    table, players = table_with_players(StakeLevelFactory(), 3)
    deal(table)
    return table, players, funded_player()


async def connected(user, table_id: int) -> Client_:
    client = Client_(communicator(user, table_id, router), user.username)
    await client.connect()
    return client


def table_healthy(table: Table) -> None:
    table.refresh_from_db()
    assert (table.status, table.failure_count, table.paused_reason) == (TableStatus.OPEN, 0, "")


async def send_raw(client: Client_, text: str) -> dict:
    client.seq += 1
    await client.ws.send_to(text_data=text % client.seq if "%d" in text else text)
    return await client.answer(client.seq)


@pytest.mark.parametrize("sender", ["seated", "not seated"])
async def test_the_findings_frame_sent_twice_pauses_nothing(room, sender):
    table, players, stranger = room
    user = players[2] if sender == "seated" else stranger
    client = await connected(user, table.id)
    for _ in range(3):
        answer = await send_raw(client, THE_FINDINGS_FRAME)
        assert answer["type"] == "error" and answer["code"] == "no_such_player", answer
    await db(table_healthy)(table)
    assert not await db(ChatMute.objects.exists)()
    await client.ws.disconnect()


@pytest.mark.parametrize("sender", ["seated", "not seated"])
async def test_every_command_with_hostile_fields_is_refused_and_no_table_pauses(
    room, unlimited, sender
):
    table, players, stranger = room
    user = players[2] if sender == "seated" else stranger
    client = await connected(user, table.id)
    answers: dict[str, dict] = {}
    for what, body in FRAMES:
        client.seq += 1
        text = json.dumps({**body, "seq": client.seq})
        await client.ws.send_to(text_data=text)
        if len(text) > 4096:
            answer = await client.next()  # refused unread: its seq is not known
            assert answer.get("seq") is None, (what, answer)
        else:
            answer = await client.answer(client.seq)
        answers[what] = answer
        assert answer["type"] in ("ack", "error"), (what, answer)
        assert answer.get("code") != "server_error", (what, answer)
        if what.startswith("cmd ="):
            assert answer["code"] in ("unknown_command", "malformed"), (what, answer)
        elif "extra fields" not in what:
            assert answer["type"] == "error", (what, answer)
            assert answer["code"] in FIELD_REFUSALS, (what, answer)
    await db(table_healthy)(table)
    assert not await db(ChatMessage.objects.exists)()
    assert not await db(ChatMute.objects.exists)()
    assert not await db(Seat.objects.filter(player=stranger).exists)()
    await client.ws.disconnect()

    # The table deals and plays on: the hand in progress to its end (the sender, if
    # their `leave` or `sit_out` with extra fields was taken, folds or sits out after
    # it), then a new hand dealt and played.
    await db(act_passively)(table)
    hand = await db(play_passively)(table)
    assert hand.status == "finished"
    await db(table_healthy)(table)


def test_the_rest_seating_endpoints_answer_400_to_every_hostile_field(room):
    """The serializers are built from the same command classes and hold each field to
    the same check: the same hostile values are a 400 with a reason (never a 500, never
    a seat), and so are hostile Idempotency-Key headers."""
    table, players, stranger = room
    hand, _state = current(table)
    urls = {"sit": "seat", "top_up": "top-up"}

    def post(api, url: str, body: Any, key_header: str) -> Any:
        # Encoded here: the test client's own JSON encoder cannot write a lone surrogate.
        return api.post(
            f"/api/tables/{table.id}/{url}",
            json.dumps(body),
            content_type="application/json",
            HTTP_IDEMPOTENCY_KEY=key_header,
        )

    for user in (stranger, players[2]):
        api = api_for(user)
        for name, url in urls.items():
            cls = COMMANDS[name]
            fields = [f for f in dataclasses.fields(cls) if f.name != "key"]
            for f in fields:
                for what, value in hostile_values(cls, f).items():
                    body = {g.name: benign(cls, g) for g in fields} | {f.name: value}
                    response = post(api, url, body, key())
                    assert response.status_code == 400, (name, f.name, what, response.content)
                    assert f.name in response.json()["errors"], (name, f.name, what)
            for what, header in {
                "NUL": "a\x00b",
                "not ASCII": "cl\u00e9",
                "10k characters": "k" * 10_000,
                "blank": "   ",
            }.items():
                body = {g.name: benign(cls, g) for g in fields}
                response = post(api, url, body, header)
                assert response.status_code == 400, (name, what, response.content)
                code = response.json()["code"]
                assert code in ("idempotency_key_invalid", "idempotency_key_missing"), code
        for body in ([1, 2], "\ud800", {"\ud800": {"a": [1]}}):
            response = post(api, "leave", body, key())
            assert response.status_code < 500, (body, response.content)
    table_healthy(table)
    assert not Seat.objects.filter(player=stranger).exists()
    assert current(table)[0].pk == hand.pk
