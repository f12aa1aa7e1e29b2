"""The CPU the room's processes used during a load test, read from /proc (Linux).

`process_cpu(pid)` reads a process's user + system time (`/proc/<pid>/stat` fields 14
and 15, in clock ticks) and the time of its children that exited and were waited for
(fields 16 and 17). `room_processes(root_pids=..., database=...)` names the room's
processes by group: the web processes (daphne, or any ASGI server), the Celery worker(s)
and beat, a `run_timers` process, the PostgreSQL backends of the room's database (their
process title names it), and redis-server; anything else under the room's root process
(supervisord, the start script) is "other".

`CpuSampler` reads them every second in a thread, so that a process that starts and ends
during the run (a pooled PostgreSQL connection, a Celery child) counts with what it used
up to its last reading. The postmaster's own cumulative child times count the backends
that exited, of every database on the server (other users' too), so they are reported
on their own line, `postgres (exited, all databases)`.
"""

import os
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

PROC = Path("/proc")
TICK = os.sysconf("SC_CLK_TCK")
SAMPLE_SECONDS = 1.0
# The groups, in the order the report lists them.
# What may stand between `make run` and the room's processes.
SHELLS = frozenset({"sh", "bash", "dash"})
MANAGERS = ("supervisord", "scripts/room.py")
GROUPS = ("web", "worker", "beat", "timer", "postgres", "postgres_exited", "redis", "other")


@dataclass(frozen=True)
class ProcessCpu:
    """One reading of a process: its own CPU and its waited-for children's, in seconds."""

    pid: int
    command: str
    parent: int
    own: float
    children: float


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:  # gone meanwhile, or not ours to read
        return None


def process_cpu(pid: int) -> ProcessCpu | None:
    """The CPU `pid` has used so far (None when it does not exist)."""
    stat = _read(PROC / str(pid) / "stat")
    if stat is None:
        return None
    # The command (field 2) is in parentheses and may hold spaces or parentheses itself.
    close = stat.rindex(")")
    fields = stat[close + 2 :].split()
    # fields[0] is field 3 of stat(5): state; ppid is field 4, utime..cstime 14..17.
    utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
    raw = _read(PROC / str(pid) / "cmdline") or ""
    command = raw.replace("\0", " ").strip() or stat[stat.index("(") + 1 : close]
    return ProcessCpu(
        pid=pid,
        command=command,
        parent=int(fields[1]),
        own=(utime + stime) / TICK,
        children=(cutime + cstime) / TICK,
    )


def _all_processes() -> dict[int, ProcessCpu]:
    found = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (reading := process_cpu(int(entry.name))) is not None:
            found[reading.pid] = reading
    return found


def _descendants(processes: dict[int, ProcessCpu], roots: set[int]) -> set[int]:
    children: dict[int, list[int]] = defaultdict(list)
    for proc in processes.values():
        children[proc.parent].append(proc.pid)
    seen: set[int] = set()
    todo = [pid for pid in roots if pid in processes]
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo.extend(children[pid])
    return seen


def group_of(command: str) -> str:
    """The group of a room process, from its command line."""
    if "celery" in command:
        return "beat" if " beat" in command else "worker"
    if "run_timers" in command:
        return "timer"
    if any(
        server in command
        for server in ("daphne", "uvicorn", "hypercorn", "granian", "poker_room.serve")
    ):
        return "web"
    return "other"


def room_processes(*, root_pids: set[int], database: str) -> dict[int, tuple[str, ProcessCpu]]:
    """Every room process now, by pid: its group and its reading.

    `root_pids`: the processes the room was started as (their descendants count);
    `database`: the room's database name, which picks its PostgreSQL backends out.
    """
    processes = _all_processes()
    room: dict[int, tuple[str, ProcessCpu]] = {}
    for pid in _descendants(processes, root_pids):
        room[pid] = (group_of(processes[pid].command), processes[pid])
    for proc in processes.values():
        first = proc.command.split(" ", 1)[0]
        if first.startswith("postgres:") and f" {database} " in f" {proc.command} ":
            room[proc.pid] = ("postgres", proc)
        elif first.endswith("redis-server"):
            room[proc.pid] = ("redis", proc)
        elif proc.parent == 1 and first.endswith("/postgres"):
            # The postmaster: its children that exited (backends of every database).
            room[proc.pid] = ("postgres_exited", proc)
    return room


