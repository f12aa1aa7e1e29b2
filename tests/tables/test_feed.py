"""The table's feed (tables/feed.py): a table's messages reach every inbox of this
process on that table once, in order per publisher, and nothing of another table or of
another room on the same Redis; a connection gone silent is found and replaced."""

import asyncio
import contextlib
import gc
import logging
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest
import redis
from django.conf import settings

from tables import events, feed
from tables.events import SentMessage, TableMessage, messages_from_group

TABLE_ID = 987_654  # a table the test database has not


def probe(version: int) -> TableMessage:
    return TableMessage(version=version, public={"type": "probe"})


async def published(*versions: int, table_id: int = TABLE_ID) -> None:
    # The commands' publish is sync (a command's thread): call it as they do.
    await asyncio.to_thread(events._publish, table_id, [probe(v) for v in versions])


async def versions_in(inbox: feed.Inbox, count: int) -> list[int]:
    async with asyncio.timeout(5):
        got = [await inbox.get() for _ in range(count)]
    return [m.version for message in got for m in messages_from_group(message)]


def subscribers(channel: str) -> int:
    client = redis.Redis.from_url(settings.REDIS_URL)
    return dict(client.pubsub_numsub(channel))[channel.encode()]


async def test_publishes_from_several_threads_arrive_and_each_thread_in_order():
    inbox = feed.new_inbox()
    await feed.table_feed().join(TABLE_ID, inbox)
    try:
        for version in range(1, 11):
            await published(version)

        def publish(version: int) -> None:
            events._publish(TABLE_ID, [probe(version)])

        with ThreadPoolExecutor(max_workers=3) as pool:  # a web process's worker threads
            await asyncio.get_running_loop().run_in_executor(
                None, lambda: list(pool.map(publish, range(11, 21)))
            )
        versions = await versions_in(inbox, 20)
        assert versions[:10] == list(range(1, 11))
        assert sorted(versions[10:]) == list(range(11, 21))
    finally:
        await feed.table_feed().leave(TABLE_ID, inbox)


async def test_the_viewers_of_a_table_share_one_subscription_and_one_decoding():
    channel = feed.feed_channel(TABLE_ID)
    first, second, elsewhere = feed.new_inbox(), feed.new_inbox(), feed.new_inbox()
    table_feed = feed.table_feed()
    await table_feed.join(TABLE_ID, first)
    await table_feed.join(TABLE_ID, second)
    await table_feed.join(TABLE_ID + 1, elsewhere)
    assert subscribers(channel) == 1  # joined means subscribed: nothing is missed after
    await published(1, 2)
    async with asyncio.timeout(5):
        one, other = await first.get(), await second.get()
    assert one is other  # one message read and decoded for both
    assert messages_from_group(one) is messages_from_group(other)
    assert [m.version for m in messages_from_group(one)] == [1, 2]
    assert [m.text_for(None) for m in messages_from_group(one)] == [
        '{"v": 1, "type": "probe"}',
        '{"v": 2, "type": "probe"}',
    ]
    await asyncio.sleep(0.2)
    assert elsewhere.empty()  # another table's viewer learns nothing of it

    await table_feed.leave(TABLE_ID, first)
    assert subscribers(channel) == 1  # the second viewer still follows it
    await table_feed.leave(TABLE_ID, second)
    await table_feed.leave(TABLE_ID + 1, elsewhere)
    async with asyncio.timeout(5):
        while subscribers(channel):
            await asyncio.sleep(0.05)  # the last viewer gone: unsubscribed


async def test_another_room_on_the_same_redis_is_not_heard():
    """Redis's pub/sub spans its databases: the channel names the room's database."""
    inbox = feed.new_inbox()
    await feed.table_feed().join(TABLE_ID, inbox)
    try:
        other_room = feed.feed_channel(TABLE_ID).replace(".table.", "_other.table.")
        payload = feed.msgpack.packb({"messages": [probe(1).to_wire()]})
        redis.Redis.from_url(settings.REDIS_URL).publish(other_room, payload)
        await published(2)
        assert await versions_in(inbox, 1) == [2]
        assert inbox.empty()
    finally:
        await feed.table_feed().leave(TABLE_ID, inbox)


