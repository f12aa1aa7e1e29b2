"""The table WebSocket under abuse and faults (issue #12, findings 7, 8, 12 and the faults
part): every bad frame gets an `error` with a code and the socket stays open, bad routes
are closed with 4404, a per-connection rate limit, the reorder wait re-armed per missing
version, a database or Redis fault answered `server_error` (and the retried act refused
as `stale`), and the reconnect bonus only after a real drop.

Communicator-level, on the real PostgreSQL and the real Redis channel layer. Times are
never asserted: the reorder test drives `table_messages` on the consumer itself.
"""

import asyncio
import logging
from datetime import timedelta
from typing import ClassVar

import pytest
import redis.exceptions
from autobahn.exception import Disconnected
from channels.db import database_sync_to_async as db
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.db import InterfaceError, OperationalError
from django.urls import path
from django.utils import timezone

from cashier.idempotency import CLIENT_KEY_MAX
from poker_room.asgi import application
from poker_room.routing import websocket_urlpatterns
from tables import commands, consumers, events
from tables.bots.player import frame_messages
from tables.consumers import REORDER_WAIT, TableConsumer
from tables.events import TableMessage, player_presence_group
from tables.models import Hand, HandEvent, Seat
from tables.services import play
from tables.viewer_limits import TokenBucket
from tests.kit import TableFactory, current, funded_player
from tests.tables.test_consumers import Client_
from tests.tables.test_services import heads_up, users_at, wallet_balance

pytestmark = pytest.mark.django_db(transaction=True)

router = URLRouter(websocket_urlpatterns)


def communicator(user, table_id: int, app=router) -> WebsocketCommunicator:
    ws = WebsocketCommunicator(app, f"/ws/tables/{table_id}/")
    ws.scope["user"] = user if user is not None else AnonymousUser()
    return ws


async def connected(user, table_id: int, app=router) -> Client_:
    client = Client_(communicator(user, table_id, app), getattr(user, "username", "spectator"))
    await client.connect()
    return client


def probe(version: int) -> dict:
    return TableMessage(version=version, public={"type": "probe"}).to_wire()


async def publish(table_id: int, version: int) -> None:
    # Through the table's feed, as a command publishes (a sync call, after the commit).
    await asyncio.to_thread(events._publish, table_id, [TableMessage(version, {"type": "probe"})])


async def still_open(client: Client_) -> None:
    """The socket still answers: a snapshot command gets its snapshot and ack."""
    answer = await client.send("snapshot")
    assert answer["type"] == "ack", answer


@pytest.fixture
def table():
    return TableFactory(seats=6)


# -- finding 7: frames that crashed the connection ------------------------------------------


async def test_a_deeply_nested_frame_is_malformed_and_the_socket_stays_open(table):
    client = await connected(None, table.id)
    # Under the frame cap but nested past the JSON parser's recursion limit.
    await client.ws.send_to(text_data="[" * (consumers.MAX_FRAME_CHARS - 1))
    error = await client.next()
    assert (error["type"], error["code"], error["seq"]) == ("error", "malformed", None)
    await still_open(client)
    await client.ws.disconnect()


async def test_an_oversized_frame_is_refused_with_frame_too_large(table):
    client = await connected(None, table.id)
    await client.ws.send_to(text_data="[" * 100_000)  # the finding's RecursionError frame
    assert (await client.next())["code"] == "frame_too_large"
    await client.ws.send_to(text_data='{"cmd": "snapshot", "seq": 1, "pad": "%s"}' % ("x" * 5000))
    assert (await client.next())["code"] == "frame_too_large"
    await still_open(client)
    await client.ws.disconnect()


async def test_a_binary_frame_and_json_that_is_not_a_command_are_malformed(table):
    client = await connected(None, table.id)
    await client.ws.send_to(bytes_data=b'{"cmd": "snapshot", "seq": 1}')
    assert (await client.next())["code"] == "malformed"
    for text in ("[]", "null", "5", '"snapshot"', '{"cmd": "snapshot", "seq": 1e400}'):
        await client.ws.send_to(text_data=text)
        assert (await client.next())["code"] == "malformed", text
    await still_open(client)
    await client.ws.disconnect()


