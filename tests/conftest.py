"""Fixtures shared by the whole suite: real services, started or found, never mocked."""

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent


def database_url_for(db: dict) -> str:
    """A DATABASE_URL for the given Django database settings (the test database, say)."""
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker) -> Iterator[str]:
    """A real Celery worker process on the suite's own queue, using the test database.

    Yields the worker's node name. Tasks it runs see only committed data, so tests that
    rely on it use `transactional_db`.
    """
    from poker_room.celery import app

    node = f"test-{uuid.uuid4().hex[:8]}@{os.uname().nodename}"
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = "poker_room.settings.test"
    env["DATABASE_URL"] = database_url_for(settings.DATABASES["default"])
    log = open(ROOT / ".pytest-celery.log", "w")  # noqa: SIM115 - closed after the worker
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "poker_room", "worker", "--pool=solo",
         "-Q", settings.CELERY_TASK_DEFAULT_QUEUE, "-n", node, "--loglevel=INFO"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not app.control.ping(destination=[node], timeout=0.5):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Celery worker did not start; see {log.name}")
        yield node
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def live_room(celery_worker_process) -> Iterator[str]:
    """The whole room on a free port: daphne (HTTP + WebSockets) and a Celery worker, on
    the test database and the suite's own Redis prefix and queue. Yields the base URL.

    Tests that use it see only committed data, so they use `transactional_db`.
    """
    port = free_port()
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = "poker_room.settings.test"
    env["DATABASE_URL"] = database_url_for(settings.DATABASES["default"])
    log = open(ROOT / ".pytest-daphne.log", "w")  # noqa: SIM115 - closed after the server
    proc = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
         "poker_room.asgi:application"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/healthz", timeout=2)  # noqa: S310 - our server
                break
            except urllib.error.HTTPError:
                break  # it answers (a 503 still means it is up)
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"daphne did not start; see {log.name}") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
