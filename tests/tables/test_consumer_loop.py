"""The table socket's own loop (`TableConsumer.__call__` on poker_room/socket_loop.py): one
inbox for the socket's frames and the table's feed, dispatched one at a time.

What Channels' loop (`await_many_dispatch` over the socket, the channel layer and the
inbox) did and the inbox loop must keep doing:

* the consumer's channel is put back in the player's presence group soon after a Redis
  restart (the channel layer's `receive` did it, poker_room/channel_layer.py), or closing
  one of two tabs records a drop on the player's turn and a new tab earns the bonus;
* nothing is read from the socket after its `websocket.disconnect` (granian answers every
  later `receive` at once with another disconnect: the frames task then fills the inbox);
* a `receive` that raises ends the consumer (it hung, still fed the table's stream, never
  reading the socket again);
* a burst of frames does not hold the event loop: other tasks run between a few of them
  (Channels' loop yielded at every message; the inbox loop ran up to INBOX_SIZE handlers
  in a row, tens of milliseconds of a web process for every other socket).

Communicator-level, on the real PostgreSQL and Redis (a private redis-server for the
restart). No time is asserted: the burst test counts frames between two turns of another
task; the restart test waits at most a third of `group_refresh_interval` (60 s).
"""

import asyncio
import threading

import pytest
from channels.db import database_sync_to_async as db
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.db import connections, transaction

from cashier.selectors import wallet_balance
from poker_room.routing import websocket_urlpatterns
from tables import consumers, events, hop_order
from tables.bots.player import frame_messages
from tables.capacity import on_database_thread
from tables.engine.state import HandState
from tables.events import TableMessage, player_presence_group
from tables.hop_order import Urgency
from tables.models import Seat
from tests.kit import TableFactory
from tests.tables.test_consumer_hardening import answered, connected, heads_up_hand

pytestmark = pytest.mark.django_db(transaction=True)

router = URLRouter(websocket_urlpatterns)


@pytest.fixture
def table():
    return TableFactory(seats=6)


async def connected_spectator(app, table_id: int) -> WebsocketCommunicator:
    ws = WebsocketCommunicator(app, f"/ws/tables/{table_id}/")
    ws.scope["user"] = AnonymousUser()
    assert (await ws.connect())[0]
    assert (await ws.receive_json_from(timeout=5))["type"] == "snapshot"
    return ws


async def test_a_players_other_tab_still_counts_after_a_redis_restart(private_redis, settings):
    """A restarted Redis has lost the presence groups. The channel layer's `receive` put
    each consumer's channel back within seconds of Redis' return; the consumer reads it
    no more, and the layer's refresher alone (every `group_refresh_interval`, 60 s) would
    leave a minute in which closing one of two tabs finds no other: a drop recorded on
    the player's turn, everyone seeing them "disconnected", a tab opened next earning the
    bonus. The resync that follows Redis' return puts the channel back."""
    room = settings.CHANNEL_LAYERS["default"]
    host = {**room["CONFIG"]["hosts"][0], "address": private_redis.url}
    settings.CHANNEL_LAYERS = {
        "default": {**room, "CONFIG": {**room["CONFIG"], "hosts": [host], "prefix": "loop"}}
    }
    settings.REDIS_URL = private_redis.url  # the table's feed
    table = await db(TableFactory)(seats=6)
    actor, _hand = await db(heads_up_hand)(table)
    first = await connected(actor, table.id)
    await answered(first)
    second = await connected(actor, table.id)
    await answered(second)
    layer = get_channel_layer()
    presence = player_presence_group(table.id, actor.id)
    assert await layer.group_live_size(presence) == 2

    await asyncio.to_thread(private_redis.stop)
    await asyncio.sleep(1)
    await asyncio.to_thread(private_redis.start)
    for tab in (first, second):  # the feed is back: each tab gets its fresh snapshot
        await tab.until(lambda m, tab=tab: m.get("type") == "snapshot" and m is not tab.messages[0])
    try:
        async with asyncio.timeout(20):
            while await layer.group_live_size(presence) < 2:
                await asyncio.sleep(0.2)
    except TimeoutError:
        pass
    live = await layer.group_live_size(presence)

    await first.ws.disconnect()  # the second tab is open
    seat = await db(Seat.objects.get)(table=table, player=actor)
    await second.ws.disconnect()
    assert live == 2, f"20 s after Redis came back the player's presence counts {live} of 2 tabs"
    assert (seat.dropped_at, seat.dropped_turn) == (None, None), "a drop with a tab still open"


