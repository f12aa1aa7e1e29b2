"""The pool checks a connection on loan only when it has idled or its server wrote to it
(poker_room/postgres).

Django's own check was a round trip for every loan, and a web process's database thread
borrows a connection for every table command: one round trip in five of an action.
The pool's behaviour is tested on a pool of one connection with the room's check, so that
which connection is lent is known.
"""

import time
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
        url, min_size=1, max_size=1, check=postgres.connection_check, kwargs={"autocommit": True}
    ) as pool:
        yield pool


def backend_pid(pool: ConnectionPool) -> int:
    """One use of a connection of the pool, given back as Django's connection does."""
    with pool.connection() as conn:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        postgres._returned_at[conn] = time.monotonic()
        return pid


def terminate(pid: int) -> None:
    """End a session from the server's side, and wait until it is gone."""
    with maintenance_connection() as maintenance:
        maintenance.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])


def test_the_room_pools_its_connections_with_this_check_and_stamps_them_when_given_back():
    wrapper = connections["default"]
    assert type(wrapper).__module__ == "poker_room.postgres.base"
    assert wrapper.pool._check is postgres.connection_check
    assert wrapper.pool._reset is None  # a reset callback would give back on a thread
    wrapper.ensure_connection()
    raw = wrapper.connection
    before = time.monotonic()
    wrapper.close()
    assert postgres._returned_at[raw] >= before


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


def test_a_connection_whose_session_the_server_ended_moments_after_use_is_replaced(pool, checks):
    """A restart or a terminated backend writes to the socket and closes it: the check
    sees something to read and makes its round trip, which finds the connection dead."""
    dead = backend_pid(pool)
    terminate(dead)
    assert backend_pid(pool) != dead
    assert checks  # the dead one was checked


def test_a_request_after_the_server_ended_the_session_just_given_back_is_served(client):
    """A restart, as a room's process sees it: the session of a connection given back
    moments ago ends on the server's side; the next request is served as before."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    connections["default"].close()  # given back just now
    terminate(pid)
    assert client.get("/lobby.json").status_code == 200
