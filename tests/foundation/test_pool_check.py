"""The pool checks a connection on loan only when it has been idle (poker_room/postgres).

Django's own check was a round trip for every loan, and a web process's database thread
borrows a connection for every table command: one round trip in five of an action.
The pool's behaviour is tested on a pool of one connection with the room's callbacks, so
that which connection is lent is known.
"""

from collections.abc import Iterator

import psycopg
import pytest
from django.conf import settings
from django.db import connections
from psycopg_pool import ConnectionPool

from poker_room.postgres import base as postgres
from tests.conftest import database_url_for
from tests.foundation.test_db_connections import maintenance_connection

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def checks(monkeypatch) -> list[psycopg.Connection]:
    """The connections the pool sent a check round trip on, in order."""
    seen: list[psycopg.Connection] = []
    real = ConnectionPool.check_connection

    def check(conn: psycopg.Connection) -> None:
        seen.append(conn)
        real(conn)

    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(check))
    return seen


@pytest.fixture
def pool() -> Iterator[ConnectionPool]:
    url = database_url_for(settings.DATABASES["default"])
    with ConnectionPool(
        url,
        min_size=1,
        max_size=1,
        check=postgres.connection_check,
        reset=postgres.connection_returned,
        kwargs={"autocommit": True},
    ) as pool:
        yield pool


def backend_pid(pool: ConnectionPool) -> int:
    with pool.connection() as conn:
        return conn.execute("SELECT pg_backend_pid()").fetchone()[0]


def terminate(pid: int) -> None:
    with maintenance_connection() as maintenance:
        maintenance.execute("SELECT pg_terminate_backend(%s)", [pid])


def test_the_room_pools_its_connections_with_these_callbacks():
    wrapper = connections["default"]
    assert type(wrapper).__module__ == "poker_room.postgres.base"
    assert wrapper.pool._check is postgres.connection_check
    assert wrapper.pool._reset is postgres.connection_returned


def test_a_connection_given_back_moments_ago_is_lent_again_without_a_round_trip(pool, checks):
    backend_pid(pool)  # a new connection: checked once
    checks.clear()
    backend_pid(pool)
    backend_pid(pool)
    assert checks == []


def test_a_connection_idle_for_longer_is_checked_on_loan(pool, checks, monkeypatch):
    backend_pid(pool)
    checks.clear()
    monkeypatch.setattr(postgres, "FRESH_FOR", 0.0)
    backend_pid(pool)
    assert len(checks) == 1


def test_a_connection_that_died_while_idle_is_replaced_before_anyone_uses_it(pool, monkeypatch):
    dead = backend_pid(pool)
    terminate(dead)
    monkeypatch.setattr(postgres, "FRESH_FOR", 0.0)
    assert backend_pid(pool) != dead  # the check found it dead: the pool lent a new one


def test_a_connection_that_died_moments_after_use_fails_once_and_is_then_replaced(pool):
    """The price of the window: the one use that finds it dead fails, as a connection
    lost mid-command does, and the pool discards it."""
    dead = backend_pid(pool)
    terminate(dead)
    with pytest.raises(psycopg.OperationalError):
        backend_pid(pool)
    assert backend_pid(pool) != dead
