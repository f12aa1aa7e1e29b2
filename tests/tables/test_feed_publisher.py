"""The feed's publisher (tables/feed_publisher.py): a command hands its messages over and
does not wait for Redis; the publisher publishes them in the order handed over, whatever
piled up meanwhile together; one table's message that cannot be published, a Redis that
fails or a queue past its bound costs only what it must; a forked child publishes from a
thread of its own. On a private Redis, frozen (SIGSTOP) to hold a publish in flight."""

import contextlib
import os
import signal
import time
from collections.abc import Iterator

import pytest
import redis

from tables import feed, feed_publisher
from tables.events import TableMessage, messages_from_group
from tables.feed_publisher import publisher
from tables.models import Seat
from tables.services import play
from tests.kit import StakeLevelFactory, current, deal, table_with_players

TABLES = (987_001, 987_002)  # tables the test database has not


@pytest.fixture
def room_redis(private_redis, settings):
    """The publisher's Redis is this test's own."""
    settings.REDIS_URL = private_redis.url
    assert publisher.flush(timeout=10)  # nothing of an earlier test still on its way
    yield private_redis
    os.kill(private_redis.proc.pid, signal.SIGCONT)  # whatever the test left
    publisher.flush(timeout=10)


@contextlib.contextmanager
def frozen(server) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """The Redis server stopped in its tracks: a publish sent meanwhile waits for it."""
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)


def listening(url: str, *table_ids: int) -> "redis.client.PubSub":
    listener = redis.Redis.from_url(url).pubsub(ignore_subscribe_messages=True)
    listener.subscribe(*(feed.feed_channel(table_id) for table_id in table_ids))
    listener.tables = table_ids  # type: ignore[attr-defined]
    for _ in table_ids:
        assert listener.get_message(timeout=2) is None  # the subscription's confirmation
    return listener


def heard(listener: "redis.client.PubSub", count: int) -> list[tuple[int, int]]:
    """(table, version) of the next `count` messages, as a web process decodes them."""
    tables = {feed.feed_channel(t).encode(): t for t in TABLES + tuple(listener.tables)}
    got: list[tuple[int, int]] = []
    deadline = time.monotonic() + 10
    while len(got) < count and time.monotonic() < deadline:
        message = listener.get_message(timeout=0.5)
        if message is None:
            continue
        table_id = tables[message["channel"]]
        group = feed.group_message(message["data"], table_id)
        got += [(table_id, sent.version) for sent in messages_from_group(group)]
    return got


def nothing_more(listener: "redis.client.PubSub") -> bool:
    return listener.get_message(timeout=0.5) is None


def probe(version: int) -> TableMessage:
    return TableMessage(version=version, public={"type": "probe"})


@pytest.mark.django_db(transaction=True)
def test_a_command_hands_its_messages_over_and_does_not_wait_for_redis(room_redis):
    """With Redis frozen, an act commits and answers; its messages wait in the publisher,
    and reach the table's viewers once Redis is back."""
    table, _ = table_with_players(StakeLevelFactory(), 3)
    deal(table)
    hand, state = current(table)
    turn = hand.turn_version
    actor = Seat.objects.get(table=table, number=state.actor).player
    kind = "check" if state.legal_actions().can_check else "call"
    listener = listening(room_redis.url, table.id)
    version = type(table).objects.get(pk=table.pk).event_seq
    with frozen(room_redis):
        play.hand_act(table_id=table.id, user=actor, kind=kind)
        hand.refresh_from_db()
        assert hand.turn_version == turn + 1  # committed and answered
        assert not publisher.flush(timeout=0.2)  # its messages still on their way
    assert publisher.flush(timeout=10)
    acted = type(table).objects.get(pk=table.pk).event_seq
    assert acted > version
    expected = [(table.id, v) for v in range(version + 1, acted + 1)]
    assert heard(listener, acted - version) == expected
    assert nothing_more(listener)


def test_what_piles_up_is_published_in_the_order_handed_over(room_redis):
    listener = listening(room_redis.url, *TABLES)
    with frozen(room_redis):
        publisher.put(TABLES[0], [probe(1)])  # in flight, waiting for Redis
        for version in range(2, 52):  # these pile up behind it
            publisher.put(TABLES[version % 2], [probe(version)])
        assert not publisher.flush(timeout=0.2)
    assert publisher.flush(timeout=10)
    expected = [(TABLES[0], 1)] + [(TABLES[v % 2], v) for v in range(2, 52)]
    assert heard(listener, 51) == expected
    assert nothing_more(listener)


def test_a_message_that_cannot_be_published_costs_only_its_own_table(room_redis, caplog):
    listener = listening(room_redis.url, *TABLES)
    unreadable = TableMessage(version=7, public={"type": "probe", "what": object()})
    with frozen(room_redis):
        publisher.put(TABLES[0], [probe(1)])
        publisher.put(TABLES[1], [unreadable])  # in one batch with the next
        publisher.put(TABLES[0], [probe(2)])
    assert publisher.flush(timeout=10)
    assert heard(listener, 2) == [(TABLES[0], 1), (TABLES[0], 2)]
    assert nothing_more(listener)
    assert f"table {TABLES[1]}: messages that cannot be published" in caplog.text


def test_a_publish_redis_fails_is_logged_and_the_publisher_goes_on(room_redis, caplog):
    room_redis.stop()
    publisher.put(TABLES[0], [probe(1)])
    assert publisher.flush(timeout=20)  # given up
    assert f"publishing the messages of tables [{TABLES[0]}] failed" in caplog.text
    room_redis.start()
    listener = listening(room_redis.url, TABLES[0])
    publisher.put(TABLES[0], [probe(2)])
    assert publisher.flush(timeout=10)
    assert heard(listener, 1) == [(TABLES[0], 2)]


def test_past_its_bound_the_queue_drops_new_messages_and_says_so(room_redis, caplog, monkeypatch):
    monkeypatch.setattr(feed_publisher, "QUEUE_MAX", 3)
    listener = listening(room_redis.url, TABLES[0])
    with frozen(room_redis):
        for version in range(1, 6):
            publisher.put(TABLES[0], [probe(version)])
    assert publisher.flush(timeout=10)
    assert heard(listener, 3) == [(TABLES[0], 1), (TABLES[0], 2), (TABLES[0], 3)]
    assert nothing_more(listener)
    assert caplog.text.count(f"table {TABLES[0]}: messages dropped, 3 waiting") == 2


def test_a_forked_child_publishes_from_a_thread_of_its_own(room_redis):
    """A Celery worker's child is forked from a parent whose publisher may have started:
    the child has no thread of its parent's, and must not wait for one."""
    listener = listening(room_redis.url, TABLES[0])
    publisher.put(TABLES[0], [probe(1)])  # the parent's thread is running
    assert publisher.flush(timeout=10)
    child = os.fork()
    if child == 0:  # the child: its outcome is its exit status
        try:
            publisher.put(TABLES[0], [probe(2)])
            os._exit(0 if publisher.flush(timeout=10) else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert heard(listener, 2) == [(TABLES[0], 1), (TABLES[0], 2)]
