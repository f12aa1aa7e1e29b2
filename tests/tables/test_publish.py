"""Publishing from sync code (a command's thread, a Celery worker, the timer loop) goes
through one event loop per process (`tables.events._Publisher`), so the channel layer's
Redis connections are kept, not opened anew for every command as `async_to_sync` did."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import channels_redis.core
import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from tables import events
from tables.events import TableMessage, table_group

TABLE_ID = 987_654  # a group no table of the test database uses


@pytest.fixture
def loop_layers_made(monkeypatch) -> list[object]:
    """Every per-event-loop set of connections channels-redis makes from here on."""
    made: list[object] = []
    original = channels_redis.core.RedisLoopLayer

    def counted(channel_layer):  # type: ignore[no-untyped-def]
        layer = original(channel_layer)
        made.append(layer)
        return layer

    monkeypatch.setattr(channels_redis.core, "RedisLoopLayer", counted)
    return made


def test_sync_publishes_from_several_threads_share_one_loop_and_arrive_in_order(
    loop_layers_made,
):
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(table_group(TABLE_ID), channel)
    listening = len(loop_layers_made)  # async_to_sync above: a loop of its own each time
    try:

        def publish(version: int) -> None:
            message = TableMessage(version=version, public={"type": "probe"})
            events._publish(TABLE_ID, [message])

        for version in range(1, 11):
            publish(version)
        with ThreadPoolExecutor(max_workers=3) as pool:  # a web process's worker threads
            list(pool.map(publish, range(11, 21)))

        # Twenty publishes: at most the one loop of the publisher (none if an earlier test
        # of this process started it), where async_to_sync made twenty.
        assert len(loop_layers_made) - listening <= 1

        async def received() -> list[int]:
            return [(await layer.receive(channel))["messages"][0]["version"] for _ in range(20)]

        versions = async_to_sync(received)()
        assert versions[:10] == list(range(1, 11))  # one thread: in order
        assert sorted(versions[10:]) == list(range(11, 21))
    finally:
        async_to_sync(layer.group_discard)(table_group(TABLE_ID), channel)


def test_the_layer_closes_its_connections_of_both_loops_and_publishes_after():
    """close_pools from a test's (or daphne's) loop closes the publisher loop's connections
    on that loop: channels-redis closed them from the calling loop, which raised."""
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(table_group(TABLE_ID), channel)
    try:
        events._publish(TABLE_ID, [TableMessage(version=1, public={"type": "probe"})])

        async def close_then_receive() -> int:
            await layer.close_pools()
            await asyncio.get_running_loop().run_in_executor(
                None,
                events._publish,
                TABLE_ID,
                [TableMessage(version=2, public={"type": "probe"})],
            )
            first = await layer.receive(channel)
            second = await layer.receive(channel)
            return second["messages"][0]["version"] - first["messages"][0]["version"]

        assert async_to_sync(close_then_receive)() == 1
    finally:
        async_to_sync(layer.group_discard)(table_group(TABLE_ID), channel)
