"""What a line of chat may hold, its one length cap, and the limit per player over every
table (issue #46, finding 11).

The finding: chat took U+2028/U+2029 (a line that breaks the lines around it) and
hundreds of combining marks ("Zalgo" text, spilling over the lines above and below);
the caps said 128 characters in one place and 200 in another; and the five lines in
ten seconds were counted per table, so a player seated at several tables wrote five at
each. Now separators are refused, a character carries at most `MARKS_MAX` marks, one
constant (`CHAT_MAX_CHARS`) is the cap everywhere, and the lines are counted per player
over every table, under a lock of the player's own.
"""

import dataclasses
import re
from pathlib import Path

import psycopg
import pytest
from channels.db import database_sync_to_async as db
from django.db import connection

from tables.commands import COMMANDS, text_rule
from tables.exceptions import TableBusy, TableError
from tables.models import ChatMessage, Table
from tables.services.chat import (
    CHAT_BURST,
    CHAT_MAX_CHARS,
    MARKS_MAX,
    chat_lock_key,
    chat_send,
    chat_text_clean,
    chat_text_refusal,
)
from tests.concurrency import run_together
from tests.kit import StakeLevelFactory, TableFactory, funded_player, sit
from tests.tables.test_consumers import connect_as

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("timers_stopped")]

ROOT = Path(__file__).resolve().parents[2]


def two_tables_with(user) -> list[Table]:
    tables = [TableFactory(stake_level=StakeLevelFactory(), seats=6) for _ in range(2)]
    for table in tables:
        sit(table, user, 1)
        sit(table, funded_player(), 2)
    return tables


# -- what a line may hold -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("one\u2028two", "chat_unprintable"),
        ("one\u2029two", "chat_unprintable"),
        ("one\x85two", "chat_unprintable"),  # NEL, a control character
        ("rtl\u202eevil", "chat_unprintable"),
        ("zero\u200bwidth", "chat_unprintable"),
        ("lone \ud800 surrogate", "chat_unprintable"),
        ("z" + "\u0301\u0302\u0303\u0304\u0306\u0307\u0308\u0309" * 20, "chat_marks"),
        ("a" + "\u0301\u0302\u0303\u0304", "chat_marks"),  # four on one letter
        ("e\u0301\u0301", "chat_marks"),  # one mark twice (composed: é and one more)
        ("\u20dd" * 3, "chat_marks"),  # an enclosing mark twice in a row
    ],
    ids=[
        "line separator",
        "paragraph separator",
        "next line",
        "bidi override",
        "zero-width space",
        "surrogate",
        "zalgo",
        "four marks",
        "doubled mark",
        "enclosing marks",
    ],
)
def test_a_line_that_would_not_show_as_what_it_says_is_refused(text, code):
    refusal = chat_text_refusal(text)
    assert refusal is not None and refusal.code == code, refusal


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("Ti\u1ebfng Vi\u1ec7t", "Ti\u1ebfng Vi\u1ec7t"),  # two marks a letter, composed
        ("Tie\u0302\u0301ng", "Ti\u1ebfng"),  # the same written decomposed: stored NFC
        ("\u0928\u092e\u0938\u094d\u0924\u0947", "\u0928\u092e\u0938\u094d\u0924\u0947"),
        ("a" + "\u0301\u0302\u0303", "\u00e1\u0302\u0303"),  # three marks: the most
        ("  gl hf \U0001f600  ", "gl hf \U0001f600"),
        ("\u2028 trailing separators are trimmed \u2029", "trailing separators are trimmed"),
    ],
    ids=["vietnamese", "decomposed", "devanagari", "three marks", "emoji", "trimmed"],
)
def test_honest_lines_are_taken_and_stored_composed(text, stored):
    assert chat_text_refusal(text) is None
    assert chat_text_clean(text) == stored


def test_three_marks_is_the_documented_most():
    assert MARKS_MAX == 3


