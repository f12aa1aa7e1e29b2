"""While Redis is away nobody sees the tables: the timer loop holds every clock, and gives
the turns their time back when it returns (issue 46, finding 14; tables/stream_outage.py).

On the real Redis and PostgreSQL: the outages are a redis-server of the test's own that
it stops and starts (`private_redis`), or a Redis URL on a port nothing listens on; the
system Redis is never stopped. The timer loop runs in a thread of the test (the suite's
own loop, on the system Redis, is stopped for the module).
"""

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db import connection, transaction
from django.utils import timezone

from poker_room.routing import websocket_urlpatterns
from tables import events
from tables.events import PublishFailures, TableMessage
from tables.models import Hand, HandEvent, HandStatus, Heartbeat, StreamOutage, Table
from tables.selectors import table_snapshot
from tables.services import command
from tables.services.command import table_lock
from tables.services.turn_resume import RESYNC_ALLOWANCE, turn_resume
from tables.stream_outage import Stream, StreamWatch, stream_outage_open
from tables.timers import HEARTBEAT, HEARTBEAT_EVERY, timers_loop, timers_resume, timers_run_due
from tests.conftest import free_port, wait_for
from tests.kit import StakeLevelFactory, TableFactory, current, deal, seat_players
from tests.tables.test_run_it_twice_ws import all_in_heads_up

pytestmark = pytest.mark.usefixtures("timers_stopped")

ACTION, BANK = 60, 20  # a long clock: only the test brings a deadline near


def table_with_a_turn(**fields) -> tuple[Table, Hand]:
    """A table with two players and a hand dealt, its first turn on the long clock."""
    table = TableFactory(
        stake_level=StakeLevelFactory(),
        seats=6,
        action_seconds=ACTION,
        time_bank_seconds=BANK,
        next_hand_at=timezone.now() + timedelta(hours=1),
        **fields,
    )
    seat_players(table, 2)
    deal(table)
    hand, _state = current(table)
    return table, hand


def timeouts_of(hand: Hand) -> int:
    return HandEvent.objects.filter(hand=hand, type="timed_out").count()


@contextlib.contextmanager
def timer_loop() -> Iterator[None]:
    """The room's timer loop (`timers_loop`), in a thread of the test, until the block ends."""
    stopping = threading.Event()

    def run() -> None:
        try:
            timers_loop(stop=stopping.is_set, tables_at_once=2)
        finally:
            connection.close()

    thread = threading.Thread(target=run, name="test timer loop")
    thread.start()
    try:
        yield
    finally:
        stopping.set()
        thread.join(timeout=60)
        assert not thread.is_alive()


def beat_since(moment: datetime) -> bool:
    """Whether the loop led (and so ran, or held, its passes) at `moment` and since: it
    beat once at least a heartbeat's interval after it."""
    return Heartbeat.objects.filter(name=HEARTBEAT, at__gte=moment + HEARTBEAT_EVERY).exists()


def led_on(what: str) -> None:
    """Wait until the loop has led (run, or held, its passes) from now on."""
    now = timezone.now()
    wait_for(lambda: beat_since(now), timeout=30, what=what)


def deadline_passes_during_the_outage(hand: Hand) -> datetime:
    """Bring the turn's deadline to just ahead (a short clock), inside the outage that
    is on; wait until the loop has led past it. Returns it."""
    outage = stream_outage_open()
    assert outage is not None and outage.back_at is None
    deadline = timezone.now() + timedelta(seconds=1)
    Hand.objects.filter(pk=hand.pk).update(turn_deadline=deadline)
    wait_for(lambda: beat_since(deadline), timeout=30, what="the loop leads past the deadline")
    return deadline


def assert_given_a_fresh_clock(hand: Hand, *, turn: int, deadline: datetime) -> StreamOutage:
    """The outage ended with the turn given its clock again: the same turn, never timed
    out, at least what it had left when the outage began (the whole clock, here)."""
    outage = StreamOutage.objects.get()
    hand.refresh_from_db()
    assert (hand.status, hand.turn_version, timeouts_of(hand)) == (HandStatus.IN_PROGRESS, turn, 0)
    had_left = deadline - outage.started_at
    assert had_left > timedelta(0)
    assert hand.turn_deadline - outage.back_at >= had_left
    assert hand.turn_deadline >= outage.back_at + timedelta(seconds=ACTION + BANK)
    return outage