async def test_a_key_longer_than_the_limit_is_refused_and_moves_nothing(table):
    alice = await db(funded_player)()
    client = await connected(alice, table.id)
    before = await db(wallet_balance)(alice)
    for fields, code in (
        ({"seat": 1, "buy_in": 10_000, "key": "k" * 201}, "idempotency_key_invalid"),  # DataError
        (
            {"seat": 1, "buy_in": 10_000, "key": "k" * (CLIENT_KEY_MAX + 1)},
            "idempotency_key_invalid",
        ),
        ({"seat": 2**64, "buy_in": 10_000}, "malformed"),
        ({"seat": 1, "buy_in": 10**30}, "malformed"),
    ):
        answer = await client.send("sit", **fields)
        assert answer["code"] == code, (fields, answer)
    # A NUL character, which PostgreSQL refuses (DataError): the cashier's key check
    # stops it before the database, and the socket stays open.
    answer = await client.send("sit", seat=1, buy_in=10_000, key="nul\u0000key")
    assert answer["code"] == "idempotency_key_invalid", answer
    assert await db(wallet_balance)(alice) == before
    assert not await db(Seat.objects.filter(table=table).exists)()
    # The longest allowed key is taken.
    answer = await client.send("sit", seat=1, buy_in=10_000, key="k" * CLIENT_KEY_MAX)
    assert answer["type"] == "ack", answer
    await client.ws.disconnect()


@pytest.mark.parametrize(
    "route",
    [
        "/ws/tables/abc/",
        "/ws/tables/1/extra/",
        "/ws/tables/",
        "/ws/nothing/",
        "/",
        "/ws/tables/99999999999999999999999999/",
    ],
)
async def test_a_bad_route_is_closed_with_4404_not_a_server_error(route):
    ws = WebsocketCommunicator(
        application, route, headers=[(b"origin", b"http://localhost"), (b"host", b"localhost")]
    )
    assert await ws.connect() == (True, None)
    closed = await ws.receive_output(timeout=5)
    assert (closed["type"], closed["code"]) == ("websocket.close", 4404)


# -- finding 7: the rate limit ---------------------------------------------------------------


class Limited(TableConsumer):
    """A burst of 3 and no refill, so that the limit is reached whatever the clock says."""

    rate_burst = 3
    rate_per_second = 0.0
    instances: ClassVar[list["Limited"]] = []

    async def connect(self) -> None:
        Limited.instances.append(self)
        await super().connect()


limited_router = URLRouter([path("ws/tables/<int:table_id>/", Limited.as_asgi())])


async def test_commands_over_the_rate_limit_are_refused_and_do_not_run(table):
    alice = await db(funded_player)()
    client = await connected(alice, table.id, limited_router)
    consumer = Limited.instances[-1]
    for _ in range(3):
        await still_open(client)
    before = await db(wallet_balance)(alice)
    answer = await client.send("sit", seat=1, buy_in=10_000)
    assert (answer["code"], answer["seq"]) == ("rate_limited", 4)
    await client.ws.send_to(text_data="{not json")  # every frame counts
    assert (await client.next())["code"] == "rate_limited"
    assert await db(wallet_balance)(alice) == before
    assert not await db(Seat.objects.filter(table=table).exists)()
    # The socket is open (the stream goes on), and a refused command's seq is still free.
    await publish(table.id, client.version + 1)
    assert (await client.next())["type"] == "probe"
    consumer.bucket.tokens = 1
    client.seq -= 1
    assert (await client.send("sit", seat=1, buy_in=10_000))["type"] == "ack"
    await client.ws.disconnect()


async def test_a_burst_of_twenty_commands_is_within_the_limit(table):
    client = await connected(None, table.id)
    for _ in range(consumers.RATE_BURST):
        await still_open(client)
    await client.ws.disconnect()


def test_the_token_bucket_refills_at_its_rate_up_to_its_capacity():
    bucket = TokenBucket(capacity=2, rate=4)
    assert [bucket.take(0.0) for _ in range(3)] == [True, True, False]
    assert not bucket.take(0.125)  # half a token
    assert bucket.take(0.25)  # a whole one
    assert [bucket.take(100.0) for _ in range(3)] == [True, True, False]


# -- finding 8: the reorder timer ------------------------------------------------------------


class Probe(TableConsumer):
    instances: ClassVar[list["Probe"]] = []

    async def connect(self) -> None:
        Probe.instances.append(self)
        await super().connect()


