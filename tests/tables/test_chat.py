"""Table chat over the table's WebSocket (tables/services/chat.py): who writes, who reads,
the length and rate limits, muting, the admin keeping it from spectators, the snapshot's
recent lines and the admin's list. Real Redis channel layer and PostgreSQL."""

import threading
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async as sync_to_async
from django.db import connection
from django.utils import timezone

from tables import consumers
from tables.models import ChatMessage, Table
from tables.selectors import table_snapshot
from tables.services import seating
from tables.services.chat import CHAT_BURST, CHAT_MAX_CHARS, chat_send
from tests.kit import StakeLevelFactory, TableFactory, funded_player, key, seat_players
from tests.tables.test_consumers import connect_as

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def table(transactional_db):
    # No deals: the chat is the subject (the hour-long pause keeps a worker from dealing).
    table = TableFactory(stake_level=StakeLevelFactory(), seats=6)
    Table.objects.filter(pk=table.pk).update(next_hand_at=timezone.now() + timedelta(hours=1))
    return table


async def chat_lines(client) -> list[dict]:
    await client.drain()
    return [m for m in client.messages if m.get("type") == "chat"]


async def test_a_line_reaches_every_viewer_and_the_spectators(table):
    ann, bob = await sync_to_async(seat_players)(table, 2)
    carol = await sync_to_async(funded_player)()
    a, b, spectator = (
        connect_as(ann, table.id),
        connect_as(bob, table.id),
        connect_as(None, table.id),
    )
    watcher = connect_as(carol, table.id)
    for client in (a, b, spectator, watcher):
        await client.connect()
    assert (await a.send("chat", text="  good luck all  "))["type"] == "ack"
    for client in (a, b, spectator, watcher):
        (line,) = await chat_lines(client)
        assert line["text"] == "good luck all" and line["player"] == ann.username
        assert line["seat"] == 1
    # A spectator and a logged-in watcher read but do not write.
    assert (await watcher.send("chat", text="hi"))["code"] == "not_seated"
    assert (await spectator.send("chat", text="hi"))["code"] == "login_required"
    stored = await sync_to_async(list)(ChatMessage.objects.values_list("text", flat=True))
    assert stored == ["good luck all"]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("   ", "chat_empty"),
        ("x" * (CHAT_MAX_CHARS + 1), "malformed"),
        ("bad\u202eline", "chat_unprintable"),
        ("nul\x00", "chat_unprintable"),
        (7, "malformed"),
    ],
    ids=["empty", "too long", "bidi override", "control", "not text"],
)
async def test_a_bad_line_is_refused_with_its_reason_and_stored_nowhere(table, text, code):
    (ann,) = await sync_to_async(seat_players)(table, 1)
    a = connect_as(ann, table.id)
    await a.connect()
    answer = await a.send("chat", text=text)
    assert answer["type"] == "error" and answer["code"] == code, answer
    assert not await chat_lines(a)
    assert not await sync_to_async(ChatMessage.objects.exists)()


async def test_a_line_of_exactly_the_longest_length_is_taken(table):
    (ann,) = await sync_to_async(seat_players)(table, 1)
    a = connect_as(ann, table.id)
    await a.connect()
    assert (await a.send("chat", text="y" * CHAT_MAX_CHARS))["type"] == "ack"


async def test_the_rate_limit_counts_lines_over_every_connection(table):
    (ann,) = await sync_to_async(seat_players)(table, 1)
    first, second = connect_as(ann, table.id), connect_as(ann, table.id)
    await first.connect()
    await second.connect()
    for n in range(CHAT_BURST):
        client = first if n % 2 else second
        assert (await client.send("chat", text=f"line {n}"))["type"] == "ack"
    refused = await first.send("chat", text="one too many")
    assert refused["code"] == "chat_rate_limited", refused
    assert (await second.send("chat", text="and here"))["code"] == "chat_rate_limited"
    assert await sync_to_async(ChatMessage.objects.count)() == CHAT_BURST


async def test_a_muted_player_reaches_the_muter_as_muted_only(table):
    ann, bob, cat = await sync_to_async(seat_players)(table, 3)
    a, b, c = connect_as(ann, table.id), connect_as(bob, table.id), connect_as(cat, table.id)
    for client in (a, b, c):
        await client.connect()
    assert (await b.send("mute", player=ann.username.upper(), on=True))["type"] == "ack"
    assert (await a.send("chat", text="you are all fish"))["type"] == "ack"
    (to_bob,) = await chat_lines(b)
    assert to_bob.get("muted") is True and "text" not in to_bob
    assert (await chat_lines(c))[0]["text"] == "you are all fish"
    # The mute is nobody else's business: ann's own copy says nothing of it.
    assert "muted" not in (await chat_lines(a))[0]
    # Bob's next snapshot lists the mute and hides the line; unmuting shows what comes next.
    again = connect_as(bob, table.id)
    snapshot = await again.connect()
    assert snapshot["muted"] == [ann.username]
    assert snapshot["chat"][0].get("muted") is True and "text" not in snapshot["chat"][0]
    assert (await b.send("mute", player=ann.username, on=False))["type"] == "ack"
    assert (await a.send("chat", text="sorry"))["type"] == "ack"
    assert (await chat_lines(b))[-1]["text"] == "sorry"
    assert (await b.send("mute", player=bob.username, on=True))["code"] == "no_such_player"
    assert (await b.send("mute", player="nobody-here", on=True))["code"] == "no_such_player"


