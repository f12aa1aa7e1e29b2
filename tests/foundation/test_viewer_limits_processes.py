"""Limits per viewer over two web processes (issue #46, finding 8): a user's table sockets
are capped at TABLE_SOCKETS_PER_USER over both, and their frames at TABLE_VIEWER_BURST
at once and TABLE_VIEWER_PER_SECOND a second in total (tables/viewer_limits.py: shared
in Redis). Before, each process counted its own: a user held 32 sockets under a cap of
16, and sent 37 frames a second against 20.

Two daphne processes on two ports, on the test database and the suite's Redis prefix;
the user's session is a real login's, presented by every socket as a browser does.
"""

import asyncio
import json
import time
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
import websockets
from channels.db import database_sync_to_async as db
from django.conf import settings
from django.test import Client
from websockets.typing import Origin

from tables.viewer_limits import LEASE_TOKENS
from tests.conftest import answers, free_port, processes_stop, room_process, wait_until_up
from tests.kit import TableFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def two_web_processes() -> Iterator[list[str]]:
    """Two daphne processes (their base URLs) on the test database."""
    with ExitStack() as stack:
        webs = []
        for name in "ab":
            port = free_port()
            args = ["daphne", "-b", "127.0.0.1", "-p", str(port), "poker_room.asgi:application"]
            proc = stack.enter_context(
                room_process(args, log_name=f".pytest-multi-limits-{name}.log")
            )
            webs.append((proc, f"http://127.0.0.1:{port}"))
        for proc, url in webs:
            wait_until_up(proc, lambda url=url: answers(f"{url}/healthz"), "daphne")
        yield [url for _, url in webs]
        processes_stop([proc for proc, _ in webs])


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


async def table_socket(base: str, table_id: int, cookie: str):
    """A signed-in table socket on the process at `base`: (the socket, None) once its
    snapshot came, or (None, the close code) if the server closed it instead."""
    ws = await websockets.connect(
        f"{base.replace('http', 'ws', 1)}/ws/tables/{table_id}/",
        origin=Origin(base),
        additional_headers={"Cookie": cookie},
        open_timeout=30,
    )
    try:
        first = json.loads(await asyncio.wait_for(ws.recv(), 30))
    except websockets.ConnectionClosed as closed:
        return None, closed.rcvd.code if closed.rcvd else None
    assert first["type"] == "snapshot", first
    return ws, None


async def test_a_users_sockets_are_capped_over_both_web_processes(two_web_processes):
    cap = settings.TABLE_SOCKETS_PER_USER
    table = await db(TableFactory)(seats=6)
    cookie = await db(session_cookie)(await db(UserFactory)())
    held, refused = [], []
    for n in range(cap + 2):  # one on each process in turn
        ws, code = await table_socket(two_web_processes[n % 2], table.id, cookie)
        (held if ws is not None else refused).append(ws or code)
    assert len(held) == cap and refused == [4429, 4429]
    # Closing one on one process frees a place on the other.
    await held.pop(0).close()
    ws = None
    for _ in range(100):  # its place is given back once that process has seen the close
        ws, code = await table_socket(two_web_processes[1], table.id, cookie)
        if ws is not None:
            break
        assert code == 4429
        await asyncio.sleep(0.1)
    assert ws is not None
    held.append(ws)
    await asyncio.gather(*(ws.close() for ws in held))


async def test_a_users_frames_are_limited_over_both_web_processes(two_web_processes):
    burst, rate = settings.TABLE_VIEWER_BURST, settings.TABLE_VIEWER_PER_SECOND
    table = await db(TableFactory)(seats=6)
    cookie = await db(session_cookie)(await db(UserFactory)())
    started = time.monotonic()  # the user's bucket is full until their first connect
    sockets = [
        (await table_socket(base, table.id, cookie))[0] for base in two_web_processes * 2
    ]  # two on each process: four connects, a token each

    async def flood(ws) -> list[dict]:
        """Sixty frames at once (more than the socket's own 20 and the user's 40), then
        their sixty answers."""
        for seq in range(1, 61):
            await ws.send(json.dumps({"cmd": "no_such_command", "seq": seq}))
        got = []
        while len(got) < 60:
            message = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if message.get("type") == "error":
                got.append(message)
        return got

    answered = [a for got in await asyncio.gather(*map(flood, sockets)) for a in got]
    elapsed = time.monotonic() - started
    passed = sum(a["code"] == "unknown_command" for a in answered)
    limited = [a for a in answered if a["code"] == "rate_limited"]
    assert passed + len(limited) == 240
    # Every frame let through, and every connect, spent a token of the one bucket.
    assert passed + len(sockets) <= burst + rate * elapsed, (passed, elapsed)
    # The burst left after the connects was theirs, wherever they sent from (but for the
    # few tokens each process may still hold leased at the end).
    assert passed >= burst - len(sockets) - 2 * LEASE_TOKENS, passed
    assert any("over all your connections" in a["message"] for a in limited)
    await asyncio.gather(*(ws.close() for ws in sockets))
