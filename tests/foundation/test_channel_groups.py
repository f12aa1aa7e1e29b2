"""A dead web process's channels leave their groups; live consumers stay in them.

channels-redis kept a group entry for 24 hours: after a web process died, every table
message went on being pushed to its dead channels, logged "over capacity" each time (29,000
lines in a 15-minute soak). Entries now expire after `group_expiry` (minutes in the room's
settings, seconds here), and the layer (poker_room.channel_layer) re-adds the channels of
its own live consumers every `group_refresh_interval`. (The table stream has left the
channel layer for its own feed, tables/feed.py; a player's presence groups stay.)
"""

import asyncio
import uuid

import pytest
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer

from poker_room.channel_layer import RefreshingRedisChannelLayer
from tables.events import player_presence_group

GROUP_EXPIRY = 3
REFRESH = 0.5


def members(layer: RedisChannelLayer, group: str):
    return layer.connection(layer.consistent_hash(group)).zrange(layer._group_key(group), 0, -1)


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
    group = player_presence_group(4242, 17)

    # A consumer of this process: it joined the group, and the layer refreshes it.
    live = await layer.new_channel()
    await layer.group_add(group, live)
    # A consumer of a process that has died: it joined the group and will never leave
    # it nor refresh it (a plain layer, as every process had before).
    dead_process = RedisChannelLayer(**config)
    dead_channel = await dead_process.new_channel()
    await dead_process.group_add(group, dead_channel)
    try:
        assert len(await members(layer, group)) == 2
        assert await layer.group_live_size(group) == 2

        await asyncio.sleep(GROUP_EXPIRY + 4 * REFRESH)  # the dead entry is now too old
        assert await layer.group_live_size(group) == 1
        await layer.group_send(group, {"type": "ping"})

        assert await asyncio.wait_for(layer.receive(live), 5) == {"type": "ping"}
        left = [member.decode() for member in await members(layer, group)]
        assert left == [live]
    finally:
        await layer.group_discard(group, live)
        await dead_process.flush()
        await layer.flush()
    assert await members(layer, group) == []


def test_the_refresh_must_come_before_the_expiry():
    with pytest.raises(ValueError, match="below group_expiry"):
        RefreshingRedisChannelLayer(group_expiry=60, group_refresh_interval=60)
