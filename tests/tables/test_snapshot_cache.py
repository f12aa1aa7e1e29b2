"""Spectators' snapshots from the cached form (tables/snapshot_cache.py): one database read
a table and version in a web process, however many viewers without a seat ask, never
behind the table's stream; a signed-in viewer's own part added to it, a seated player's
snapshot read whole. Real PostgreSQL and Redis (the table's feed), through the consumer.
"""

import asyncio
import threading
import time
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async as db
from django.utils import timezone

from tables import consumers, events
from tables.events import TableMessage
from tables.feed import RESYNC, feed_channel, new_inbox, table_feed
from tables.models import AutoTopUp, ChatMute, Departure, PlayerSettings, Table
from tables.selectors import snapshot_for_viewer, table_snapshot, table_snapshot_public
from tables.services.chat import chat_send
from tables.snapshot_cache import public_snapshot_read, snapshot_cache
from tests.kit import TableFactory, UserFactory, deal, funded_player, seat_players
from tests.tables.test_consumers import connect_as

on_sockets = pytest.mark.django_db(transaction=True)


class Reads:
    """`public_snapshot_read` counted, as the consumer calls it."""

    def __init__(self, monkeypatch) -> None:
        self.count = 0
        monkeypatch.setattr(consumers, "public_snapshot_read", self)

    def __call__(self, table_id: int):
        self.count += 1
        return public_snapshot_read(table_id)


@pytest.fixture
def table(transactional_db):
    """A table no timer loop deals at (the suite's may run): only what a test does moves
    it."""
    return TableFactory(seats=6, next_hand_at=timezone.now() + timedelta(hours=1))


def _chat_table() -> tuple[Table, list, object]:
    """A table with two players seated and chatting, a hand under way, and a viewer
    without a seat who muted one of them, left the stake level lately with a big stack,
    and keeps an auto top-up order."""
    table = TableFactory(seats=6)
    ann, bob = seat_players(table, 2)
    chat_send(table_id=table.id, user=ann, text="hello")
    chat_send(table_id=table.id, user=bob, text="hi ann")
    viewer = funded_player()
    ChatMute.objects.create(muter=viewer, muted=ann)
    Departure.objects.create(player=viewer, stake_level=table.stake_level, stack=15_000)
    PlayerSettings.objects.create(user=viewer, auto_top_up=AutoTopUp.MAX)
    return table, [ann, bob], viewer


@pytest.mark.django_db
@pytest.mark.parametrize("for_spectators", [True, False])
def test_a_viewer_without_a_seat_gets_the_spectators_snapshot_and_their_own_part(
    for_spectators,
):
    table, (ann, bob), viewer = _chat_table()
    Table.objects.filter(pk=table.pk).update(chat_for_spectators=for_spectators)
    table = Table.objects.select_related("stake_level").get(pk=table.pk)
    public = table_snapshot_public(table=table)
    spectators = table_snapshot(table=table, user=None)
    assert public.body == spectators and public.seated == {ann.id, bob.id}
    assert public.version == table.event_seq

    mine = snapshot_for_viewer(public, user=viewer)
    assert mine == table_snapshot(table=table, user=viewer)  # as a read of their own
    assert mine["you"] is None and mine["hand"] == spectators["hand"]  # no cards of anyone
    assert mine["buy_in"] == {"min": 15_000, "max": 20_000}  # no ratholing
    assert mine["muted"] == [ann.username]
    assert mine["auto_top_up"] == {"mode": AutoTopUp.MAX, "big_blinds": None}
    if for_spectators:  # ann's line reaches the viewer as muted only
        assert mine["chat"][0] == {
            "type": "chat", "id": mine["chat"][0]["id"], "seat": 1, "player": ann.username,
            "muted": True,
        }  # fmt: skip
        assert mine["chat"][1]["text"] == "hi ann"
    else:  # kept from everyone without a seat, muted or not
        assert mine["chat"] == spectators["chat"]
        assert all(line.get("hidden") for line in mine["chat"])
    # Their own part went into their copy only: the cached form is as it was.
    assert public.body == spectators
    other = snapshot_for_viewer(public, user=UserFactory())
    assert other["muted"] == [] and other["buy_in"] == {"min": 4_000, "max": 20_000}


