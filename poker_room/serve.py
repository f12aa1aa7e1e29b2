"""Several daphne processes on one port, each restarted when it dies: `python -m poker_room.serve`.

Daphne runs one process on one core. This front starts `--processes` daphne children
(default `WEB_PROCESSES`, else the number of cores) and gives each a listening socket of
its own on the one port (`SO_REUSEPORT`, `daphne --fd`): the kernel spreads new
connections evenly over those sockets (by a hash of the client's address and port), so
no balancer is needed on one machine. One socket shared by every child was tried first:
whichever child is idle first wins each accept, and 30 table sockets opened one after
another split anywhere from 25/5 to 14/16. Any process can serve any table (the row lock
orders commands, the Redis channel layer carries every event to every process), so it
does not matter which child a player's sockets land on.

A child that dies is restarted on the socket it had, and nothing else is touched. The
front keeps every listening socket open for as long as it runs: while a child is dead,
the connections the kernel hashes to its socket wait in that socket's backlog and the
new child serves them, so the port never refuses a connection; the other children keep
their sockets and their players. A daphne holds nothing but its own connections (the
tables are in PostgreSQL, their feeds in Redis), so a crash costs only the players
connected to it, who reconnect. (Until issue 46 the front stopped every child and exited
when one died, for its supervisor to restart the whole web service: one crash cut the
players of every process and closed the port for the survivors' stop grace, some 35 s,
during which the timer loop timed out every absent player.)

A child that keeps dying is restarted after a growing delay (`RESTART_DELAYS`); at the
`GIVE_UP_DEATHS`th death within `DEATH_WINDOW_SECONDS` the front gives up: it stops the
others and exits with the last child's code, so that a web service that cannot run is
seen by its supervisor (`make run`'s supervisord, systemd), which restarts or reports it.
Every death and restart is logged (`[web] ...` on stderr).

SIGTERM and SIGINT are passed on to the children and close the listening sockets at
once (a new connection is refused rather than left waiting for a child that is
stopping); the front exits once every child has (killed after `STOP_GRACE_SECONDS`).

Arguments after `--` go to each daphne, e.g. `-- --proxy-headers -v 1`.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

APPLICATION = "poker_room.asgi:application"
BACKLOG = 1024
# How long stopping children get to close their sockets before they are killed.
STOP_GRACE_SECONDS = 20.0
# Seconds before a dead child is started again: the first, the second... of the deaths
# within the window (the last delay repeats).
RESTART_DELAYS = (0.5, 1.0, 2.0, 4.0)
# So many deaths within so many seconds, of any children, and the front gives up.
GIVE_UP_DEATHS = 5
DEATH_WINDOW_SECONDS = 60.0
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def web_processes_default() -> int:
    """`WEB_PROCESSES` when set, else one process per core."""
    value = os.environ.get("WEB_PROCESSES", "").strip()
    if value:
        return int(value)
    return os.cpu_count() or 1


def listening_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """`count` sockets listening on one port, one per child, inheritable so that the
    children get them."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # A port in use must be refused as daphne alone would be, not joined: SO_REUSEPORT
    # lets any socket of the same user that sets it join (another room's front, say).
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
    sockets = []
    for _ in range(count):
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
        sock.set_inheritable(True)
        sockets.append(sock)
    return sockets


def child_command(fd: int, daphne_args: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "daphne", "--fd", str(fd), *daphne_args, APPLICATION]


def exit_code(status: int) -> int:
    """A child's wait status as a shell would report it (a signal N is 128 + N)."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status)


def how_it_ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exited with {os.waitstatus_to_exitcode(status)}"


def ended_with(parent: int) -> Callable[[], None]:
    """What a child runs before daphne: it is killed when the front dies (Linux's
    PR_SET_PDEATHSIG), so that a front killed outright leaves no daphne serving the port
    unsupervised, in the way of its successor. SIGKILL, not SIGTERM: a daphne asked to
    stop while a request is in flight may never exit (the request's thread waits for
    the event loop that stopped), and no front is left to kill it after a grace."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def in_child() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)  # the front died before the line above

    return in_child


@dataclass
class Child:
    """A daphne child and the listening socket (its index in the front's) it serves."""

    slot: int
    process: subprocess.Popen[bytes]


