"""Redis pub/sub, the room's: the names of its channels and the client that publishes.

Redis keeps one pub/sub namespace for all its databases, so a channel's name carries the
database the room runs on (server and name, or the TABLE_FEED_ROOM setting): two rooms
(or a test run and a room) on one Redis stay apart, and rooms on different servers
(staging beside production) too, even when their databases share a name.

The tables' feed (tables/feed.py) publishes each command's messages here, and the
accounts a notice when a user's sessions may have ended (poker_room/socket_auth.py);
each web process reads both on one connection (tables/feed.py).
"""

import redis
from django.conf import settings
from django.db import connections

# Longer than any healthy publish: a publish still waiting then is given up (the viewers
# heal the gap) rather than holding the command's thread.
PUBLISH_TIMEOUT = 5.0


def room_channel(name: str) -> str:
    """The pub/sub channel `name` of this room (see the module's note on names)."""
    return f"poker_room.{_room()}.{name}"


def _room() -> str:
    # The database the room runs on, server and name: one room whatever its processes.
    # TABLE_FEED_ROOM names it outright.
    if settings.TABLE_FEED_ROOM:
        return settings.TABLE_FEED_ROOM
    database = connections["default"].settings_dict
    return f"{database['HOST']}:{database['PORT']}/{database['NAME']}"


_clients: dict[str, redis.Redis] = {}


def publisher() -> redis.Redis:
    """The process's client for publishing (from any thread)."""
    # redis-py's pool is thread-safe and starts afresh in a forked child.
    url = settings.REDIS_URL
    client = _clients.get(url)
    if client is None:
        client = _clients[url] = redis.Redis.from_url(
            url, socket_timeout=PUBLISH_TIMEOUT, socket_connect_timeout=PUBLISH_TIMEOUT
        )
    return client
