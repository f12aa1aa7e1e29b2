"""Several daphne processes on one port: `python -m poker_room.serve`.

Daphne runs one process on one core. This front starts `--processes` daphne children
(default `WEB_PROCESSES`, else the number of cores) and gives each a listening socket of
its own on the one port (`SO_REUSEPORT`, `daphne --fd`): the kernel spreads new
connections evenly over those sockets (by a hash of the client's address and port), so
no balancer is needed on one machine. One socket shared by every child was tried first:
whichever child is idle first wins each accept, and 30 table sockets opened one after
another split anywhere from 25/5 to 14/16. Any process can serve any table (the row lock
orders commands, the Redis channel layer carries every event to every process), so it
does not matter which child a player's sockets land on.

The front restarts nothing: when a child exits, the front stops the others and exits
with that child's code, so a supervisor (honcho, systemd) sees the failure and restarts
the whole web service. SIGTERM and SIGINT are passed on to the children, and the front
exits once they have.

Arguments after `--` go to each daphne, e.g. `-- --proxy-headers -v 1`.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence

APPLICATION = "poker_room.asgi:application"
BACKLOG = 1024
# How long stopping children get to close their sockets before they are killed.
STOP_GRACE_SECONDS = 20.0


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


class Front:
    """The children and what to do when one ends or a stop signal comes."""

    def __init__(self, sockets: Sequence[socket.socket], daphne_args: Sequence[str]) -> None:
        self.sockets = list(sockets)
        self.daphne_args = list(daphne_args)
        self.children: dict[int, subprocess.Popen[bytes]] = {}
        self.stopping = False

    def say(self, message: str) -> None:
        print(f"[web] {message}", file=sys.stderr, flush=True)

    def start(self) -> None:
        """Start one child per socket; the children hold the sockets, the front none."""
        host, port = self.sockets[0].getsockname()[:2]
        for sock in self.sockets:
            fd = sock.fileno()
            child = subprocess.Popen(child_command(fd, self.daphne_args), pass_fds=(fd,))
            self.children[child.pid] = child
            sock.close()
        pids = ", ".join(map(str, self.children))
        self.say(f"{len(self.children)} daphne processes on {host}:{port} (pids {pids})")

    def stop(self, signum: int, frame: object) -> None:
        """SIGTERM/SIGINT: pass it on; the wait loop exits once every child is gone."""
        self.stopping = True
        for child in self.children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)

    def wait(self) -> int:
        """Wait for a child to end; then end the rest. Returns the front's exit code."""
        code = 0
        while self.children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            child = self.children.pop(pid, None)
            if child is None:
                continue
            child.returncode = exit_code(status)
            if not self.stopping:
                # Restarting it here would hide a crash loop from the supervisor.
                self.say(f"daphne {pid} exited with {child.returncode}: stopping the others")
                code = child.returncode or 1
                self.stop(signal.SIGTERM, None)
                self._kill_after_grace()
        return code

    def _kill_after_grace(self) -> None:
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for child in list(self.children.values()):
            try:
                child.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            self.children.pop(child.pid, None)


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
    signal.signal(signal.SIGTERM, front.stop)
    signal.signal(signal.SIGINT, front.stop)
    front.start()
    return front.wait()


if __name__ == "__main__":
    sys.exit(main())