class Front:
    """The children, and what to do when one ends or a stop signal comes.

    One loop (`wait`) does everything: it reaps the children that ended, starts again
    those whose delay is over, and kills what is left when a stop's grace runs out. It
    sleeps in `select` on a pipe that every signal wakes (`signal.set_wakeup_fd`), with
    a timeout until its next restart or deadline: no polling.
    """

    def __init__(self, sockets: Sequence[socket.socket], daphne_args: Sequence[str]) -> None:
        self.sockets = list(sockets)
        self.daphne_args = list(daphne_args)
        self.children: dict[int, Child] = {}
        # Slot -> when (time.monotonic()) its dead child is started again.
        self.restarts_due: dict[int, float] = {}
        self.deaths: deque[float] = deque()
        self.stop_requested = False
        self.stopping = False
        self.kill_at: float | None = None
        self.code = 0
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)

    def say(self, message: str) -> None:
        print(f"[web] {message}", file=sys.stderr, flush=True)

    def install_signal_handlers(self) -> None:
        """SIGTERM/SIGINT stop; every signal (SIGCHLD above all) wakes the loop."""
        signal.set_wakeup_fd(self._wake_write, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)

    def spawn(self, slot: int) -> int:
        fd = self.sockets[slot].fileno()
        process = subprocess.Popen(
            child_command(fd, self.daphne_args),
            pass_fds=(fd,),
            preexec_fn=ended_with(os.getpid()),  # safe: the front runs no threads
        )
        self.children[process.pid] = Child(slot=slot, process=process)
        return process.pid

    def start(self) -> None:
        """Start one child per socket; the front keeps the sockets for restarts."""
        host, port = self.sockets[0].getsockname()[:2]
        pids = ", ".join(str(self.spawn(slot)) for slot in range(len(self.sockets)))
        self.say(f"{len(self.children)} daphne processes on {host}:{port} (pids {pids})")

    def stop(self, signum: int, frame: object) -> None:
        """SIGTERM/SIGINT: the loop passes it on (not here: a handler runs between any two
        lines of the loop, a restart's included)."""
        self.stop_requested = True

    def _stop_children(self) -> None:
        if self.stopping:
            return
        self.stopping = True
        self.restarts_due.clear()
        # The port closes now: nobody is left to serve what would wait in a backlog.
        for sock in self.sockets:
            sock.close()
        self._signal_children(signal.SIGTERM)
        self.kill_at = time.monotonic() + STOP_GRACE_SECONDS

    def _signal_children(self, signum: int) -> None:
        # os.kill, not Popen.send_signal: that reaps a child that ended, behind `_reap`.
        for pid in self.children:
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                continue

    def wait(self) -> int:
        """Run until stopped or given up, and every child is gone: the front's exit code."""
        while self.children or self.restarts_due:
            if self.stop_requested:
                self._stop_children()
            self._reap()
            self._restart_due()
            if self.kill_at is not None and time.monotonic() >= self.kill_at:
                self._signal_children(signal.SIGKILL)
                self.kill_at = None
            if self.children or self.restarts_due:
                self._sleep()
        return self.code

    def _sleep(self) -> None:
        """Until a signal comes or the next restart or kill is due."""
        due = [*self.restarts_due.values(), *([self.kill_at] if self.kill_at else [])]
        timeout = max(0.0, min(due) - time.monotonic()) if due else None
        select.select([self._wake_read], [], [], timeout)
        try:
            while os.read(self._wake_read, 512):
                pass
        except BlockingIOError:
            pass

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            child = self.children.pop(pid, None)
            if child is None:
                continue
            child.process.returncode = exit_code(status)
            if not self.stopping:
                self._died(child, pid, status)

    def _died(self, child: Child, pid: int, status: int) -> None:
        now = time.monotonic()
        self.deaths.append(now)
        while self.deaths and now - self.deaths[0] > DEATH_WINDOW_SECONDS:
            self.deaths.popleft()
        recent = len(self.deaths)
        window = f"{recent} death{'s' if recent > 1 else ''} in {DEATH_WINDOW_SECONDS:.0f} s"
        if recent >= GIVE_UP_DEATHS:
            # A crash loop: restarting on would only hide it from the supervisor.
            self.say(f"daphne {pid} {how_it_ended(status)} ({window}): giving up, stopping all")
            self.code = exit_code(status) or 1
            self._stop_children()
            return
        delay = RESTART_DELAYS[min(recent, len(RESTART_DELAYS)) - 1]
        self.say(f"daphne {pid} {how_it_ended(status)} ({window}): restarting it in {delay:g} s")
        self.restarts_due[child.slot] = now + delay

    def _restart_due(self) -> None:
        now = time.monotonic()
        for slot, due in list(self.restarts_due.items()):
            if due <= now:
                del self.restarts_due[slot]
                self.say(f"daphne restarted on socket {slot + 1}: pid {self.spawn(slot)}")


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    daphne_args: list[str] = []
    if "--" in args:
        split = args.index("--")
        args, daphne_args = args[:split], args[split + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--bind", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("-p", "--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument(
        "-n",
        "--processes",
        type=int,
        default=None,
        help="daphne processes (default: WEB_PROCESSES, else the number of cores)",
    )
    options = parser.parse_args(args)
    try:
        processes = web_processes_default() if options.processes is None else options.processes
    except ValueError:
        parser.error("WEB_PROCESSES must be a whole number")
    if processes < 1:
        parser.error("run at least one web process")
    try:
        sockets = listening_sockets(options.bind, options.port, processes)
    except OSError as exc:
        parser.error(f"cannot listen on {options.bind}:{options.port}: {exc.strerror}")

    front = Front(sockets, daphne_args)
    front.install_signal_handlers()
    front.start()
    return front.wait()


if __name__ == "__main__":
    sys.exit(main())