@pytest.mark.django_db(transaction=True)
def test_a_turn_whose_deadline_passes_while_redis_is_down_is_not_timed_out(private_redis, settings):
    """RULES §5 with a Redis outage: the turn whose deadline passes during it is neither
    timed out nor dealt past, and gets a fresh clock once Redis is back; a hand due then
    is dealt only after. The loop is restarted in the middle of the outage: it finds the
    outage where the first left it (the database), and resumes from when it began."""
    settings.REDIS_URL = private_redis.url  # the tables' stream, which the loop asks
    table, hand = table_with_a_turn()
    turn = hand.turn_version
    waiting = TableFactory(
        stake_level=table.stake_level, seats=6, next_hand_at=timezone.now() + timedelta(hours=1)
    )
    seat_players(waiting, 2)

    with timer_loop():
        led_on("the loop leads")
        private_redis.stop()
        first = wait_for(stream_outage_open, timeout=30, what="the loop sees the outage")
        deadline = deadline_passes_during_the_outage(hand)
        Table.objects.filter(pk=waiting.pk).update(next_hand_at=timezone.now())
        led_on("the loop leads past the deal due")
    assert timeouts_of(hand) == 0
    assert not Hand.objects.filter(table=waiting).exists()

    with timer_loop():  # a loop (re)started during the outage
        led_on("the new loop leads")
        assert stream_outage_open() == first  # the same outage, from the same start
        assert timeouts_of(hand) == 0
        private_redis.start()
        wait_for(
            lambda: StreamOutage.objects.filter(ended_at__isnull=False).exists(),
            timeout=30,
            what="the turns given their time back",
        )
        outage = assert_given_a_fresh_clock(hand, turn=turn, deadline=deadline)
        assert outage.started_at == first.started_at <= deadline
        # What a viewer's resync reads: the new deadline.
        snapshot = table_snapshot(table=Table.objects.get(pk=table.pk), user=None)
        assert snapshot["hand"]["deadline"] == hand.turn_deadline.isoformat()
        # The hand held back is dealt now.
        wait_for(lambda: Hand.objects.filter(table=waiting).exists(), what="the held deal")


def checked_up(watch: StreamWatch) -> Stream:
    """The watch's next check that finds Redis answering (it probes every PROBE_EVERY)."""

    def check() -> Stream | None:
        seen = watch.check(now=timezone.now())
        return None if seen.down else seen

    return wait_for(check, what="the probe finds Redis answering")


@pytest.mark.django_db(transaction=True)
def test_a_table_whose_resume_cannot_run_keeps_its_turn_and_the_outage_open(settings):
    """The passes one by one, as the loop runs them, with a Redis on a closed port and
    then the system's. A table whose lock is held when the stream is back cannot be
    resumed: its turn is kept out of the pass (not timed out) and the outage stays open
    until it is resumed; another table's is resumed at once."""
    redis_url = settings.REDIS_URL
    busy_table, busy_hand = table_with_a_turn()
    _free_table, free_hand = table_with_a_turn()
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    first_watch = StreamWatch()
    assert first_watch.check(now=timezone.now()).down
    outage = stream_outage_open()
    # Both deadlines passed during the outage.
    past = timezone.now() + timedelta(milliseconds=1)
    Hand.objects.filter(pk__in=[busy_hand.pk, free_hand.pk]).update(turn_deadline=past)
    wait_for(lambda: timezone.now() > past)
    # A loop that takes over finds the same outage.
    watch = StreamWatch()
    assert watch.check(now=timezone.now()).outage == outage
    assert StreamOutage.objects.count() == 1

    settings.REDIS_URL = redis_url
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    held = threading.Event()
    release = threading.Event()

    def hold_the_lock() -> None:
        try:
            with transaction.atomic():
                table_lock(table_id=busy_table.id)
                held.set()
                release.wait(timeout=60)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    try:
        held.wait(timeout=30)
        seen = checked_up(watch)
        assert seen.outage == outage
        resumed = timers_resume(outage=seen.outage)
        assert (resumed.resumed, resumed.pending) == (1, frozenset({busy_table.id}))
    finally:
        release.set()
        holder.join(timeout=60)
    # Its lock free now and its deadline past, the table not resumed is kept out of the
    # pass all the same (as the loop passes it `pending`).
    assert timers_run_due(now=timezone.now(), resting=resumed.pending).timeouts == 0
    assert timeouts_of(busy_hand) == 0
    assert stream_outage_open() == outage
    resumed = timers_resume(outage=checked_up(watch).outage)
    assert (resumed.resumed, resumed.pending) == (1, frozenset())
    assert stream_outage_open() is None
    for hand in (busy_hand, free_hand):
        assert_given_a_fresh_clock(hand, turn=hand.turn_version, deadline=past)
    assert checked_up(StreamWatch()).outage is None
    assert timers_run_due(now=timezone.now()).timeouts == 0


@pytest.mark.django_db
def test_a_question_whether_to_run_it_twice_gets_its_own_clock_again(monkeypatch):
    """The question is a turn on the action clock alone (no time bank): resumed on that
    clock, asked again with the same turn; resumed twice, it is left alone the second
    time. A turn already out when the outage began is left to the timeout rule."""
    table, _ = all_in_heads_up(action_seconds=7)
    hand, _state = current(table)
    sent: list[TableMessage] = []
    monkeypatch.setattr(
        command, "publish_on_commit", lambda *, table_id, messages: sent.extend(messages)
    )
    back = timezone.now()
    since = back - timedelta(seconds=30)
    assert turn_resume(table_id=table.id, hand_id=hand.id, since=since, back_at=back)
    turn = hand.turn_version
    hand.refresh_from_db()
    clock = timedelta(seconds=7) + RESYNC_ALLOWANCE
    assert back + clock <= hand.turn_deadline <= timezone.now() + clock
    assert [message.public for message in sent] == [
        {
            "type": "run_twice_ask",
            "hand": hand.id,
            "turn": turn,
            "deadline": hand.turn_deadline.isoformat(),
            "seats": [2, 1],
        }
    ]
    assert hand.turn_version == turn
    assert not turn_resume(table_id=table.id, hand_id=hand.id, since=since, back_at=back)
    assert len(sent) == 1

    Hand.objects.filter(pk=hand.pk).update(turn_deadline=since - timedelta(seconds=1))
    assert not turn_resume(table_id=table.id, hand_id=hand.id, since=since, back_at=back)