async def test_separators_and_zalgo_are_refused_over_the_socket_and_stored_nowhere():
    table = await db(TableFactory)(stake_level=await db(StakeLevelFactory)(), seats=6)
    ann = await db(funded_player)()
    await db(sit)(table, ann, 1)
    client = connect_as(ann, table.id)
    await client.connect()
    for text, code in (
        ("one\u2028two", "chat_unprintable"),
        ("z" + "\u0301\u0302\u0303\u0304" * 30, "chat_marks"),
    ):
        answer = await client.send("chat", text=text)
        assert (answer["type"], answer["code"]) == ("error", code), answer
    assert (await client.send("chat", text="Ti\u1ebfng Vi\u1ec7t"))["type"] == "ack"
    stored = await db(list)(ChatMessage.objects.values_list("text", flat=True))
    assert stored == ["Ti\u1ebfng Vi\u1ec7t"]
    await client.ws.disconnect()


# -- one cap ----------------------------------------------------------------------------


def test_the_cap_is_one_constant_everywhere():
    """The command's field, the column, docs/protocol.md and the page's input all say
    `CHAT_MAX_CHARS` (the finding: 128 in one place, 200 in another)."""
    (text_field,) = dataclasses.fields(COMMANDS["chat"])
    assert text_rule(text_field).longest == CHAT_MAX_CHARS
    assert ChatMessage._meta.get_field("text").max_length == CHAT_MAX_CHARS
    page = (ROOT / "templates" / "tables" / "table.html").read_text()
    assert re.search(r'id="chat-text" maxlength="(\d+)"', page).group(1) == str(CHAT_MAX_CHARS)
    doc = (ROOT / "docs" / "protocol.md").read_text()
    chat_row = next(line for line in doc.splitlines() if line.startswith("| `chat` |"))
    assert f"1 to {CHAT_MAX_CHARS} characters" in chat_row
    # No other cap is stated for a chat line.
    assert re.search(r"\b128\b", doc) is None


def test_a_line_of_the_cap_is_taken_and_one_more_refused():
    assert chat_text_refusal("y" * CHAT_MAX_CHARS) is None
    assert chat_text_refusal("y" * (CHAT_MAX_CHARS + 1)).code == "chat_too_long"


# -- the limit per player, over every table -------------------------------------------


def test_the_limit_counts_a_players_lines_at_every_table():
    ann = funded_player()
    first, second = two_tables_with(ann)
    for n in range(CHAT_BURST):
        chat_send(table_id=(first, second)[n % 2].id, user=ann, text=f"line {n}")
    for table in (first, second):
        with pytest.raises(TableError) as refused:
            chat_send(table_id=table.id, user=ann, text="one too many")
        assert refused.value.code == "chat_rate_limited"
    assert ChatMessage.objects.filter(author=ann).count() == CHAT_BURST
    # Another player's lines are theirs: the limit is per player.
    other = funded_player()
    sit(first, other, 3)
    chat_send(table_id=first.id, user=other, text="my turn to talk")


def test_lines_sent_at_two_tables_at_once_never_pass_the_limit():
    """Both tables' commands count and write under the player's own lock: of lines sent
    at the same moment at two tables, never more than the limit are taken."""
    ann = funded_player()
    tables = two_tables_with(ann)
    jobs = [
        (lambda table=table, n=n: chat_send(table_id=table.id, user=ann, text=f"{n}"))
        for n in range(CHAT_BURST + 1)
        for table in tables
    ]
    results = run_together(jobs)
    refused = [r for r in results if isinstance(r, TableError)]
    assert all(r.code in ("chat_rate_limited", "table_busy") for r in refused), results
    assert not [r for r in results if isinstance(r, Exception) and r not in refused], results
    # (A command refused busy, on a loaded machine, never counted.)
    tried = len(results) - sum(r.code == "table_busy" for r in refused)
    assert ChatMessage.objects.filter(author=ann).count() == min(CHAT_BURST, tried)


def test_the_count_waits_for_the_players_lock(settings):
    """The lock is the player's own: held elsewhere (another table's command counting
    their lines), a line at any table waits for it, no longer than a table's lock
    (`table_busy`), and is taken once it is free."""
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    ann = funded_player()
    first, _second = two_tables_with(ann)
    params = connection.get_connection_params()
    params = {k: v for k, v in params.items() if k not in {"cursor_factory", "context"}}
    with psycopg.connect(**params) as other:
        other.execute("SELECT pg_advisory_xact_lock(%s, %s)", list(chat_lock_key(ann.pk)))
        with pytest.raises(TableBusy):
            chat_send(table_id=first.id, user=ann, text="waits")
        other.rollback()
    chat_send(table_id=first.id, user=ann, text="now")
    assert list(ChatMessage.objects.values_list("text", flat=True)) == ["now"]