@on_sockets
async def test_one_read_a_table_and_version_however_many_viewers_without_a_seat_ask(
    table, monkeypatch
):
    reads = Reads(monkeypatch)
    ann, _bob = await db(seat_players)(table, 2)
    watchers = [await db(UserFactory)() for _ in range(5)]
    crowd = [connect_as(None, table.id) for _ in range(20)]
    crowd += [connect_as(user, table.id) for user in watchers]
    snapshots = await asyncio.gather(*(client.connect() for client in crowd))
    assert reads.count == 1
    assert {s["v"] for s in snapshots} == {snapshots[0]["v"]}
    for client in crowd[::4]:  # and again, asked for
        assert (await client.send("snapshot"))["type"] == "ack"
    assert reads.count == 1

    # The table moves (a line of chat): the next viewer to ask reads it again, once.
    player = connect_as(ann, table.id)  # seated: read whole, not from the cached form
    await player.connect()
    assert (await player.send("chat", text="hello"))["type"] == "ack"
    await crowd[0].until(lambda m: m.get("type") == "chat")
    answers = await asyncio.gather(*(client.send("snapshot") for client in crowd[:10]))
    assert {a["type"] for a in answers} == {"ack"} and reads.count == 2
    fresh = [m for m in crowd[1].messages if m.get("type") == "snapshot"][-1]
    assert fresh["v"] == snapshots[0]["v"] + 1 and fresh["chat"][0]["text"] == "hello"
    for client in (*crowd, player):
        await client.ws.disconnect()


@on_sockets
async def test_viewers_asking_while_it_is_read_wait_for_that_one_read(table):
    """Single flight: ten ask at once, one read is made, and one asker going away (its
    socket closed) cancels nobody else's."""
    inbox = new_inbox()
    await table_feed().join(table.id, inbox)  # as a consumer does before asking
    cache = snapshot_cache()
    await cache.follow(table.id, inbox)
    release, reads = asyncio.Event(), []

    async def read():
        reads.append(1)
        await release.wait()
        return await db(public_snapshot_read)(table.id)

    asking = [asyncio.ensure_future(cache.public(table.id, read)) for _ in range(10)]
    while not reads:
        await asyncio.sleep(0.01)
    asking[0].cancel()  # the first asker's socket closed meanwhile
    release.set()
    answers = await asyncio.gather(*asking[1:])
    assert len(reads) == 1 and all(answer is answers[0] for answer in answers)
    assert await cache.public(table.id, read) is answers[0]  # kept: nothing moved
    assert len(reads) == 1
    await cache.unfollow(table.id, inbox)
    await table_feed().leave(table.id, inbox)


@on_sockets
async def test_a_read_during_which_the_table_moved_is_not_kept(table, monkeypatch):
    """A message of the table reaches this process while a spectator's snapshot is read:
    the spectator gets that read (and the message after it), nobody else does."""
    version = table.event_seq
    moved = threading.Event()

    def read_while_it_moves(table_id: int):
        entry = cache._tables[table_id]
        before = entry.moved
        # A command commits elsewhere and publishes (its message, the next version).
        events._publish(table_id, [TableMessage(version + 1, {"type": "probe"})])
        for _ in range(1000):  # until this process's feed has delivered it
            if entry.moved > before:
                moved.set()
                break
            time.sleep(0.01)
        reads.append(table_id)
        return public_snapshot_read(table_id)

    cache, reads = snapshot_cache(), []
    monkeypatch.setattr(consumers, "public_snapshot_read", read_while_it_moves)
    watcher = connect_as(None, table.id)
    snapshot = await watcher.connect()
    assert moved.is_set() and snapshot["v"] == version
    assert (await watcher.next())["type"] == "probe"  # its stream goes on from the read
    assert cache._tables[table.id].snapshot is None  # not kept
    monkeypatch.setattr(consumers, "public_snapshot_read", public_snapshot_read)
    late = connect_as(None, table.id)
    await late.connect()
    assert len(reads) == 1 and cache._tables[table.id].snapshot is not None  # read again
    for client in (watcher, late):
        await client.ws.disconnect()


@on_sockets
async def test_the_cache_follows_a_tables_feed_only_while_a_viewer_here_does(table):
    viewers = [connect_as(None, table.id) for _ in range(3)]
    for client in viewers:
        await client.connect()
    cache, feed = snapshot_cache(), table_feed()
    entry = cache._tables[table.id]
    assert entry.snapshot is not None and entry in feed._inboxes[feed_channel(table.id)]
    entry.put_nowait(RESYNC)  # the feed lost messages: what was read may be behind
    assert entry.snapshot is None
    for client in viewers:
        await client.ws.disconnect()
    assert table.id not in cache._tables
    assert feed_channel(table.id) not in feed._inboxes  # unsubscribed: nobody follows


@on_sockets
async def test_a_seated_players_snapshot_is_their_own(table, monkeypatch):
    reads = Reads(monkeypatch)
    ann, _bob = await db(seat_players)(table, 2)
    await db(deal)(table)
    client = connect_as(ann, table.id)
    snapshot = await client.connect()
    assert snapshot["you"]["seat"] == 1
    mine, theirs = snapshot["hand"]["players"]
    assert mine["cards"] and theirs["cards"] is None
    assert reads.count == 1  # the public form said she is seated; hers was read whole
    assert (await client.send("snapshot"))["type"] == "ack"
    assert reads.count == 1  # seated: straight to her own
    await client.ws.disconnect()
