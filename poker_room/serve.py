"""Several daphne processes on one port: `python -m poker_room.serve`.

Daphne runs one process on one core. This front binds the port once and starts
`--processes` daphne children (default `WEB_PROCESSES`, else the number of cores) that
all accept on that one listening socket (`daphne --fd`): the kernel hands each new
connection to one of the processes waiting in accept, so no balancer is needed on one
machine. Any process can serve any table (the row lock orders commands, the Redis
channel layer carries every event to every process), so it does not matter which child
a player's sockets land on.

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


def listening_socket(host: str, port: int) -> socket.socket:
    """The one socket every child accepts on, inheritable so the children get it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(BACKLOG)
    sock.set_inheritable(True)
    return sock


def child_command(fd: int, daphne_args: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "daphne", "--fd", str(fd), *daphne_args, APPLICATION]


def exit_code(status: int) -> int:
    """A child's wait status as a shell would report it (a signal N is 128 + N)."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status)


class Front:
    """The children and what to do when one ends or a stop signal comes."""

    def __init__(self, sock: socket.socket, processes: int, daphne_args: Sequence[str]) -> None:
        self.sock = sock
        self.processes = processes
        self.daphne_args = list(daphne_args)
        self.children: dict[int, subprocess.Popen[bytes]] = {}
        self.stopping = False

    def say(self, message: str) -> None:
        print(f"[web] {message}", file=sys.stderr, flush=True)

    def start(self) -> None:
        fd = self.sock.fileno()
        for _ in range(self.processes):
            child = subprocess.Popen(child_command(fd, self.daphne_args), pass_fds=(fd,))
            self.children[child.pid] = child
        host, port = self.sock.getsockname()[:2]
        pids = ", ".join(map(str, self.children))
        self.say(f"{self.processes} daphne processes on {host}:{port} (pids {pids})")

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
        sock = listening_socket(options.bind, options.port)
    except OSError as exc:
        parser.error(f"cannot listen on {options.bind}:{options.port}: {exc.strerror}")

    front = Front(sock, processes, daphne_args)
    signal.signal(signal.SIGTERM, front.stop)
    signal.signal(signal.SIGINT, front.stop)
    front.start()
    # The children hold the socket now; the front only waits.
    sock.close()
    return front.wait()


if __name__ == "__main__":
    sys.exit(main())
