"""Who a table socket belongs to (poker_room/socket_auth.py): the session cookie of the
handshake names the player; no cookie, an unknown or ended session, or one whose
password changed since it logged in makes a spectator, who may watch and not play. The
handshake is accepted before anything waits for the database."""

import asyncio
import threading

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.backends import ModelBackend
from django.contrib.sessions.models import Session
from django.db import OperationalError
from django.test import Client

from poker_room.asgi import application
from tables.bots.player import frame_messages
from tests.kit import TableFactory, funded_player

pytestmark = pytest.mark.django_db(transaction=True)

SITE = [(b"origin", b"http://localhost"), (b"host", b"localhost")]


async def _socket(table_id: int, session_key: str | None) -> tuple[WebsocketCommunicator, dict]:
    headers = list(SITE)
    if session_key is not None:
        headers.append((b"cookie", f"sessionid={session_key}".encode()))
    ws = WebsocketCommunicator(application, f"/ws/tables/{table_id}/", headers=headers)
    connected, _ = await ws.connect()
    assert connected
    snapshot = await ws.receive_json_from(timeout=5)
    assert snapshot["type"] == "snapshot"
    return ws, snapshot


async def _sit(ws: WebsocketCommunicator) -> dict:
    await ws.send_json_to({"cmd": "sit", "seq": 1, "seat": 1, "buy_in": 10_000})
    while True:
        for message in frame_messages(await ws.receive_json_from(timeout=5)):
            if message.get("seq") == 1:
                return message


async def _logged_in(user) -> str:
    client = Client()
    await database_sync_to_async(client.force_login)(user)
    return client.cookies["sessionid"].value


async def test_the_cookies_session_names_the_player_and_the_socket_plays_as_them():
    table = await database_sync_to_async(TableFactory)()
    alice = await database_sync_to_async(funded_player)(username="alice")
    ws, snapshot = await _socket(table.id, await _logged_in(alice))
    assert snapshot["you"] is None  # not seated yet, but logged in:
    assert (await _sit(ws))["type"] == "ack"
    await ws.disconnect()


@pytest.mark.parametrize("cookie", [None, "", "no-such-session-key", "x" * 5000])
async def test_without_a_known_session_the_socket_is_a_spectators(cookie):
    table = await database_sync_to_async(TableFactory)()
    ws, snapshot = await _socket(table.id, cookie)
    assert snapshot["you"] is None
    assert (await _sit(ws))["code"] == "login_required"
    await ws.disconnect()


async def test_a_session_logged_out_elsewhere_no_longer_plays():
    table = await database_sync_to_async(TableFactory)()
    bob = await database_sync_to_async(funded_player)(username="bob")
    key = await _logged_in(bob)
    await database_sync_to_async(Session.objects.filter(session_key=key).delete)()
    ws, _ = await _socket(table.id, key)
    assert (await _sit(ws))["code"] == "login_required"
    await ws.disconnect()


async def test_a_password_changed_since_the_log_in_ends_the_session():
    table = await database_sync_to_async(TableFactory)()
    carol = await database_sync_to_async(funded_player)(username="carol")
    key = await _logged_in(carol)
    carol.set_password("a new one, 12345!")
    await database_sync_to_async(carol.save)()
    ws, _ = await _socket(table.id, key)
    assert (await _sit(ws))["code"] == "login_required"
    await ws.disconnect()
    # Flushed: the stolen cookie is worth nothing anywhere now.
    assert not await database_sync_to_async(Session.objects.filter(session_key=key).exists)()


async def test_the_handshake_is_accepted_while_the_database_thread_is_busy():
    # Under load the process's one database thread has a queue of table commands; a
    # handshake that waited there for its user outlasted daphne's handshake timeout,
    # and every one cut came back as another (issue #15, 500 tables).
    table = await database_sync_to_async(TableFactory)()
    dave = await database_sync_to_async(funded_player)(username="dave")
    headers = [*SITE, (b"cookie", f"sessionid={await _logged_in(dave)}".encode())]
    release = threading.Event()
    busy = asyncio.ensure_future(database_sync_to_async(release.wait)())  # holds the thread
    try:
        ws = WebsocketCommunicator(application, f"/ws/tables/{table.id}/", headers=headers)
        connected, _ = await ws.connect(timeout=2)
        assert connected
        assert await ws.receive_nothing(timeout=0.3)  # the snapshot waits for the thread
    finally:
        release.set()
        await busy
    assert (await ws.receive_json_from(timeout=5))["type"] == "snapshot"
    assert (await _sit(ws))["type"] == "ack"  # the socket is dave's
    await ws.disconnect()


async def test_a_database_fault_while_finding_the_user_closes_with_1013_after_the_accept(
    monkeypatch,
):
    # The look-up now runs inside the consumer's connect, after the accept: a fault there
    # is "try again later" (1013), as any other while connecting, never a cut handshake.
    table = await database_sync_to_async(TableFactory)()
    erin = await database_sync_to_async(funded_player)(username="erin")
    headers = [*SITE, (b"cookie", f"sessionid={await _logged_in(erin)}".encode())]

    def down(self, user_id):
        raise OperationalError("the database system is starting up")

    monkeypatch.setattr(ModelBackend, "get_user", down)
    ws = WebsocketCommunicator(application, f"/ws/tables/{table.id}/", headers=headers)
    assert await ws.connect(timeout=2) == (True, None)
    closed = await ws.receive_output(timeout=5)
    assert (closed["type"], closed["code"]) == ("websocket.close", 1013)