probe_router = URLRouter([path("ws/tables/<int:table_id>/", Probe.as_asgi())])


def message(version: int) -> dict:
    return {
        "type": "table.messages",
        "messages": [TableMessage(version, {"type": "probe"}).to_wire()],
    }


async def test_the_reorder_wait_starts_again_when_another_version_goes_missing(table):
    client = await connected(None, table.id, probe_router)
    consumer, v = Probe.instances[-1], client.version
    loop = asyncio.get_running_loop()
    await consumer.table_messages(message(v + 2))
    await consumer.table_messages(message(v + 4))
    first = consumer.reorder_timer
    assert first is not None
    # v + 1 arrives: v + 1 and v + 2 go out, and now v + 3 is the one missing.
    armed_after = loop.time()
    await consumer.table_messages(message(v + 1))
    assert [(await client.next())["v"] for _ in range(2)] == [v + 1, v + 2]
    assert first.cancelled(), "the wait for v + 3 must not end when v + 1's would have"
    assert consumer.reorder_timer.when() >= armed_after + REORDER_WAIT
    assert consumer.waiting_for == v + 3
    # v + 3 is lost: when its wait is over, v + 4 goes out and the client sees the gap.
    await consumer._give_up_waiting(v + 3)
    assert [m["v"] for m in frame_messages(await client.ws.receive_json_from(timeout=5))] == [v + 4]
    assert consumer.early == {} and consumer.reorder_timer is None
    await client.ws.disconnect()


async def test_a_gap_filled_in_time_stops_the_wait(table):
    client = await connected(None, table.id, probe_router)
    consumer, v = Probe.instances[-1], client.version
    await consumer.table_messages(message(v + 2))
    timer = consumer.reorder_timer
    await consumer.table_messages(message(v + 1))
    assert [(await client.next())["v"] for _ in range(2)] == [v + 1, v + 2]
    assert timer.cancelled() and consumer.reorder_timer is None
    # The timer for v + 3 had already fired when v + 3 arrived, and v + 5 is missing by
    # the time its task runs: that late give-up must not cut v + 5's own wait short.
    await consumer.table_messages(message(v + 4))
    await consumer.table_messages(message(v + 3))
    assert [(await client.next())["v"] for _ in range(2)] == [v + 3, v + 4]
    await consumer.table_messages(message(v + 6))
    waiting = consumer.reorder_timer
    await consumer._give_up_waiting(v + 3)
    assert list(consumer.early) == [v + 6] and consumer.waiting_for == v + 5
    assert consumer.reorder_timer is waiting and not waiting.cancelled()
    await consumer.table_messages(message(v + 5))
    assert [(await client.next())["v"] for _ in range(2)] == [v + 5, v + 6]
    await client.ws.disconnect()


# -- database and Redis faults ---------------------------------------------------------------


async def test_a_burst_of_connections_beyond_the_redis_pool_is_accepted(table):
    """150 sockets at once on one process: more `group_add`s at a time than the layer's
    100 Redis connections. They wait for a connection; none is refused (99 were)."""
    burst = [communicator(None, table.id) for _ in range(150)]
    results = await asyncio.gather(*(ws.connect(timeout=30) for ws in burst))
    try:
        assert [accepted for accepted, _ in results] == [True] * len(burst)
    finally:
        await asyncio.gather(*(ws.disconnect() for ws in burst))


def committed_then(error: Exception):
    """`act` that is carried out and committed, then fails as a dropped connection would
    (the publish to Redis, the connection's closing): the fault the finding reproduced."""
    service = commands.Act.service

    def act(**kwargs):
        service(**kwargs)
        raise error

    return staticmethod(act)


def heads_up_hand(table):
    heads_up(table)
    hand, state = current(table)
    actor = users_at(table)[state.actor]
    return actor, hand