def publishes(count: int, table_id: int) -> None:
    for version in range(1, count + 1):
        with transaction.atomic():
            events.publish_on_commit(
                table_id=table_id, messages=[TableMessage(version, {"type": "probe"})]
            )


@pytest.mark.django_db(transaction=True)
def test_failed_publishes_are_logged_in_a_few_lines(settings, caplog, monkeypatch):
    """Sixty commands publishing into a Redis that is down: the first failure is logged
    with its traceback, the others counted (a line every ten seconds at most), and one
    line says when publishing works again."""
    monkeypatch.setattr(events, "PUBLISH_FAILURES", PublishFailures())  # this test's alone
    caplog.set_level(logging.INFO, logger="tables.events")
    redis_url = settings.REDIS_URL
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    started = time.monotonic()
    publishes(60, table_id=1)
    lasted = time.monotonic() - started
    lines = [r for r in caplog.records if r.name == "tables.events"]
    assert lines[0].exc_info is not None and "a publish failed" in lines[0].getMessage()
    assert all(line.exc_info is None for line in lines[1:])
    assert len(lines) <= 1 + int(lasted // events.PUBLISH_FAILURES_LOG_EVERY)
    assert not any("in on_commit()" in r.getMessage() for r in caplog.records)

    settings.REDIS_URL = redis_url
    publishes(2, table_id=1)
    back = [r.getMessage() for r in caplog.records if r.name == "tables.events"][len(lines) :]
    assert len(back) == 1
    assert back[0].startswith("tables' stream: publishing works again, after 60 failed publishes")


def test_publish_failures_are_counted_a_line_an_interval(caplog):
    """The same, on a clock the test moves: a thousand failures over 35 s are 4 lines."""
    caplog.set_level(logging.INFO, logger="tables.events")
    now = [0.0]
    failures = PublishFailures(log_every=10.0, clock=lambda: now[0])
    for step in range(1000):
        now[0] = step * 0.035
        failures.failed(ConnectionError("Connection refused"))
    failures.worked()
    failures.worked()  # working on: nothing more to say
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 5, lines
    assert caplog.records[0].exc_info is not None
    counted = [int(line.split()[2]) for line in lines[1:4]]
    assert sum(counted) <= 999 and all(line.startswith("tables' stream: ") for line in lines)
    assert lines[4].startswith("tables' stream: publishing works again, after 1000 failed")


@pytest.mark.django_db(transaction=True)
async def test_a_viewer_sees_the_turns_new_deadline_after_redis_comes_back(private_redis, settings):
    """A socket watching a table through an outage: when Redis is back its feed resyncs
    it, and what it is shown (the snapshot, or the resume's `turn` after it) has the turn's
    new deadline."""
    room = settings.CHANNEL_LAYERS["default"]
    host = {**room["CONFIG"]["hosts"][0], "address": private_redis.url}
    settings.CHANNEL_LAYERS = {
        "default": {**room, "CONFIG": {**room["CONFIG"], "hosts": [host], "prefix": "outage"}}
    }
    settings.REDIS_URL = private_redis.url
    table, hand = await database_sync_to_async(table_with_a_turn)()
    socket = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/tables/{table.id}/")
    connected, _ = await socket.connect()
    assert connected
    first = await socket.receive_json_from(timeout=10)
    assert first["hand"]["deadline"] == hand.turn_deadline.isoformat()

    with timer_loop():
        await database_sync_to_async(led_on)("the loop leads")
        await asyncio.to_thread(private_redis.stop)
        await database_sync_to_async(wait_for)(stream_outage_open, timeout=30, what="the outage")
        await database_sync_to_async(deadline_passes_during_the_outage)(hand)
        await asyncio.to_thread(private_redis.start)

        def resumed_deadline() -> str | None:
            if StreamOutage.objects.filter(ended_at__isnull=False).exists():
                return Hand.objects.get(pk=hand.pk).turn_deadline.isoformat()
            return None

        deadline = await database_sync_to_async(wait_for)(
            resumed_deadline, timeout=30, what="the turn resumed"
        )
        shown = None
        async with asyncio.timeout(30):
            while shown != deadline:
                message = await socket.receive_json_from(timeout=30)
                if message["type"] == "snapshot":
                    shown = message["hand"]["deadline"]
                elif message["type"] == "turn":
                    shown = message["deadline"]
    await socket.disconnect()
