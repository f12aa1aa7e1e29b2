"""A dead web process's channels leave the tables' groups; live consumers stay in them.

channels-redis kept a group entry for 24 hours: after a web process died, every table
message went on being pushed to its dead channels, logged "over capacity" each time (29,000
lines in a 15-minute soak). Entries now expire after `group_expiry` (minutes in the room's
settings, seconds here), and the layer (poker_room.channel_layer) re-adds the channels of
its own live consumers every `group_refresh_interval`.
"""

import asyncio
import uuid

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from channels_redis.core import RedisChannelLayer

from poker_room.channel_layer import RefreshingRedisChannelLayer
from poker_room.routing import websocket_urlpatterns
from tables.events import table_group
from tests.kit import TableFactory

GROUP_EXPIRY = 3
REFRESH = 0.5


def members(layer: RedisChannelLayer, group: str):
    return layer.connection(layer.consistent_hash(group)).zrange(layer._group_key(group), 0, -1)


@pytest.mark.django_db(transaction=True)
async def test_a_dead_processs_channels_expire_while_live_consumers_stay(settings):
    hosts = settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"]
    base_prefix = settings.CHANNEL_LAYERS["default"]["CONFIG"]["prefix"]
    prefix = f"{base_prefix}-groups-{uuid.uuid4().hex[:6]}"
    config = {"hosts": hosts, "prefix": prefix, "group_expiry": GROUP_EXPIRY}
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "poker_room.channel_layer.RefreshingRedisChannelLayer",
            "CONFIG": {**config, "group_refresh_interval": REFRESH},
        }
    }
    layer = get_channel_layer()
    assert isinstance(layer, RefreshingRedisChannelLayer)
    table = await database_sync_to_async(TableFactory)()
    group = table_group(table.id)

    live = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/tables/{table.id}/")
    connected, _ = await live.connect()
    assert connected
    snapshot = await live.receive_json_from(timeout=5)
    # A consumer of a process that has died: it joined the group and will never leave
    # it nor refresh it (a plain layer, as every process had before).
    dead_process = RedisChannelLayer(**config)
    dead_channel = await dead_process.new_channel()
    await dead_process.group_add(group, dead_channel)
    try:
        assert len(await members(layer, group)) == 2

        await asyncio.sleep(GROUP_EXPIRY + 4 * REFRESH)  # the dead entry is now too old
        await layer.group_send(
            group,
            {"type": "table.messages", "messages": [
            {"version": snapshot["v"] + 1, "public": {"type": "ping"}, "private": {}}
        ]},
        )  # fmt: skip

        assert await live.receive_json_from(timeout=5) == {"v": snapshot["v"] + 1, "type": "ping"}
        left = [member.decode() for member in await members(layer, group)]
        assert len(left) == 1
        assert dead_channel not in left
    finally:
        await live.disconnect()
        await dead_process.flush()
        await layer.flush()
    assert await members(layer, group) == []


def test_the_refresh_must_come_before_the_expiry():
    with pytest.raises(ValueError, match="below group_expiry"):
        RefreshingRedisChannelLayer(group_expiry=60, group_refresh_interval=60)
