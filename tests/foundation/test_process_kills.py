"""Issue 12 and 15, faults: the timer loop killed with SIGKILL, then restarted or replaced.

* The loop holds nothing in memory (the deadlines are in the database), so a killed
  loop's pending turn times out on time once a loop runs again: restarted at once (as
  `make run`'s supervisord or systemd would), or a standby loop that takes over as the
  leader dies.
* No loop at all: the room status says so (`timers`), and says it no more once one is
  back (/healthz, about the web process alone, stays 200).

These tests stop the suite's own timer loop (if it runs), start loops of their own, kill
only those, and print how late the turn timed out.
"""

import signal
import subprocess
from datetime import datetime

import pytest
from django.utils import timezone

from tables.models import Hand, HandEvent, Heartbeat
from tables.timers import HEARTBEAT
from tests.conftest import room_process, wait_for, wait_until_up
from tests.kit import StakeLevelFactory, TableFactory, UserFactory, api_for, seat_players

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("timers_stopped")]


def loop():
    return room_process(["manage", "run_timers"], log_name=".pytest-kills-timers.log", append=True)


def leads(proc: subprocess.Popen) -> None:
    """Wait until a loop leads (it records a heartbeat once it holds the leader lock)."""
    since = timezone.now()
    wait_until_up(
        proc,
        lambda: Heartbeat.objects.filter(name=HEARTBEAT, at__gte=since).exists(),
        "the timer loop",
    )


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)


def dealt_table(*, action_seconds: int):
    table = TableFactory(
        stake_level=StakeLevelFactory(),
        seats=6,
        action_seconds=action_seconds,
        time_bank_seconds=0,
        pause_between_hands_ms=0,
    )
    seat_players(table, 2)  # the loop deals
    hand = wait_for(
        lambda: Hand.objects.filter(table=table).first(), timeout=30, what="the loop deals"
    )
    return table, hand


def lateness_of(hand: Hand, deadline: datetime) -> float:
    timed_out = wait_for(
        lambda: HandEvent.objects.filter(hand=hand, type="timed_out").first(),
        timeout=45,
        what="the turn times out",
    )
    return (timed_out.created_at - deadline).total_seconds()


def test_a_killed_loops_pending_turn_times_out_on_time_after_its_restart(capsys):
    with loop() as first:
        leads(first)
        _table, hand = dealt_table(action_seconds=10)
        kill(first)
    assert not HandEvent.objects.filter(hand=hand, type="timed_out").exists()
    deadline: datetime = Hand.objects.get(pk=hand.pk).turn_deadline
    with loop():  # restarted at once
        lateness = lateness_of(hand, deadline)
    with capsys.disabled():
        print(f"\n  the killed loop's turn timed out {lateness:+.3f} s after its deadline")
    assert lateness > 0  # never early
    assert lateness < 2  # the loop wakes at the deadline; a generous bound on 2 cores


def test_a_standby_loop_takes_over_when_the_leader_is_killed(capsys):
    with loop() as leader:
        leads(leader)
        with loop() as standby:
            _table, hand = dealt_table(action_seconds=4)
            kill(leader)
            deadline: datetime = Hand.objects.get(pk=hand.pk).turn_deadline
            lateness = lateness_of(hand, deadline)
            assert standby.poll() is None
    with capsys.disabled():
        print(f"\n  the standby timed the turn out {lateness:+.3f} s after its deadline")
    assert 0 < lateness < 3  # a standby retries the lock every second


def test_the_status_reports_a_killed_loop_and_recovers_when_one_is_back(client, settings):
    settings.HEALTH_TIMERS_MAX_AGE_SECONDS = 4  # the loop beats every 2 s; 15 s in production
    staff = api_for(UserFactory(is_staff=True))

    def timers_check() -> dict:
        return staff.get("/api/status/").json()["checks"]["timers"]

    with loop() as first:
        wait_for(lambda: timers_check()["ok"], timeout=30, what="a heartbeat is recorded")
        kill(first)
    check = wait_for(
        lambda: not timers_check()["ok"] and timers_check(),
        timeout=30,
        what="the status reports the loop",
    )
    assert "timers" in staff.get("/api/status/").json()["failing"]
    assert "run_timers" in check["detail"]
    assert client.get("/healthz").status_code == 200  # the room's alarm, not the process's
    with loop():
        wait_for(lambda: timers_check()["ok"], timeout=30, what="the status sees a loop again")