async def test_a_table_that_keeps_its_chat_from_spectators(table):
    await sync_to_async(Table.objects.filter(pk=table.pk).update)(chat_for_spectators=False)
    ann, bob = await sync_to_async(seat_players)(table, 2)
    a, b, spectator = (
        connect_as(ann, table.id),
        connect_as(bob, table.id),
        connect_as(None, table.id),
    )
    for client in (a, b, spectator):
        await client.connect()
    assert (await a.send("chat", text="players only"))["type"] == "ack"
    assert (await chat_lines(b))[0]["text"] == "players only"
    (hidden,) = await chat_lines(spectator)
    assert hidden == {"v": hidden["v"], "type": "chat", "id": hidden["id"], "hidden": True}
    # The stream stays whole for the spectator: the hidden line has its version.
    assert (await spectator.send("snapshot"))["type"] == "ack"
    fresh = next(m for m in reversed(spectator.messages) if m.get("type") == "snapshot")
    assert fresh["chat"] == [{"type": "chat", "id": hidden["id"], "hidden": True}]


async def test_the_snapshot_carries_the_recent_lines_as_the_viewer_may_read_them(table):
    ann, bob = await sync_to_async(seat_players)(table, 2)
    a = connect_as(ann, table.id)
    await a.connect()
    for text in ("one", "two"):
        assert (await a.send("chat", text=text))["type"] == "ack"
    snapshot = await connect_as(bob, table.id).connect()
    assert [line["text"] for line in snapshot["chat"]] == ["one", "two"]
    assert snapshot["muted"] == []


def test_staff_read_every_line_in_the_admin_and_nobody_edits_one(table, admin_client):
    (ann,) = seat_players(table, 1)
    chat_send(table_id=table.id, user=ann, text="staff can read this")
    page = admin_client.get("/admin/tables/chatmessage/")
    assert page.status_code == 200
    assert "staff can read this" in page.content.decode()
    line = ChatMessage.objects.get()
    assert admin_client.get("/admin/tables/chatmessage/add/").status_code == 403
    delete = admin_client.post(f"/admin/tables/chatmessage/{line.pk}/delete/", {"post": "yes"})
    assert delete.status_code == 403
    assert ChatMessage.objects.filter(pk=line.pk).exists()


def test_a_hidden_line_stays_hidden_from_who_sat_down_after_it(table):
    """Finding: the snapshot let anyone seated *now* read the hidden lines, so a spectator
    could sit down (and leave again, the buy-in back in their wallet) to read the lines
    written while they watched. A line is read by the players seated when it was written."""
    Table.objects.filter(pk=table.pk).update(chat_for_spectators=False)
    table.refresh_from_db()
    (ann,) = seat_players(table, 1)
    line = chat_send(table_id=table.id, user=ann, text="players only")
    carol = funded_player()
    seating.seat_take(
        table_id=table.id, user=carol, seat_number=2, buy_in=10_000, idempotency_key=key()
    )
    table.refresh_from_db()
    assert table_snapshot(table=table, user=carol)["chat"] == [
        {"type": "chat", "id": line.id, "hidden": True}
    ]
    assert table_snapshot(table=table, user=ann)["chat"][0]["text"] == "players only"


def test_a_snapshot_is_one_moment_of_the_table(table, monkeypatch):
    """Finding: the snapshot read the table's stream version, then its seats, hand and
    chat, each at its own moment: a command another process committed in between was in
    the snapshot and again on the stream after it (a chat line shown twice, an action
    applied twice to the hand on the page)."""
    (ann,) = seat_players(table, 1)
    before = Table.objects.get(pk=table.pk).event_seq

    def write_elsewhere() -> None:
        try:
            chat_send(table_id=table.id, user=ann, text="in between")
        finally:
            connection.close()

    real = consumers.table_snapshot

    def snapshot_with_a_command_in_between(*, table, user):
        # The version is read; another process's command commits now.
        elsewhere = threading.Thread(target=write_elsewhere)
        elsewhere.start()
        elsewhere.join()
        return real(table=table, user=user)

    monkeypatch.setattr(consumers, "table_snapshot", snapshot_with_a_command_in_between)
    viewer = consumers.TableConsumer()
    viewer.table_id, viewer.user = table.id, None
    snapshot = viewer._snapshot()
    assert ChatMessage.objects.filter(table=table).count() == 1  # it was written
    # The line is in the snapshot exactly when the snapshot's version counts it.
    assert bool(snapshot["chat"]) == (snapshot["v"] > before), snapshot
