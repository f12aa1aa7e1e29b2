"""Finding 6: a burst of requests must not use up PostgreSQL's connections.

Under daphne every HTTP request ran in a thread of its own with a persistent connection
(CONN_MAX_AGE=60) that nobody closed: 150 parallel anonymous `GET /lobby.json` left 151
idle connections, and with PostgreSQL's default max_connections (100) the room and its
timers went down with "too many clients". Now each process draws from a psycopg pool of
at most DB_POOL_MAX connections and lets no more requests into Django at once than the
pool serves (poker_room.http_limit); a request that cannot get a connection in time is a
JSON 503, not a hang. Celery's prefork children close the pool after each task (celery's
Django fix-up; tests/foundation/test_redis_outage.py runs tasks in one), and management
commands use it as any process does.
"""

import asyncio
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from psycopg_pool import PoolTimeout
from rest_framework.test import APIClient

from tests.conftest import ROOT, answers, database_url_for, free_port, room_process, wait_until_up
from tests.foundation.http_flood import status_of
from tests.kit import TableFactory, UserFactory

POOL_MAX = 4
REQUESTS = 500


def suite_database_name() -> str:
    return settings.DATABASES["default"]["NAME"]


def maintenance_connection() -> psycopg.Connection:
    url = database_url_for({**settings.DATABASES["default"], "NAME": "postgres"})
    return psycopg.connect(url, autocommit=True)


def connections_of(conn: psycopg.Connection, application_name: str) -> int:
    """Connections to the test database opened by processes with this application name."""
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
        [suite_database_name(), application_name],
    ).fetchone()
    return row[0]


@pytest.fixture
def capped_daphne(transactional_db, monkeypatch, tmp_path) -> Iterator[tuple[str, str]]:
    """A daphne of its own on the test database, with a pool of POOL_MAX connections.

    Its connections carry an application name (libpq's PGAPPNAME) so that they can be
    counted apart from the suite's own. Yields (base URL, application name).
    """
    TableFactory.create_batch(3)
    name = f"pool-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("PGAPPNAME", name)
    monkeypatch.setenv("DB_POOL_MAX", str(POOL_MAX))
    # The queue may be long on a busy machine: this test counts connections, and a
    # request must wait for its turn rather than be refused.
    monkeypatch.setenv("HTTP_QUEUE_TIMEOUT", "300")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = ["daphne", "-b", "127.0.0.1", "-p", str(port), "poker_room.asgi:application"]
    with room_process(args, log_name=str(tmp_path / "daphne.log")) as proc:
        wait_until_up(proc, lambda: answers(f"{url}/lobby.json"), "daphne")
        yield url, name


async def burst(port: int, count: int) -> list[int]:
    return await asyncio.wait_for(
        asyncio.gather(*(status_of(port, "/lobby.json") for _ in range(count))), timeout=600
    )


def test_500_parallel_requests_stay_within_the_pool_and_all_succeed(capped_daphne):
    url, name = capped_daphne
    port = int(url.rsplit(":", 1)[1])
    most = 0
    done = threading.Event()

    def watch() -> None:
        nonlocal most
        with maintenance_connection() as conn:
            while not done.is_set():
                most = max(most, connections_of(conn, name))
                time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        statuses = asyncio.run(burst(port, REQUESTS))
    finally:
        done.set()
        watcher.join(timeout=10)
    with maintenance_connection() as conn:
        after = connections_of(conn, name)

    assert len(statuses) == REQUESTS
    assert sorted(set(statuses)) == [200], {s: statuses.count(s) for s in set(statuses)}
    assert 1 <= most <= POOL_MAX
    assert after <= POOL_MAX


@pytest.mark.django_db(transaction=True)
def test_a_request_that_gets_no_connection_in_time_is_a_json_503():
    """Every connection of the pool is lent elsewhere: 503 + Retry-After, JSON."""
    player = UserFactory()
    client = APIClient()
    client.force_login(player)
    pool = connection.pool
    connection.close()  # this thread's connection goes back to the pool
    saved = pool.min_size, pool.max_size, pool.timeout
    # A small pool, so that draining it opens few connections on the shared server.
    pool.resize(min_size=1, max_size=2)
    held = []
    try:
        while True:
            try:
                held.append(pool.getconn(timeout=1.0))
            except PoolTimeout:
                break
        assert held
        pool.timeout = 0.5
        api = client.get("/api/wallet/")
        page = client.get("/lobby.json")
    finally:
        for conn in held:
            pool.putconn(conn)
        pool.resize(min_size=saved[0], max_size=saved[1])
        pool.timeout = saved[2]
    for response in (api, page):
        assert response.status_code == 503, response.content
        assert response["Retry-After"] == "5"
        assert response.json()["code"] == "busy"


@pytest.mark.django_db(transaction=True)
def test_a_management_command_runs_on_the_pool():
    """Commands open the pool like any process (one connection) and exit cleanly."""
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = "poker_room.settings.test"
    env["DATABASE_URL"] = database_url_for(settings.DATABASES["default"])
    result = subprocess.run(
        [sys.executable, "manage.py", "audit_ledger"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
