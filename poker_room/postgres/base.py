"""Django's PostgreSQL backend, with a pool that checks a connection on loan with a round
trip only when it has idled, or when the server has said something since.

Django's pool (with CONN_HEALTH_CHECKS) checks every connection it lends with a round
trip to the server (psycopg_pool's `check_connection`). A web process's database thread
borrows a connection for every table command and gives it back after (CONN_MAX_AGE is 0
with a pool), so that check was one round trip in five of every action, the server's
and this process's CPU included (bench/pool_loan.py measures it).

A connection given back less than `FRESH_FOR` seconds ago, with nothing to read on its
socket, is lent without one. A server that ends a session (a restart, a backend
terminated, a crash) writes a last message and closes the socket: both make it readable,
and such a connection gets the round trip, which finds it dead, and the pool replaces it
before anyone uses it. A socket says nothing about a network gone silent, but neither
does a round trip, which would wait for TCP to give up; one idle for longer than
`FRESH_FOR` (where a firewall may have forgotten it) is checked as before.

Timestamps with a time zone are read by `UtcTimestampLoader` when the room's time zone
is UTC (it is): Django's loader parses each one in Python (psycopg's regular expression
and arithmetic), and a table command reads about twenty (the table's, each seat's, the
hand's). Python's `datetime.fromisoformat`, in C, reads PostgreSQL's ISO output in a
fraction of the time.

Everything else is Django's backend unchanged (ENGINE "poker_room.postgres").
"""

import datetime
import functools
import select
import time
import weakref
from typing import Any

from django.db.backends.postgresql import base
from django.db.backends.postgresql.psycopg_any import BaseTzLoader
from psycopg import Connection
from psycopg.adapt import AdaptersMap, Buffer
from psycopg_pool import ConnectionPool

FRESH_FOR = 1.0  # seconds

# When each pooled connection was last given back (monotonic clock).
_returned_at: "weakref.WeakKeyDictionary[Connection, float]" = weakref.WeakKeyDictionary()


def connection_check(connection: Connection) -> None:
    """The pool's `check` on loan: a round trip, unless the connection came back moments
    ago and its server has not written to it since."""
    returned = _returned_at.get(connection)
    if returned is None or time.monotonic() - returned >= FRESH_FOR or _readable(connection):
        ConnectionPool.check_connection(connection)


def _readable(connection: Connection) -> bool:
    # An idle session has nothing to say: anything waiting (an error, the end of the
    # stream) is the server giving up on it. poll(), not select(): any descriptor number.
    poller = select.poll()
    poller.register(connection.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))


class UtcTimestampLoader(BaseTzLoader):
    """A `timestamptz` as an aware datetime in UTC, as Django's loader for the UTC zone
    reads it.

    A session in UTC with the ISO date style (PostgreSQL's default, and Django's) writes
    `2026-12-06 23:07:06.123456+00`, which `fromisoformat` reads whole. Anything else
    (another date style or zone, infinity, a year before 1 or after 9999) goes to
    Django's loader, which reads it or refuses it as before."""

    timezone = datetime.UTC

    def load(self, data: Buffer) -> datetime.datetime:
        try:
            value = datetime.datetime.fromisoformat(bytes(data).decode())
        except ValueError:
            return super().load(data)
        if value.tzinfo is not datetime.UTC:
            return super().load(data)
        return value


@functools.cache
def _adapters_utc(template: AdaptersMap) -> AdaptersMap:
    adapters = AdaptersMap(template)
    adapters.register_loader("timestamptz", UtcTimestampLoader)
    return adapters


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        # Django's template of adapters, with the UTC loader (Django's per cursor check,
        # `create_cursor`, finds its `timezone` the connection's and keeps it).
        if "context" in params and self.timezone is datetime.UTC:
            params["context"] = _adapters_utc(params["context"])
        return params

    @property
    def pool(self) -> ConnectionPool | None:
        # Django's own property (5.2), with the check above in place of `check_connection`:
        # Django passes `check` itself, so the pool's options cannot carry one.
        pool_options = self.settings_dict["OPTIONS"].get("pool")
        if self.alias == base.NO_DB_ALIAS or not pool_options:
            return None
        if self.alias not in self._connection_pools:
            if self.settings_dict.get("CONN_MAX_AGE", 0) != 0:
                raise base.ImproperlyConfigured("Pooling doesn't support persistent connections.")
            options = {} if pool_options is True else dict(pool_options)
            connect_kwargs = self.get_connection_params()
            connect_kwargs["autocommit"] = True  # Django sets it later on
            checks = self.settings_dict["CONN_HEALTH_CHECKS"]
            pool = ConnectionPool(
                kwargs=connect_kwargs,
                open=False,
                configure=self._configure_connection,
                check=connection_check if checks else None,
                **options,
            )
            # As Django: the first of several threads to get here wins.
            self._connection_pools.setdefault(self.alias, pool)
        return self._connection_pools[self.alias]

    def _close(self) -> None:
        # Stamped here rather than by the pool's `reset` callback: with one, psycopg_pool
        # gives every connection back on a worker thread, later, and lends new ones
        # meanwhile (and Django's errors on giving back would go unseen).
        if self.connection is not None and self.pool:
            _returned_at[self.connection] = time.monotonic()
        super()._close()
