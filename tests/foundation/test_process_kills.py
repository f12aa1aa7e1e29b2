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
import uuid
from datetime import datetime
from pathlib import Path

import pytest

from poker_room.celery import app as celery_app
from tables.models import Hand, HandEvent
from tests.conftest import room_process, wait_for, wait_until_up
from tests.kit import StakeLevelFactory, TableFactory, seat_players

pytestmark = pytest.mark.django_db(transaction=True)


def worker(queue: str, node: str):
    """A worker on the test's queue (the `queue` fixture's environment); its log is kept
    across a restart."""
    args = ["celery", "-A", "poker_room", "worker", "--pool=solo", "--loglevel=INFO",
            "-Q", queue, "-n", node, "--without-gossip", "--without-mingle"]  # fmt: skip
    return room_process(args, log_name=".pytest-kills-worker.log", append=True)


def beat(schedule: Path):
    """A beat sending to the test's queue (the `queue` fixture's environment)."""
    args = ["celery", "-A", "poker_room", "beat", "--loglevel=INFO", "--schedule", str(schedule)]
    return room_process(args, log_name=".pytest-kills-beat.log", append=True)


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
        wait_until_up(first, lambda: answers_ping(node), "the first worker")
        seat_players(table, 2)
        # The worker deals (the hand-start task) and is sent the first turn's timeout.
        hand = wait_for(
            lambda: Hand.objects.filter(table=table).first(), timeout=30, what="the worker deals"
        )
        wait_for(lambda: holds_turn_timeout(node), timeout=20, what="the worker holds the timeout")
        kill(first)
    assert not HandEvent.objects.filter(hand=hand, type="timed_out").exists()
    deadline: datetime = Hand.objects.get(pk=hand.pk).turn_deadline
    # Restarted at once (as honcho or systemd would); no beat runs in this test.
    with worker(queue, node):
        timed_out = wait_for(
            lambda: HandEvent.objects.filter(hand=hand, type="timed_out").first(),
            timeout=45,
            what="the turn times out",
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

    with worker(queue, node) as running:
        wait_until_up(running, lambda: answers_ping(node), "the worker")
        with beat(tmp_path / "schedule") as first_beat:
            wait_for(lambda: beat_check()["ok"], timeout=30, what="a sweep is recorded")
            kill(first_beat)
        check = wait_for(
            lambda: not beat_check()["ok"] and beat_check(),
            timeout=30,
            what="healthz reports beat",
        )
        response = client.get("/healthz")
        assert response.status_code == 503
        assert "beat" in response.json()["failing"]
        assert "is celery beat" in check["detail"]
        with beat(tmp_path / "schedule"):
            wait_for(lambda: beat_check()["ok"], timeout=30, what="healthz sees beat again")