@pytest.mark.parametrize(
    "error",
    [
        OperationalError("server closed the connection unexpectedly"),
        InterfaceError("connection already closed"),
        redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379"),
        RuntimeError("a bug"),
    ],
    ids=lambda e: type(e).__name__,
)
async def test_a_fault_after_the_commit_answers_server_error_and_the_retry_is_stale(
    table, monkeypatch, caplog, error
):
    actor, hand = await db(heads_up_hand)(table)
    client = await connected(actor, table.id)
    monkeypatch.setattr(commands.Act, "service", committed_then(error))
    turn = hand.turn_version
    with caplog.at_level(logging.ERROR, logger="tables.consumers"):
        answer = await client.send("act", action="call", turn=turn)
    assert answer["code"] == "server_error", answer
    logged = [r for r in caplog.records if r.exc_info and f"table {table.id}" in r.getMessage()]
    assert logged, "the traceback is logged with the table id"
    # The socket is open; the client retries the same decision: refused, never applied twice.
    retry = await client.send("act", action="call", turn=turn)
    assert retry["code"] == "stale", retry
    acted = await db(HandEvent.objects.filter(hand=hand, type="acted").count)()
    assert acted == 1
    await still_open(client)
    await client.ws.disconnect()


async def test_a_fault_before_the_commit_changes_nothing_and_the_retry_is_carried_out(
    table, monkeypatch
):
    actor, hand = await db(heads_up_hand)(table)
    client = await connected(actor, table.id)

    def down(**kwargs):
        raise OperationalError("connection refused")

    with monkeypatch.context() as patched:
        patched.setattr(commands.Act, "service", staticmethod(down))
        answer = await client.send("act", action="call", turn=hand.turn_version)
    assert answer["code"] == "server_error"
    assert not await db(HandEvent.objects.filter(hand=hand, type="acted").exists)()
    assert (await client.send("act", action="call", turn=hand.turn_version))["type"] == "ack"
    await client.ws.disconnect()


async def test_a_database_fault_while_connecting_closes_with_1013_not_1011(table, monkeypatch):
    def down(*args):
        raise OperationalError("the database system is starting up")

    # A seated player's snapshot is read whole, a spectator's from the table's cached form.
    monkeypatch.setattr(TableConsumer, "_snapshot", down)
    monkeypatch.setattr(consumers, "public_snapshot_read", down)
    ws = communicator(None, table.id)
    assert await ws.connect() == (True, None)
    closed = await ws.receive_output(timeout=5)
    assert (closed["type"], closed["code"]) == ("websocket.close", 1013)