@pytest.mark.parametrize(
    "payload",
    [
        b"\xc1",  # not msgpack
        feed.msgpack.packb([1, 2]),
        feed.msgpack.packb({"messages": [probe(1).to_wire()]}),  # no table
        feed.msgpack.packb({"table": TABLE_ID + 1, "messages": [probe(1).to_wire()]}),
        feed.msgpack.packb({"table": TABLE_ID, "messages": "x"}),
        feed.msgpack.packb({"table": TABLE_ID, "messages": [{"version": 1}]}),
        # A form that is not the JSON text to send (a dict, as the feed once carried).
        feed.msgpack.packb(
            {"table": TABLE_ID, "messages": [{"version": 1, "public": {}, "private": {}}]}
        ),
        feed.msgpack.packb(
            {"table": TABLE_ID, "messages": [{"version": 1, "public": "{}", "private": {"x": ""}}]}
        ),
        feed.msgpack.packb(
            {"table": TABLE_ID, "messages": [{"version": 1, "public": "", "private": {1e999: ""}}]}
        ),
        feed.msgpack.packb({"table": TABLE_ID, "type": "websocket.disconnect", "messages": 1}),
    ],
)
async def test_a_message_that_is_not_the_tables_is_dropped_and_the_feed_goes_on(payload, caplog):
    """Dropped where it is read, once, before any viewer's consumer sees it."""
    inbox = feed.new_inbox()
    await feed.table_feed().join(TABLE_ID, inbox)
    try:
        redis.Redis.from_url(settings.REDIS_URL).publish(feed.feed_channel(TABLE_ID), payload)
        await published(3)
        assert await versions_in(inbox, 1) == [3]
        assert inbox.empty()
        assert "dropped a message" in caplog.text
    finally:
        await feed.table_feed().leave(TABLE_ID, inbox)


async def test_a_consumer_gone_without_leaving_takes_its_inbox_with_it():
    table_feed = feed.table_feed()
    kept, dropped = feed.new_inbox(), feed.new_inbox()
    await table_feed.join(TABLE_ID, kept)
    await table_feed.join(TABLE_ID, dropped)
    del dropped  # its consumer was cancelled: no disconnect, no leave
    gc.collect()
    try:
        assert len(table_feed._inboxes[feed.feed_channel(TABLE_ID)]) == 1
        await published(4)
        assert await versions_in(kept, 1) == [4]
    finally:
        await table_feed.leave(TABLE_ID, kept)


async def test_viewers_of_many_tables_arriving_at_once_on_a_new_feed_each_hear_their_table():
    """A process's first viewers come at once (the room's start, a restart): redis-py's
    pub/sub took a connection per subscription sent before it had one, and the reader
    read only one of them: the other tables' joins timed out or, confirmed, stayed
    silent (issue #15's 50-table run)."""
    table_feed = feed.TableFeed()  # new: the shared one has long been connected
    tables = range(TABLE_ID + 100, TABLE_ID + 130)
    inboxes = {table: feed.new_inbox() for table in tables}
    try:
        await asyncio.gather(*(table_feed.join(t, inbox) for t, inbox in inboxes.items()))
        for table in tables:
            await published(table, table_id=table)
        for table, inbox in inboxes.items():
            assert await versions_in(inbox, 1) == [table]
    finally:
        for table, inbox in inboxes.items():
            await table_feed.leave(table, inbox)
        table_feed._reader.cancel()
        await table_feed._pubsub.aclose()


