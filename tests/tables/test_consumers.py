"""The table WebSocket, end to end: real Redis channel layer, real timer loop.

Several clients connect to one table, sit down, and play full hands by sending commands;
every client must see an unbroken, numbered stream, only its own hole cards, and an
error (changing nothing) for every bad command.
"""

import asyncio

import pytest
from channels.db import database_sync_to_async as sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.test import Client

from poker_room.asgi import application
from poker_room.routing import websocket_urlpatterns
from tables import feed
from tables.bots.player import frame_messages
from tables.models import Hand, HandStatus
from tests.kit import StakeLevelFactory, TableFactory, funded_player

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("timer_process"),
]

router = URLRouter(websocket_urlpatterns)


class Client_:
    """One WebSocket client: sends numbered commands, keeps every message it got."""

    def __init__(self, communicator: WebsocketCommunicator, name: str) -> None:
        self.ws = communicator
        self.name = name
        self.seq = 0
        self.messages: list[dict] = []
        self.unread: list[dict] = []  # of the last frame (a command's messages come in one)
        self.version = 0

    async def connect(self) -> dict:
        connected, _ = await self.ws.connect()
        assert connected
        snapshot = await self.ws.receive_json_from(timeout=5)
        assert snapshot["type"] == "snapshot"
        self.version = snapshot["v"]
        return snapshot

    async def send(self, cmd: str, **fields) -> dict:
        """Send a command and return its answer (ack or error); events are kept aside."""
        self.seq += 1
        await self.ws.send_json_to({"cmd": cmd, "seq": self.seq, **fields})
        return await self.answer(self.seq)

    async def answer(self, seq: int) -> dict:
        while True:
            message = await self.next()
            if message.get("type") in ("ack", "error") and message.get("seq") == seq:
                return message

    async def next(self, timeout: float = 10) -> dict:
        if not self.unread:
            self.unread = frame_messages(await self.ws.receive_json_from(timeout=timeout))
        message = self.unread.pop(0)
        if "v" in message and message.get("type") != "snapshot":
            assert message["v"] == self.version + 1, f"{self.name}: gap before {message}"
            self.version = message["v"]
        self.messages.append(message)
        return message

    async def drain(self, wait: float = 0.05) -> None:
        """Take every message already sent (asgiref cancels an app on a receive timeout,
        so look with receive_nothing first)."""
        while self.unread or not await self.ws.receive_nothing(timeout=wait):
            await self.next()

    async def until(self, predicate, timeout: float = 20) -> dict:
        """The first message (kept or new) that satisfies the predicate."""
        seen = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            for message in self.messages[seen:]:
                if predicate(message):
                    return message
            seen = len(self.messages)
            await self.drain(wait=0.1)
        raise AssertionError(f"{self.name}: no such message within {timeout} s")


def connect_as(user, table_id: int) -> Client_:
    communicator = WebsocketCommunicator(router, f"/ws/tables/{table_id}/")
    communicator.scope["user"] = user
    communicator.scope["url_route"] = {"kwargs": {"table_id": table_id}}
    return Client_(communicator, user.username if user else "spectator")


@pytest.fixture
def setup(transactional_db):
    stake = StakeLevelFactory(rake_percent_bp=500)
    table = TableFactory(stake_level=stake, seats=6, pause_between_hands_ms=0)
    return (
        table,
        funded_player(username="alice"),
        funded_player(username="bob"),
        funded_player(username="carol"),
    )


async def play_one_hand(clients: list[Client_], hand_id: int) -> dict:
    """Whoever gets a turn calls or checks, until the hand ends; returns `hand_ended`."""
    answered: set[int] = set()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while loop.time() < deadline:
        for client in clients:
            await client.drain()
        for client in clients:
            for message in client.messages:
                if message.get("type") == "hand_ended" and message.get("hand") == hand_id:
                    return message
        for client in clients:
            turns = [m for m in client.messages if m.get("type") == "turn"]
            if turns and "legal_actions" in turns[-1] and turns[-1]["turn"] not in answered:
                turn = turns[-1]
                answered.add(turn["turn"])
                action = "check" if turn["legal_actions"]["can_check"] else "call"
                answer = await client.send("act", action=action, turn=turn["turn"])
                assert answer["type"] == "ack", answer
    raise AssertionError("the hand did not end within 30 s")


async def test_players_sit_play_a_hand_and_see_only_their_own_cards(setup):
    table, alice, bob, carol = setup
    a, b = connect_as(alice, table.id), connect_as(bob, table.id)
    spectator = connect_as(carol, table.id)
    for client in (a, b, spectator):
        await client.connect()
    assert (await a.send("sit", seat=1, buy_in=10_000))["type"] == "ack"
    assert (await b.send("sit", seat=4, buy_in=10_000))["type"] == "ack"
    started = await a.until(lambda m: m.get("type") == "hand_started")
    hand_id = started["hand"]
    await b.until(lambda m: m.get("type") == "turn")
    await spectator.until(lambda m: m.get("type") == "turn")
    ended = await play_one_hand([a, b], hand_id)
    await spectator.until(lambda m: m.get("type") == "hand_ended")

    for client, seat in ((a, 1), (b, 4), (spectator, None)):
        holes = [
            m for m in client.messages if m.get("type") == "hole_cards" and m["hand"] == hand_id
        ]
        assert len(holes) == 2
        for message in holes:
            if message["seat"] == seat:
                assert len(message["cards"]) == 2
            else:
                assert "cards" not in message
    hand = await sync_to_async(Hand.objects.get)(pk=hand_id)
    assert hand.status == HandStatus.FINISHED
    assert sum(s["amount"] for s in ended["stacks"]) + ended["rake"] == 20_000
    for client in (a, b, spectator):
        await client.ws.disconnect()


