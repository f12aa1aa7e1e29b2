"""The web front (`poker_room.serve`): several daphne processes on one port.

The front gives each daphne child a socket of its own on the one port (SO_REUSEPORT).
These tests start it with two children on the test database and check that the kernel
spreads table sockets over both, that a child that dies ends the front with its code
(nothing is restarted behind the supervisor's back), that SIGTERM stops every child, and
that a second front on a port in use is refused.
"""

import os
import signal
import subprocess
import sys
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import pytest
from websockets.sync.client import connect

from tests.conftest import answers, free_port, room_process, wait_for, wait_until_up
from tests.kit import TableFactory

pytestmark = pytest.mark.django_db(transaction=True)
CONNECTIONS = 30


def children_of(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def established_by_process(port: int, pids: list[int]) -> Counter[int]:
    """How many established connections to `port` each process holds (Linux /proc)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].split(":")[1], 16)
        if local_port == port and fields[3] == "01":  # 01: ESTABLISHED
            inodes.add(f"socket:[{fields[9]}]")
    held: Counter[int] = Counter()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                if os.readlink(fd) in inodes:
                    held[pid] += 1
            except OSError:
                continue  # closed meanwhile
    return held


def front(port: int, *extra: str):
    args = ["poker_room.serve", "-b", "127.0.0.1", "-p", str(port), *(extra or ("-n", "2"))]
    return room_process(args, log_name=".pytest-front.log")


def started(proc: subprocess.Popen, port: int) -> list[int]:
    wait_until_up(proc, lambda: answers(f"http://127.0.0.1:{port}/healthz"), "the front")
    pids = wait_for(lambda: len(children_of(proc.pid)) == 2 and children_of(proc.pid))
    assert isinstance(pids, list)
    return pids


def test_the_kernel_spreads_table_sockets_over_the_processes():
    table = TableFactory()
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    with front(port) as proc:
        pids = started(proc, port)
        with ExitStack() as sockets:
            for _ in range(CONNECTIONS):
                url = f"ws://127.0.0.1:{port}/ws/tables/{table.id}/"
                ws = sockets.enter_context(connect(url, origin=origin))
                assert '"snapshot"' in str(ws.recv(timeout=10))
            split = established_by_process(port, pids)
    print(f"{CONNECTIONS} table sockets per daphne process: {dict(split)}")  # shown with -s
    assert sum(split.values()) == CONNECTIONS
    # The kernel hashes each connection to one of the sockets: an even split is likely,
    # not promised (16/14, 19/11, 18/12, 17/13 here; 5 or fewer of 30 has odds of 3e-4).
    assert min(split[pid] for pid in pids) >= CONNECTIONS // 5, split


def test_a_child_that_dies_ends_the_front_with_its_code():
    port = free_port()
    with front(port) as proc:
        first, second = started(proc, port)
        os.kill(first, signal.SIGKILL)
        assert proc.wait(timeout=30) == 128 + signal.SIGKILL
        # The front waited for the other child to stop: it is not left serving alone.
        assert not Path(f"/proc/{second}").exists()


def test_sigterm_stops_every_child_and_the_front(monkeypatch):
    """With WEB_PROCESSES for the count, and daphne arguments after `--` for each child."""
    monkeypatch.setenv("WEB_PROCESSES", "2")
    port = free_port()
    with front(port, "--", "--proxy-headers") as proc:
        pids = started(proc, port)
        for pid in pids:
            assert b"--proxy-headers" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        # A second front on the same port is refused (SO_REUSEPORT would let it join).
        second = subprocess.run(
            [sys.executable, "-m", "poker_room.serve", "-p", str(port), "-n", "1"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert second.returncode == 2 and "cannot listen" in second.stderr, second.stderr
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert not any(Path(f"/proc/{pid}").exists() for pid in pids)