async def test_a_fresh_feeds_first_viewers_of_one_table_start_quietly(caplog):
    """The first viewers of a fresh process (its start, a restart) arrive together, several
    of one table: the reader, started by a viewer that found the table subscribed, read
    the pub/sub while the subscribe was still connecting ("pubsub connection not set"),
    took that for a lost connection, logged a warning and resynced every viewer (issue
    #46, finding 15). Nothing is lost at a start: no viewer resyncs, nothing is logged."""
    caplog.set_level(logging.INFO, logger=feed.__name__)
    table_feed = feed.TableFeed()  # new: the shared one has long been connected
    inboxes = [feed.new_inbox() for _ in range(5)]
    try:
        await asyncio.gather(*(table_feed.join(TABLE_ID, inbox) for inbox in inboxes))
        await published(1)
        for inbox in inboxes:
            assert await versions_in(inbox, 1) == [1]  # the message, and no resync first
        await published(2)  # a second read, after the reader's first wake
        for inbox in inboxes:
            assert await versions_in(inbox, 1) == [2]
            assert inbox.empty()
        assert [record.getMessage() for record in caplog.records] == []
    finally:
        for inbox in inboxes:
            await table_feed.leave(TABLE_ID, inbox)
        table_feed._reader.cancel()
        await table_feed._pubsub.aclose()


class SilencingProxy:
    """A TCP proxy to Redis whose connections can go silent: kept open, forwarding
    nothing either way, as a network or a host gone without a word (no RST) leaves them.
    Connections made afterwards pass."""

    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self.host, self.target_port = parts.hostname, parts.port or 6379
        self.db = parts.path
        self.silenced: list[dict[str, bool]] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        return f"redis://127.0.0.1:{self.server.sockets[0].getsockname()[1]}{self.db}"

    def silence(self) -> None:
        for connection in self.silenced:
            connection["silent"] = True

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        state = {"silent": False}
        self.silenced.append(state)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            while data := await source.read(65536):
                if not state["silent"]:
                    sink.write(data)
                    await sink.drain()

        with contextlib.suppress(OSError):
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()


async def test_a_connection_gone_silent_is_found_and_replaced_and_its_viewers_resync(
    monkeypatch, settings
):
    """Redis's connection can die without a word: a reader waiting on it would hear
    nothing until TCP gave up, a quarter of an hour later, while every table of the
    process stayed silent. Nothing heard, not even a pong, for SILENCE_LIMIT: lost."""
    monkeypatch.setattr(feed, "READ_WAKE", 0.2)
    monkeypatch.setattr(feed, "SILENCE_LIMIT", 1.0)
    proxy = SilencingProxy(settings.REDIS_URL)
    direct, settings.REDIS_URL = settings.REDIS_URL, await proxy.start()
    table_feed, inbox = feed.TableFeed(), feed.new_inbox()
    try:
        await table_feed.join(TABLE_ID, inbox)  # the feed's connections go by the proxy
        settings.REDIS_URL = direct  # the publishers' do not
        await published(1)
        assert await versions_in(inbox, 1) == [1]
        await asyncio.sleep(0.6)  # idle: pings answered, nothing is wrong
        proxy.silence()
        await published(2)  # lost on the silent connection
        async with asyncio.timeout(10):
            assert await inbox.get() == feed.RESYNC  # replaced: the viewer resyncs
        await published(3)
        assert await versions_in(inbox, 1) == [3]
    finally:
        settings.REDIS_URL = direct
        await table_feed.leave(TABLE_ID, inbox)
        table_feed._reader.cancel()
        with contextlib.suppress(Exception):
            await table_feed._pubsub.aclose()
        await proxy.close()


def test_each_viewer_is_sent_the_text_of_their_own_form_and_anyone_else_the_public_one():
    message = TableMessage(
        version=7,
        public={"type": "hole_cards", "seat": 2},
        private={5: {"type": "hole_cards", "seat": 2, "cards": ["As", "Kd"]}},
    )
    sent = SentMessage.from_wire(feed.msgpack.unpackb(feed.msgpack.packb(message.to_wire())))
    public = '{"v": 7, "type": "hole_cards", "seat": 2}'
    assert sent.text_for(5) == '{"v": 7, "type": "hole_cards", "seat": 2, "cards": ["As", "Kd"]}'
    assert sent.text_for(None) == sent.text_for(6) == sent.text_for("5") == public  # type: ignore[arg-type]
