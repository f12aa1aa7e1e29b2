"""The Celery broker transport: kombu's Redis transport, surviving a Redis restart.

kombu 5.7's Redis channel dies in `close()` when Redis goes away while the worker waits
in BRPOP: the pending BRPOP read raises `ConnectionError` before the channel is marked
closed, the worker's `Connection.collect()` then detaches the transport
(`transport.client = None`), and the second `close()` of the same channel tries to
restore its unacknowledged messages (the ETA timers the worker holds) through a new
connection pool built from that `None`: `AttributeError: 'NoneType' object has no
attribute 'hostname'`, which is not a connection error, so the worker stops with
"Unrecoverable error" (and a supervisor must start it again).

This channel finishes closing when that read fails: the restore is then tried at once
(and fails with a connection error, which the worker expects and ignores), the channel
is closed, and the worker reconnects as it should. The messages it could not restore
stay in Redis's unacked index and come back after the visibility timeout (the tables'
own timers do not go through Celery: tables/timers.py).

`register()` (called by poker_room.celery) makes this the transport of every
`redis://`, `rediss://` and `redis+socket://` broker URL.
"""

from queue import Empty

from kombu import transport as kombu_transport
from kombu.transport import redis as kombu_redis

TRANSPORT = "poker_room.broker:Transport"


class Channel(kombu_redis.Channel):
    def close(self) -> None:
        if self._in_poll and not self.closed:
            try:
                self._brpop_read()
            except Empty:
                pass
            except self.connection_errors:
                # Redis is gone: nothing more can be read. `_brpop_read` has already
                # cleared `_in_poll`, so the rest of close() runs instead of the error
                # leaving the channel half closed (see the module docstring).
                pass
        super().close()


class Transport(kombu_redis.Transport):
    Channel = Channel


def register() -> None:
    for alias in ("redis", "rediss"):
        kombu_transport.TRANSPORT_ALIASES[alias] = TRANSPORT
