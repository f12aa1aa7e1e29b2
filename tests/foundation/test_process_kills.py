"""Issue 12, faults: a Celery worker or beat killed with SIGKILL, then restarted.

* A worker holds the turn timeouts it was sent, due later, in memory; Redis gives such
  a message back only after the broker's visibility timeout (an hour). A killed
  worker's pending turns used to wait for the beat sweeper (and with beat down too,
  forever). A starting worker now schedules every pending turn's timeout again and
  times out the overdue ones at once, so the turn times out about on time.
* A dead beat sends no sweep: /healthz says so (`beat`), and says it no more once beat
  is back.

These tests start their own worker and beat on a queue of their own (never the suite's
worker), kill only those, and print how late the turn timed out.
"""

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import transaction

from poker_room.celery import app as celery_app
from tables.models import Hand, HandEvent
from tables.services import seating
from tests.conftest import ROOT, database_url_for
from tests.factories import StakeLevelFactory, TableFactory
from tests.tables.conftest import funded_player, key

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def queue() -> Iterator[str]:
    """A queue of this test's own: its processes and this process send and take there."""
    name = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-kills-{uuid.uuid4().hex[:6]}"
    before = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = name
    yield name
    celery_app.conf.task_default_queue = before
    # What the stopped workers left in Redis: this queue's own keys, nothing else.
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    try:
        client.delete(name, f"_kombu.binding.{name}", f"_kombu.binding_permanent.{name}")
    finally:
        client.close()


@contextmanager
def started(args: list[str], *, queue: str, log_name: str) -> Iterator[subprocess.Popen]:
    """A room process on the test database and the given queue; stopped afterwards
    (killed if it will not stop), whatever the test did to it."""
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = "poker_room.settings.test"
    env["DATABASE_URL"] = database_url_for(settings.DATABASES["default"])
    env["CELERY_TASK_DEFAULT_QUEUE"] = queue
    with open(ROOT / log_name, "a") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", *args], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def worker(queue: str, node: str):
    args = ["celery", "-A", "poker_room", "worker", "--pool=solo", "--loglevel=INFO",
            "-Q", queue, "-n", node, "--without-gossip", "--without-mingle"]  # fmt: skip
    return started(args, queue=queue, log_name=".pytest-kills-worker.log")


def beat(queue: str, schedule: Path):
    args = ["celery", "-A", "poker_room", "beat", "--loglevel=INFO", "--schedule", str(schedule)]
    return started(args, queue=queue, log_name=".pytest-kills-beat.log")


def wait_for(what: str, predicate: Callable[[], object], timeout: float = 30.0) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


def answers_ping(node: str) -> bool:
    return bool(celery_app.control.ping(destination=[node], timeout=0.5))


def holds_turn_timeout(node: str) -> bool:
    scheduled = celery_app.control.inspect(destination=[node], timeout=1.0).scheduled() or {}
    return any(
        entry["request"]["name"] == "tables.action_timeout"
        for entries in scheduled.values()
        for entry in entries
    )


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


def test_a_killed_workers_pending_turn_times_out_on_time_after_its_restart(queue, capsys):
    node = f"kills-{uuid.uuid4().hex[:6]}@{os.uname().nodename}"
    stake = StakeLevelFactory()
    table = TableFactory(
        stake_level=stake, seats=6, action_seconds=10, time_bank_seconds=0, pause_between_hands_ms=0
    )
    with worker(queue, node) as first:
        wait_for("the first worker answers", lambda: answers_ping(node), timeout=60)
        with transaction.atomic():
            for number in (1, 2):
                seating.seat_take(
                    table_id=table.id,
                    user=funded_player(),
                    seat_number=number,
                    buy_in=10_000,
                    idempotency_key=key(),
                )
        # The worker deals (the hand-start task) and is sent the first turn's timeout.
        hand = wait_for("the worker deals", lambda: Hand.objects.filter(table=table).first())
        wait_for("the worker holds the timeout", lambda: holds_turn_timeout(node), timeout=20)
        kill(first)
    assert not HandEvent.objects.filter(hand=hand, type="timed_out").exists()
    deadline: datetime = Hand.objects.get(pk=hand.pk).turn_deadline
    # Restarted at once (as honcho or systemd would); no beat runs in this test.
    with worker(queue, node):
        timed_out = wait_for(
            "the turn times out",
            lambda: HandEvent.objects.filter(hand=hand, type="timed_out").first(),
            timeout=45,
        )
    lateness = (timed_out.created_at - deadline).total_seconds()
    with capsys.disabled():
        print(f"\n  the killed worker's turn timed out {lateness:+.1f} s after its deadline")
    assert lateness > 0  # never early
    assert lateness < 30  # generous: the aim is 10 s, on a loaded 2-core machine


def test_healthz_reports_a_killed_beat_and_recovers_when_it_is_back(
    queue, client, settings, tmp_path
):
    settings.HEALTH_SWEEP_MAX_AGE_SECONDS = 8  # beat sweeps every 5 s; 30 s in production
    node = f"kills-{uuid.uuid4().hex[:6]}@{os.uname().nodename}"

    def beat_check() -> dict:
        return client.get("/healthz").json()["checks"]["beat"]

    with worker(queue, node):
        wait_for("the worker answers", lambda: answers_ping(node), timeout=60)
        with beat(queue, tmp_path / "schedule") as first_beat:
            wait_for("a sweep is recorded", lambda: beat_check()["ok"], timeout=30)
            kill(first_beat)
        check = wait_for("healthz reports beat", lambda: not beat_check()["ok"] and beat_check())
        response = client.get("/healthz")
        assert response.status_code == 503
        assert "beat" in response.json()["failing"]
        assert "is celery beat" in check["detail"]
        with beat(queue, tmp_path / "schedule"):
            wait_for("healthz sees beat again", lambda: beat_check()["ok"], timeout=30)