@dataclass
class CpuSampler:
    """Reads the room's processes, and the load generator's, every `SAMPLE_SECONDS`.

    `window(start_at, end_at)` starts a thread that reads them first at `start_at`
    (a `time.monotonic()` value) and last at `end_at` or at `finish()`, whichever comes
    first. `seconds()` then gives each group's CPU over the window: for every process its
    last reading less its first (less zero when it started during the window). The
    generator's processes are the group "generator"; with no `root_pids` (the room not
    measured) only they are read.
    """

    root_pids: set[int]
    database: str
    generator_pids: set[int]
    first: dict[int, tuple[str, float]] = field(default_factory=dict)
    last: dict[int, tuple[str, float]] = field(default_factory=dict)
    started: float = 0.0
    stopped: float = 0.0
    _finish: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _reading(self) -> dict[int, tuple[str, float]]:
        readings = {}
        if self.root_pids:
            for pid, (group, room) in room_processes(
                root_pids=self.root_pids, database=self.database
            ).items():
                readings[pid] = (group, room.children if group == "postgres_exited" else room.own)
        for pid in self.generator_pids:
            if (proc := process_cpu(pid)) is not None:
                readings[pid] = ("generator", proc.own)
        return readings

    def window(self, start_at: float, end_at: float | None) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(start_at, end_at), name="cpu-sampler", daemon=True
        )
        self._thread.start()

    def _run(self, start_at: float, end_at: float | None) -> None:
        if self._finish.wait(max(0.0, start_at - time.monotonic())):
            return  # the run ended before the window opened
        self.first = self._reading()
        self.last = dict(self.first)
        self.started = time.monotonic()
        while True:
            wait = SAMPLE_SECONDS
            if end_at is not None:
                wait = min(wait, end_at - time.monotonic())
            if wait <= 0 or self._finish.wait(wait):
                break
            self.last.update(self._reading())
        self.last.update(self._reading())
        self.stopped = time.monotonic()

    def finish(self) -> None:
        """End the window now if it is still open; wait for the last reading."""
        self._finish.set()
        if self._thread is not None:
            self._thread.join()

    def seconds(self) -> dict[str, float]:
        """CPU seconds each group used in the window (every group listed, maybe 0)."""
        used = dict.fromkeys((*GROUPS, "generator"), 0.0)
        for pid, (group, value) in self.last.items():
            start = self.first.get(pid, (group, 0.0))[1]
            used[group] += max(0.0, value - start)
        return used

    def processes(self) -> dict[str, int]:
        """How many processes of each group were seen."""
        counts = dict.fromkeys((*GROUPS, "generator"), 0)
        for group, _ in self.last.values():
            counts[group] += 1
        return counts


def room_root(port: int) -> int | None:
    """The root process of the room serving `port` on this machine, if found.

    The web process whose command line names the port (`-p 8000`, `--port 8000`), then
    up through the shell and the process manager that started it (supervisord,
    `scripts/room.py`), so that the worker and beat it also started count; the web
    process alone without one.
    """
    processes = _all_processes()
    for proc in processes.values():
        words = proc.command.split()
        named = any(
            w in ("-p", "--port") and i + 1 < len(words) and words[i + 1] == str(port)
            for i, w in enumerate(words)
        )
        if group_of(proc.command) == "web" and named:
            root = proc
            while (parent := processes.get(root.parent)) is not None and _manager(parent):
                root = parent
            return root.pid
    return None


def _manager(proc: ProcessCpu) -> bool:
    """A shell or the process manager between the room's start and its processes."""
    program = Path(proc.command.split(" ", 1)[0]).name
    return program in SHELLS or any(manager in proc.command for manager in MANAGERS)