async def test_a_fault_while_disconnecting_does_not_escape(table, monkeypatch):
    alice = await db(funded_player)()
    client = await connected(alice, table.id)

    def down(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(play, "seat_disconnected", down)
    await client.ws.disconnect()  # raises if the consumer let the exception out


async def test_a_fault_in_the_reconnect_bonus_keeps_the_connection(table, monkeypatch):
    alice = await db(funded_player)()

    def down(**kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(play, "seat_reconnected", down)
    client = await connected(alice, table.id)
    await still_open(client)
    await client.ws.disconnect()


# -- finding 12: the reconnect bonus only after a real drop -----------------------------------


async def answered(client: Client_) -> None:
    """Wait until the consumer has finished connecting (it handles frames in order)."""
    await still_open(client)


async def test_a_second_tab_on_your_turn_earns_no_bonus_and_a_real_drop_does(table):
    actor, hand = await db(heads_up_hand)(table)
    deadline = hand.turn_deadline
    first = await connected(actor, table.id)
    await answered(first)
    second = await connected(actor, table.id)  # a second tab, the first still open
    await answered(second)
    await db(hand.refresh_from_db)()
    assert (hand.turn_deadline, hand.turn_bonus_used) == (deadline, False)

    await first.ws.disconnect()  # the second tab is still connected: no drop
    seat = await db(Seat.objects.get)(table=table, player=actor)
    assert (seat.dropped_at, seat.dropped_turn) == (None, None)
    await second.ws.disconnect()  # the last one: dropped, on their own turn
    await db(seat.refresh_from_db)()
    assert seat.dropped_at is not None and seat.dropped_turn == hand.turn_version

    back = await connected(actor, table.id)
    turn = await back.until(lambda m: m.get("type") == "turn")
    await db(hand.refresh_from_db)()
    assert hand.turn_bonus_used
    assert (hand.turn_deadline - deadline).total_seconds() == table.reconnect_bonus_seconds
    assert turn["turn"] == hand.turn_version and turn["deadline"] == hand.turn_deadline.isoformat()
    await db(seat.refresh_from_db)()
    assert (seat.dropped_at, seat.dropped_turn) == (None, None)
    await back.ws.disconnect()


async def test_a_tab_on_another_web_process_counts_as_open(table):
    """A socket held by another web process is in the player's presence group only (the
    channel of a consumer this process never saw): closing the one here is no drop."""
    actor, _hand = await db(heads_up_hand)(table)
    presence = player_presence_group(table.id, actor.id)
    elsewhere = "specific.other-process!tab"
    layer = get_channel_layer()
    await layer.group_add(presence, elsewhere)
    here = await connected(actor, table.id)
    await answered(here)
    await here.ws.disconnect()
    seat = await db(Seat.objects.get)(table=table, player=actor)
    assert (seat.dropped_at, seat.dropped_turn) == (None, None)

    await layer.group_discard(presence, elsewhere)  # the other tab closed there
    again = await connected(actor, table.id)
    await answered(again)
    await again.ws.disconnect()
    await db(seat.refresh_from_db)()
    assert seat.dropped_at is not None


def test_a_drop_before_your_turn_earns_no_bonus_on_it(table):
    actor, hand = heads_up_hand(table)
    other = next(u for u in users_at(table).values() if u != actor)
    assert not play.seat_disconnected(table_id=table.id, user=other)  # not their turn
    play.hand_act(table_id=table.id, user=actor, kind="call")
    hand, state = current(table)
    assert users_at(table)[state.actor] == other
    assert not play.seat_reconnected(table_id=table.id, user=other)
    assert not Hand.objects.get(pk=hand.pk).turn_bonus_used


def test_a_drop_on_an_earlier_turn_of_yours_earns_no_bonus_on_a_later_one(table):
    actor, hand = heads_up_hand(table)
    players = users_at(table)
    assert play.seat_disconnected(table_id=table.id, user=actor)
    dropped_on = hand.turn_version
    play.hand_act(table_id=table.id, user=actor, kind="call")
    hand, state = current(table)
    while players[state.actor] != actor:  # the other player checks until it is theirs again
        play.hand_act(table_id=table.id, user=players[state.actor], kind="check")
        hand, state = current(table)
    assert hand.turn_version > dropped_on
    assert not play.seat_reconnected(table_id=table.id, user=actor)
    assert not Hand.objects.get(pk=hand.pk).turn_bonus_used
    assert Seat.objects.get(table=table, player=actor).dropped_turn is None  # forgotten


def test_back_after_the_deadline_earns_no_bonus_and_the_timeout_rule_applies(table):
    """RULES §5: the bonus is for a player who reconnects before their time is out. One
    back after the deadline, before the late timeout has run, gets no extra time."""
    actor, hand = heads_up_hand(table)
    assert play.seat_disconnected(table_id=table.id, user=actor)
    Hand.objects.filter(pk=hand.pk).update(turn_deadline=timezone.now() - timedelta(seconds=1))
    assert not play.seat_reconnected(table_id=table.id, user=actor)
    after = Hand.objects.get(pk=hand.pk)
    assert not after.turn_bonus_used
    assert after.turn_deadline < timezone.now()
    assert play.turn_timeout(table_id=table.id, hand_id=hand.pk, turn=after.turn_version)


async def test_a_message_to_a_socket_closed_meanwhile_is_dropped_and_the_drop_recorded(table):
    """Daphne raises for a send to a connection the client has just closed (autobahn's
    `Disconnected`, before its disconnect reaches the consumer): the stream may be on its
    way to any socket then. The consumer drops the message and goes on to the disconnect,
    which records the player's drop (it had ended with the exception, the drop unrecorded)."""
    actor, _hand = await db(heads_up_hand)(table)
    closed = asyncio.Event()
    refused: list[dict] = []

    async def like_daphne(scope, receive, send):
        async def send_unless_closed(message):
            if closed.is_set() and message["type"] == "websocket.send":
                refused.append(message)
                raise Disconnected("Attempt to send on a closed protocol")
            await send(message)

        await router(scope, receive, send_unless_closed)

    client = await connected(actor, table.id, app=like_daphne)
    await answered(client)
    closed.set()  # the client is gone; its disconnect is still on its way
    await asyncio.to_thread(
        events._publish, table.id, [TableMessage(client.version + 1, {"type": "probe"})]
    )
    async with asyncio.timeout(5):
        while not refused:
            await asyncio.sleep(0.01)
    await client.ws.disconnect()
    seat = await db(Seat.objects.get)(table=table, player=actor)
    assert seat.dropped_at is not None
