"""Django's PostgreSQL backend, with a pool that checks a connection on loan only when it
has been idle.

Django's pool (with CONN_HEALTH_CHECKS) checks every connection it lends with a round
trip to the server (psycopg_pool's `check_connection`). A web process's database thread
borrows a connection for every table command and gives it back after (CONN_MAX_AGE is 0
with a pool), so that check was one round trip in five of every action, the server's
and this process's CPU included (bench/pool_loan.py measures it). A connection given back
moments ago was working then; the check is kept for one that has lain in the pool for
longer than `FRESH_FOR` seconds, where a restart or a dropped network can have killed it
unseen. One killed within that window fails the one use that finds it, as a connection
lost during a command does: Django then sees it unusable and the pool discards it.

Everything else is Django's backend unchanged (ENGINE "poker_room.postgres").
"""

import time
import weakref

from django.db.backends.postgresql import base
from psycopg import Connection
from psycopg_pool import ConnectionPool

FRESH_FOR = 1.0  # seconds

# When each pooled connection was last given back (monotonic clock).
_returned_at: "weakref.WeakKeyDictionary[Connection, float]" = weakref.WeakKeyDictionary()


def connection_returned(connection: Connection) -> None:
    """The pool's `reset` callback: a connection is given back in working order."""
    _returned_at[connection] = time.monotonic()


def connection_check(connection: Connection) -> None:
    """The pool's `check` on loan: a round trip, unless the connection came back fresh."""
    returned = _returned_at.get(connection)
    if returned is not None and time.monotonic() - returned < FRESH_FOR:
        return
    ConnectionPool.check_connection(connection)


class DatabaseWrapper(base.DatabaseWrapper):
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
                reset=connection_returned,
                **options,
            )
            # As Django: the first of several threads to get here wins.
            self._connection_pools.setdefault(self.alias, pool)
        return self._connection_pools[self.alias]