async def test_nothing_is_read_from_the_socket_after_its_disconnect(table):
    """After `websocket.disconnect` the loop stops reading (Channels' did). Granian 2.8
    answers every later `receive` at once with another disconnect: the frames task then
    put up to INBOX_SIZE of them in the inbox while the disconnect ran (its Redis and
    database round trips), and the table's messages to the socket were dropped, each
    logged."""
    read_after = 0
    gone = False

    async def like_granian(scope, receive, send):
        async def receive_again():
            nonlocal read_after, gone
            if gone:
                read_after += 1
                return {"type": "websocket.disconnect", "code": 1005}
            message = await receive()
            gone = message["type"] == "websocket.disconnect"
            return message

        await router(scope, receive_again, send)

    ws = await connected_spectator(like_granian, table.id)
    await ws.disconnect(timeout=10)
    assert ws.future.done()
    assert read_after == 0, f"{read_after} receives after the disconnect"


async def test_a_failing_receive_ends_the_consumer(table):
    """A server's `receive` that raises ended Channels' loop with the error. The frames
    task now dies alone and the loop waits on the inbox for ever: the socket still gets
    the table's stream, its commands are never read again, and nothing ends it."""

    async def failing(scope, receive, send):
        async def receive_or_fail():
            message = await receive()
            if message.get("text") == "fail":  # here the server's receive fails
                raise RuntimeError("the server's receive failed")
            return message

        await router(scope, receive_or_fail, send)

    ws = await connected_spectator(failing, table.id)
    await ws.send_json_to({"cmd": "snapshot", "seq": 1})
    assert (await ws.receive_json_from(timeout=5))["type"] == "snapshot"
    assert (await ws.receive_json_from(timeout=5))["type"] == "ack"
    await ws.send_to(text_data="fail")
    await asyncio.wait({ws.future}, timeout=5)
    ended = ws.future.done()
    if not ended:
        ws.future.cancel()
        await asyncio.wait({ws.future}, timeout=5)
    if ws.future.done() and not ws.future.cancelled():
        ws.future.exception()  # retrieved (ending with the error is what is asked)
    assert ended, "the consumer is still running with nothing reading its socket"


async def test_a_burst_of_frames_does_not_hold_the_event_loop(table):
    """Daphne puts every frame of one read (64 KB: hundreds of frames) in the socket's
    queue at once. Handlers that do not wait (a rate-limited or malformed frame's error
    is written straight to the transport) ran back to back from the inbox, up to
    INBOX_SIZE of them before any other task of the process: 50-60 ms with 4 KB frames
    here, Channels' loop about 5. Between two turns of another task, at most a burst's
    worth (RATE_BURST) of frames may be handled."""
    ws = await connected_spectator(router, table.id)
    frames = 500
    steps: list[int] = []
    done = False

    async def another_task() -> None:
        last = ws.output_queue.qsize()
        while not done:
            await asyncio.sleep(0)
            now = ws.output_queue.qsize()
            steps.append(now - last)
            last = now

    other = asyncio.ensure_future(another_task())
    await asyncio.sleep(0)
    for _ in range(frames):  # as daphne's onMessage does for each frame of a read
        ws.input_queue.put_nowait({"type": "websocket.receive", "text": "x"})
    async with asyncio.timeout(20):
        while ws.output_queue.qsize() < frames:
            await asyncio.sleep(0.01)
    done = True
    await other
    await ws.disconnect()
    assert max(steps) <= consumers.RATE_BURST, f"{max(steps)} frames handled in one turn"


async def test_the_stream_reaches_a_socket_while_its_own_command_waits(table, settings):
    """A player's command waiting for the table's lock (held here by another transaction,
    as a burst of other commands would hold the database thread) does not hold back the
    table's stream on their socket: their turn would come while they cannot see it."""
    settings.TABLE_LOCK_TIMEOUT_MS = 4_000
    actor, _ = await db(heads_up_hand)(table)
    client = await connected(actor, table.id)
    await client.drain()
    locked, release = threading.Event(), threading.Event()

    def hold_the_table_lock() -> None:
        with connections["default"].cursor() as cursor, transaction.atomic():
            cursor.execute("SELECT id FROM tables_table WHERE id = %s FOR UPDATE", [table.id])
            locked.set()
            release.wait(10)
        connections["default"].close()

    holder = asyncio.get_running_loop().run_in_executor(None, hold_the_table_lock)
    assert await asyncio.to_thread(locked.wait, 10)
    client.seq += 1
    await client.ws.send_json_to({"cmd": "sit_out", "seq": client.seq})
    await publish_probe(table.id, client.version + 1)
    streamed = frame_messages(await client.ws.receive_json_from(timeout=3))
    assert [m["type"] for m in streamed] == ["probe"]  # before the sit_out's answer
    release.set()
    await holder
    answer = await client.ws.receive_json_from(timeout=10)
    assert answer == {"type": "ack", "seq": client.seq}
    await client.ws.disconnect()


async def publish_probe(table_id: int, version: int) -> None:
    # Through the table's feed, as a command publishes (a sync call, after the commit).
    await asyncio.to_thread(events._publish, table_id, [TableMessage(version, {"type": "probe"})])


