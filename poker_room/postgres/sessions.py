"""A PostgreSQL session of its own, beside Django's pooled connections.

For work whose session state must not reach a pooled connection, or must end with the
session: a session-level advisory lock (the timer loop's leadership, one upkeep run at a
time), timeouts, VACUUM (which cannot run in a transaction).
"""

import psycopg
from django.db import connection


def session_of_its_own(
    application_name: str, *, connect_timeout: int | None = None
) -> psycopg.Connection:
    """A new autocommit session to the room's database, named in pg_stat_activity; plain
    psycopg (Django's cursor class and adapters are left out). The caller closes it.
    `connect_timeout`: seconds to wait for the server (libpq takes 2 for anything less);
    by default, as long as the operating system does."""
    params = connection.get_connection_params()
    return psycopg.connect(
        **{k: params[k] for k in params if k not in {"cursor_factory", "context"}},
        autocommit=True,
        application_name=application_name,
        connect_timeout=connect_timeout,
    )