async def test_bad_commands_get_errors_with_codes_and_change_nothing(setup):
    table, alice, bob, _ = setup
    a, b = connect_as(alice, table.id), connect_as(bob, table.id)
    await a.connect()
    await b.connect()
    await a.send("sit", seat=1, buy_in=10_000)
    await b.send("sit", seat=2, buy_in=10_000)
    await a.until(lambda m: m.get("type") == "turn")
    hand = await sync_to_async(Hand.objects.get)(table=table, status=HandStatus.IN_PROGRESS)
    before = hand.state

    await a.ws.send_to(text_data="{not json")
    assert (await a.until(lambda m: m.get("type") == "error"))["code"] == "malformed"
    turn = await a.until(lambda m: m.get("type") == "turn")
    acted, waiting = (a, b) if "legal_actions" in turn else (b, a)
    answer = await waiting.send("act", action="fold")
    assert answer["code"] == "not_your_turn"
    await sync_to_async(hand.refresh_from_db)()
    assert hand.state == before
    # Stale: a sequence number not above the last one.
    waiting.seq -= 1
    answer = await waiting.send("act", action="call")
    assert answer["code"] == "stale"
    waiting.seq += 5
    assert (await waiting.send("act", action="bet_raise", amount="lots"))["code"] == "malformed"
    assert (await waiting.send("dance"))["code"] == "unknown_command"
    assert (await waiting.send("sit", seat=3, buy_in=1))["code"] == "seat_unavailable"
    await sync_to_async(hand.refresh_from_db)()
    assert hand.state == before
    assert not [m for m in acted.messages + waiting.messages if m.get("type") == "acted"]
    await a.ws.disconnect()
    await b.ws.disconnect()


async def test_a_spectator_must_log_in_to_play(setup):
    table, *_ = setup
    from django.contrib.auth.models import AnonymousUser

    spectator = connect_as(AnonymousUser(), table.id)
    snapshot = await spectator.connect()
    assert snapshot["you"] is None
    answer = await spectator.send("sit", seat=1, buy_in=10_000)
    assert answer["code"] == "login_required"
    await spectator.ws.disconnect()


async def test_the_session_cookie_authenticates_the_websocket(setup):
    table, alice, *_ = setup
    client = Client()
    await sync_to_async(client.force_login)(alice)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    communicator = WebsocketCommunicator(
        application,
        f"/ws/tables/{table.id}/",
        headers=[(b"origin", b"http://localhost"), (b"host", b"localhost"), (b"cookie", cookie)],
    )
    ws = Client_(communicator, "alice")
    await ws.connect()
    assert (await ws.send("sit", seat=2, buy_in=10_000))["type"] == "ack"
    seats = await ws.until(lambda m: m.get("type") == "seats")
    assert seats["seats"][0]["player"] == "alice"
    await communicator.disconnect()


async def test_an_unknown_table_is_closed_with_4404(setup):
    communicator = WebsocketCommunicator(router, "/ws/tables/999999/")
    communicator.scope["user"] = setup[1]
    assert await communicator.connect() == (True, None)
    closed = await communicator.receive_output(timeout=5)
    assert (closed["type"], closed["code"]) == ("websocket.close", 4404)


# The task of poker_room/socket_loop.py that moves a socket's frames into its inbox.
FRAMES_TASK = "dispatch_from_queue.<locals>.frames_to_queue"


def _frames_tasks() -> list[asyncio.Task]:
    return [
        task
        for task in asyncio.all_tasks()
        if getattr(task.get_coro(), "__qualname__", "") == FRAMES_TASK
    ]


async def test_a_closed_socket_leaves_no_task_and_no_inbox_behind(setup):
    """The socket's frames and the feed's messages share one inbox, dispatched one at a
    time; when the socket closes, the task moving its frames ends and the feed forgets
    the inbox."""
    table, alice = setup[0], setup[1]
    client = connect_as(alice, table.id)
    await client.connect()
    assert len(_frames_tasks()) == 1
    # Frames sent at once are each answered in turn: a snapshot, then its ack.
    for _ in range(3):
        client.seq += 1
        await client.ws.send_json_to({"cmd": "snapshot", "seq": client.seq})
    answers = [await client.ws.receive_json_from(timeout=5) for _ in range(6)]
    assert [(a["type"], a.get("seq")) for a in answers] == [
        ("snapshot", None),
        ("ack", 1),
        ("snapshot", None),
        ("ack", 2),
        ("snapshot", None),
        ("ack", 3),
    ]
    await client.ws.disconnect()
    assert _frames_tasks() == []
    assert feed.feed_channel(table.id) not in feed.table_feed()._inboxes