async def test_a_decision_goes_ahead_of_the_sockets_own_command_still_waiting(table):
    """The database thread busy (as in a burst of every player's sit-out and leave): a
    player's `sit_out`, then their `act`. The act is carried out first, not after the
    sit_out it came behind (whose wait ran the turn's clock out, issue #15)."""
    actor, hand = await db(heads_up_hand)(table)
    answers = await answers_with_the_thread_busy(
        table,
        actor,
        [{"cmd": "sit_out"}, {"cmd": "act", "action": "call", "turn": hand.turn_version}],
    )
    assert answers == [(2, "ack"), (1, "ack")]
    seat = await db(Seat.objects.get)(table=table, player=actor)
    assert seat.sit_out_after_hand


async def test_a_decision_does_not_go_ahead_of_the_sockets_own_leave(table):
    """A leave on your turn folds at once: the call sent after it must not be carried out
    first (chips in, then folded)."""
    actor, hand = await db(heads_up_hand)(table)
    seat = await db(Seat.objects.get)(table=table, player=actor)
    state = HandState.from_dict(hand.state)
    behind = state.stacks[state.seats.index(seat.number)]  # after the blind posted
    wallet = await db(wallet_balance)(user=actor)
    call = {"cmd": "act", "action": "call", "turn": hand.turn_version}
    # The call waits behind the leave in the socket's lane, not for the thread.
    answers = await answers_with_the_thread_busy(table, actor, [{"cmd": "leave"}, call], [1, 1])
    assert answers == [(1, "ack"), (2, "error")]
    await db(hand.refresh_from_db)()
    assert hand.status == "finished"
    assert not await db(Seat.objects.filter(table=table, player=actor).exists)()
    assert await db(wallet_balance)(user=actor) == wallet + behind  # no call went in


async def answers_with_the_thread_busy(
    table, user, commands: list[dict], hops: list[int] | None = None
) -> list[tuple]:
    """Send `commands` (seq 1, 2, ...) while the database thread is held busy, each once
    `hops` (by default 1, 2, ...) wait for the thread after the one before; then free
    it: the answers, in the order they came, as (seq, type)."""
    client = await connected(user, table.id)
    await client.drain()
    release = threading.Event()
    blockers = [
        asyncio.ensure_future(on_database_thread(release.wait, 10, urgency=Urgency.TABLE))
        for _ in range(hop_order.DEPTH)  # the hops the thread takes at once
    ]
    for seq, command in enumerate(commands, start=1):
        await client.ws.send_json_to({**command, "seq": seq})
        await asyncio.sleep(0.05)  # the consumer reads the frame
        await waiting_hops(seq if hops is None else hops[seq - 1])
    release.set()
    await asyncio.gather(*blockers)
    answers: list[tuple] = []
    while len(answers) < len(commands):
        for message in frame_messages(await client.ws.receive_json_from(timeout=10)):
            if message["type"] in ("ack", "error"):
                answers.append((message["seq"], message["type"]))
    await client.ws.disconnect()
    return answers


async def waiting_hops(count: int) -> None:
    """Until `count` hops wait for the database thread (the commands just sent)."""
    for _ in range(500):
        if hop_order.hop_order.waiting >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{hop_order.hop_order.waiting} hops wait, not {count}")


async def test_a_full_lane_refuses_the_next_command_and_never_holds_the_stream(table, monkeypatch):
    """With the database thread busy, a socket's lane fills: the next command is refused
    `rate_limited` at once (its seq unused), and the table's stream still arrives."""
    monkeypatch.setattr(consumers, "LANE_SIZE", 2)
    actor, _ = await db(heads_up_hand)(table)
    client = await connected(actor, table.id)
    await client.drain()
    release = threading.Event()
    blockers = [
        asyncio.ensure_future(on_database_thread(release.wait, 10, urgency=Urgency.TABLE))
        for _ in range(hop_order.DEPTH)
    ]
    # 1 waits for the thread, 2 and 3 fill the lane, 4 finds it full.
    for seq in range(1, 5):
        await client.ws.send_json_to({"cmd": "sit_out", "seq": seq})
        await asyncio.sleep(0.05)  # the consumer reads the frame
    refused = await client.ws.receive_json_from(timeout=3)
    assert (refused["type"], refused["seq"], refused["code"]) == ("error", 4, "rate_limited")
    await publish_probe(table.id, client.version + 1)
    streamed = frame_messages(await client.ws.receive_json_from(timeout=3))
    assert [m["type"] for m in streamed] == ["probe"]
    release.set()
    await asyncio.gather(*blockers)
    answered_seqs = set()
    while len(answered_seqs) < 3:
        for message in frame_messages(await client.ws.receive_json_from(timeout=10)):
            if message["type"] in ("ack", "error"):
                answered_seqs.add(message["seq"])
    assert answered_seqs == {1, 2, 3}
    await client.ws.send_json_to({"cmd": "snapshot", "seq": 4})  # 4 is still free
    answer = None
    while answer is None:
        for message in frame_messages(await client.ws.receive_json_from(timeout=10)):
            if message["type"] in ("ack", "error"):
                answer = message
    assert answer == {"type": "ack", "seq": 4}
    await client.ws.disconnect()
