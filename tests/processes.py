"""What the room's processes are and hold, read from Linux's /proc: a process's children
and command line, and which process serves the other end of a client's connection."""

import os
import socket
from collections import Counter
from pathlib import Path


def children_of(pid: int) -> list[int]:
    """The process's children (of its main thread: the room's processes start theirs there)."""
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []  # it is gone


def command_of(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except FileNotFoundError:
        return []


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for its parent."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def established_to(port: int) -> dict[str, int]:
    """The established connections to `port` on 127.0.0.1: socket inode -> the client's
    port."""
    found = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].split(":")[1], 16)
        if local_port == port and fields[3] == "01":  # 01: ESTABLISHED
            found[f"socket:[{fields[9]}]"] = int(fields[2].split(":")[1], 16)
    return found


def sockets_held(pid: int) -> set[str]:
    held = set()
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except FileNotFoundError:
        return held
    for fd in fds:
        try:
            held.add(os.readlink(fd))
        except OSError:
            continue  # closed meanwhile
    return held


def established_by_process(port: int, pids: list[int]) -> Counter[int]:
    """How many established connections to `port` each process holds."""
    inodes = established_to(port)
    return Counter({pid: len(sockets_held(pid) & inodes.keys()) for pid in pids})


def served_by(port: int, client: socket.socket, pids: list[int]) -> int | None:
    """Which of `pids` holds the server's end of the client's connection to `port`."""
    client_port = client.getsockname()[1]
    inodes = {inode for inode, peer in established_to(port).items() if peer == client_port}
    return next((pid for pid in pids if sockets_held(pid) & inodes), None)
