"""Issue 46, finding 3: `make run` supervises each of its processes.

Under honcho any one process exiting (a daphne, the timer loop, the worker, beat)
stopped the whole room, the private PostgreSQL and Redis included. The test starts
`scripts/room.py` as `make run` does (`--no-setup`: the suite's database is migrated
already, and the test settings collect no static files) on the test database, a free
port, two web processes and a Celery queue and worker name of its own. It kills with
SIGKILL, in turn, the worker, one daphne, the timer loop, beat and the web front itself,
and after each shows a new process in its place within RESTART_SECONDS of the kill, then
serving (the worker answering a ping, the daphne's successor serving a connection, the
timer loop's heartbeat fresh, beat started; the front's daphnes gone with it and the new
front's serving), while every other process of the room, `room.py` and supervisord
included, kept running with the same pid. Then a SIGTERM to `room.py` stops every
process, cleanly.

A second test runs supervisord as room.py configures it on two stand-in processes: one
that fails at once is retried with growing delays, then left stopped with a line saying
so, while the other runs on.

How long a process takes to serve after its restart is its start-up (Django, Celery),
which the machine's load stretches: 3 to 6 s each here at a load average of 4 on 2
cores, a beat's start 10 to 20 s at 6. The test prints both times, and waits for the
serving up to READY_SECONDS.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime

import pytest
from django.utils import timezone

from poker_room.celery import app as celery_app
from tables.models import Heartbeat
from tables.timers import HEARTBEAT
from tests.conftest import ROOT, answers, free_port, room_process, wait_for, wait_until_up
from tests.processes import alive, children_of, command_of, served_by

# The room's own timer loop must lead: the suite's is stopped.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("timers_stopped")]
LOG = ".pytest-kills-room.log"
# The bound: a killed process is started again within 10 s, by itself...
RESTART_SECONDS = 10.0
# ...and then serves once started (a loaded machine's start-up).
READY_SECONDS = 60.0


class Room:
    """`scripts/room.py` running, and its processes by role, found under it in /proc."""

    def __init__(self, proc: subprocess.Popen, port: int, worker: str) -> None:
        self.proc = proc
        self.port = port
        self.worker = worker

    def processes(self) -> dict[str, int]:
        """room, supervisord, web (the front), its daphnes (`daphne-fd3`, `daphne-fd4`: by
        the listening socket they serve, which a successor takes over), timers, worker,
        beat."""
        found = {"room": self.proc.pid}
        supervisors = children_of(self.proc.pid)
        if len(supervisors) != 1:
            return found
        found["supervisord"] = supervisors[0]
        for pid in children_of(supervisors[0]):
            words = command_of(pid)
            if "poker_room.serve" in words:
                found["web"] = pid
                for child in children_of(pid):
                    words = command_of(child)
                    if "--fd" in words:
                        found[f"daphne-fd{words[words.index('--fd') + 1]}"] = child
            elif "run_timers" in words:
                found["timers"] = pid
            elif "worker" in words:
                found["worker"] = pid
            elif "beat" in words:
                found["beat"] = pid
        return found

    def log(self) -> str:
        return (ROOT / LOG).read_text(errors="replace")

    def worker_answers(self) -> bool:
        return bool(celery_app.control.ping(destination=[self.worker], timeout=0.5))

    def connection_served_by(self, pid: int) -> bool:
        """A new connection to the port is served by `pid` (the kernel hashes each to a
        daphne: a few tries find it)."""
        for _ in range(20):
            with socket.create_connection(("127.0.0.1", self.port), timeout=10) as client:
                client.sendall(b"GET /static/css/room.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                client.settimeout(30)
                assert client.recv(16).startswith(b"HTTP/1.1 ")
                if served_by(self.port, client, [pid]) == pid:
                    return True
        return False


def heartbeat_since(moment: datetime) -> bool:
    return Heartbeat.objects.filter(name=HEARTBEAT, at__gte=moment).exists()


@pytest.fixture
def room(queue, monkeypatch) -> Iterator[Room]:
    port = free_port()
    worker = f"room-{uuid.uuid4().hex[:6]}@{os.uname().nodename}"
    monkeypatch.setenv("PORT", str(port))
    monkeypatch.setenv("HOST", "127.0.0.1")
    monkeypatch.setenv("WEB_PROCESSES", "2")
    monkeypatch.setenv("CELERY_WORKER_NAME", worker)
    seen: set[int] = set()
    with room_process(["scripts.room", "--no-setup"], log_name=LOG) as proc:
        room = Room(proc, port, worker)
        try:
            since = timezone.now()
            wait_until_up(
                proc,
                lambda: (
                    answers(f"http://127.0.0.1:{port}/healthz")
                    and {"daphne-fd3", "daphne-fd4", "beat"} <= room.processes().keys()
                    and "beat: Starting..." in room.log()
                    and heartbeat_since(since)
                    and room.worker_answers()
                ),
                "the room",
            )
            yield room
        finally:
            seen.update(room.processes().values())
            stop_and_check(room, seen)


def stop_and_check(room: Room, pids: set[int]) -> None:
    """SIGTERM stops every process of the room, room.py last; none is left behind."""
    code = None
    if room.proc.poll() is None:
        room.proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = room.proc.wait(timeout=90)
    left = [pid for pid in pids if alive(pid)]
    for pid in left:  # never leave one running after the suite, whatever failed
        os.kill(pid, signal.SIGKILL)
    assert not left, f"still running after the room was told to stop: {left}"
    assert code == 0  # a clean stop
    log = room.log()
    assert log.rindex("stopped: web") < log.rindex("[room] stopped")


def kill_and_time(
    room: Room, role: str, back: Callable[[int, datetime], bool], *, replaced: Sequence[str] = ()
) -> tuple[float, float]:
    """Kill the role's process; wait until another runs in its place, then until
    `back(old_pid, killed_at)`; check that every other process but the `replaced` kept
    its pid. Returns the seconds from the kill to each."""
    before = room.processes()
    victim = before[role]
    unaffected = {
        name: pid for name, pid in before.items() if name != role and name not in replaced
    }
    killed_at = time.monotonic()
    killed_wall = timezone.now()
    os.kill(victim, signal.SIGKILL)
    wait_for(
        lambda: room.processes().get(role) not in (None, victim),
        timeout=RESTART_SECONDS,
        what=f"the killed {role} is started again",
    )
    restarted = time.monotonic() - killed_at
    wait_for(
        lambda: back(victim, killed_wall), timeout=READY_SECONDS, what=f"the new {role} serves"
    )
    ready = time.monotonic() - killed_at
    after = room.processes()
    assert after.get(role) not in (None, victim)
    assert {name: after.get(name) for name in unaffected} == unaffected, (before, after)
    assert all(alive(pid) for pid in unaffected.values())
    return restarted, ready


def test_each_killed_process_comes_back_and_the_others_run_on(room, capsys):
    def worker_back(old: int, _since) -> bool:
        new = room.processes().get("worker")
        return new not in (None, old) and room.worker_answers()

    def daphne_back(old: int, _since) -> bool:
        new = room.processes().get("daphne-fd3")
        return new not in (None, old) and room.connection_served_by(new)

    def timers_back(old: int, since) -> bool:
        new = room.processes().get("timers")
        return new not in (None, old) and heartbeat_since(since)

    beat_starts = room.log().count("beat: Starting...")

    def beat_back(old: int, _since) -> bool:
        new = room.processes().get("beat")
        return new not in (None, old) and room.log().count("beat: Starting...") > beat_starts

    daphnes = ("daphne-fd3", "daphne-fd4")
    front_daphnes = [room.processes()[name] for name in daphnes]

    def front_back(old: int, _since) -> bool:
        now = room.processes()
        return (
            now.get("web") not in (None, old)
            and not any(alive(pid) for pid in front_daphnes)  # gone with their front
            and all(now.get(name) not in (None, *front_daphnes) for name in daphnes)
            and all(room.connection_served_by(now[name]) for name in daphnes)
        )

    took = {
        "worker": kill_and_time(room, "worker", worker_back),
        "a daphne": kill_and_time(room, "daphne-fd3", daphne_back),
        "timers": kill_and_time(room, "timers", timers_back),
        "beat": kill_and_time(room, "beat", beat_back),
    }
    front_daphnes[:] = [room.processes()[name] for name in daphnes]
    took["the web front"] = kill_and_time(room, "web", front_back, replaced=daphnes)
    with capsys.disabled():
        times = (f"{k} {started:.1f} s / {ready:.1f} s" for k, (started, ready) in took.items())
        print("\n  after SIGKILL, started again / serving: " + ", ".join(times))
    log = room.log()
    for program in ("worker", "timers", "beat", "web"):
        assert f"exited: {program} (terminated by SIGKILL; not expected)" in log
    assert "killed by SIGKILL (1 death in 60 s): restarting it in" in log
    assert "FATAL" not in log


def test_a_crash_loop_backs_off_is_reported_and_stops_nothing_else(tmp_path, monkeypatch):
    """supervisord as room.py configures it, with two processes: one that fails at once
    is retried after 1 s, 2 s..., then left stopped with a line that says so; the other
    runs on throughout."""
    from scripts import room as room_script

    monkeypatch.setattr(room_script, "START_RETRIES", 2)
    config = tmp_path / "supervisord.conf"
    processes = {"steady": "sleep 600", "crashing": "sh -c 'echo crashing; exit 3'"}
    config.write_text(room_script.supervisor_config(processes, folder=tmp_path))
    log = tmp_path / "out.log"
    with open(log, "a") as out:  # appending, as room.py makes its output (output_appended)
        supervisord = subprocess.Popen(
            [sys.executable, "-m", "supervisor.supervisord", "-n", "-c", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for(
                lambda: "gave up: crashing entered FATAL state" in log.read_text(),
                timeout=60,
                what="supervisord gives up on the crashing process",
            )
            steady = [pid for pid in children_of(supervisord.pid) if "600" in command_of(pid)]
            assert len(steady) == 1 and alive(steady[0])
        finally:
            supervisord.terminate()
            supervisord.wait(timeout=30)
    text = log.read_text()
    assert text.count("crashing\n") == 3  # the first start and two retries
    assert text.count("exited: crashing (exit status 3; not expected)") == 3
    assert "spawned: 'steady'" in text and text.count("spawned: 'steady'") == 1
    assert "stopped: steady" in text
