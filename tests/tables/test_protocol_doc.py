"""docs/protocol.md against the code: every command and its fields, every message type
and every private note the server can send are documented, and nothing documented is
missing from the code."""

import dataclasses
import re
from pathlib import Path

import pytest

from tables.commands import COMMANDS
from tables.consumers import CLOSE_TOO_MANY
from tables.engine.events import EVENT_TYPES
from tables.messages import AUDIENCE, MESSAGE_TYPES, NOTE_KEYS, TableEvent
from tables.session_watch import CLOSE_SIGNED_OUT

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()


def section(title: str) -> str:
    start = DOC.index(f"## {title}\n")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end != -1 else None]


def table_rows(text: str) -> dict[str, str]:
    """First cell's backticked names -> the rest of the row, for every table row."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 2:
            continue
        for name in re.findall(r"`([a-z_]+)`", cells[0]):
            rows[name] = " | ".join(cells[1:])
    return rows


COMMAND_ROWS = table_rows(section("Commands and answers"))
MESSAGE_ROWS = table_rows(section("Server messages"))


def test_the_doc_lists_exactly_the_commands_of_the_schema():
    assert set(COMMAND_ROWS) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_field_of_a_command_is_documented_in_its_row(name):
    documented = set(re.findall(r"`([a-z_]+)`", COMMAND_ROWS[name]))
    fields = {f.name for f in dataclasses.fields(COMMANDS[name])}
    assert fields <= documented, f"{name}: {sorted(fields - documented)} not in the doc"


def test_every_message_type_is_documented():
    assert set(MESSAGE_TYPES) | set(EVENT_TYPES) <= set(MESSAGE_ROWS)


@pytest.mark.parametrize("name", sorted(MESSAGE_TYPES))
def test_every_field_of_a_table_message_is_documented_in_its_row(name):
    message: type[TableEvent] = MESSAGE_TYPES[name]
    documented = set(re.findall(r"`([a-z_]+)`", MESSAGE_ROWS[name]))
    # Fields saying who receives the message are not sent.
    fields = {f.name for f in dataclasses.fields(message) if f.metadata != AUDIENCE}
    assert fields <= documented, f"{name}: {sorted(fields - documented)} not in the doc"


@pytest.mark.parametrize("key", NOTE_KEYS)
def test_every_private_note_is_documented(key):
    assert f'"{key}"' in DOC or f"`{key}`" in DOC


def test_the_close_codes_of_the_consumer_are_documented_where_a_client_connects():
    connecting = section("Connecting")
    for code in (4404, 1013, CLOSE_TOO_MANY, CLOSE_SIGNED_OUT):
        assert str(code) in connecting, code
