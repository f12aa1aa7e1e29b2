"""The commands' messages published to the table's feed from a thread of its own, one per
process, so that no command waits for Redis.

A table command publishes its messages after its commit (tables/events.py). Published by
the thread that ran the command, each publish was a Redis round trip that thread waited
for, and then waited again for the GIL back from the event loop: on a web process's one
database thread, which runs every table command of the process, about a tenth of its
time under load (py-spy, issue #15), and a Redis that hung held it for the publish's
timeout at every command. Here the command's thread hands the messages over and goes
on; this thread turns them into the feed's form and publishes them, in the order they
were handed over, and whatever piled up meanwhile in one round trip (a pipeline).

Delivery stays at most once, and the order across processes is still the consumer's to
restore (tables/consumers.py). A process that dies with messages not yet published
loses them, as one that died between its commit and its publish did, and a publish
that fails is logged; in both cases the viewers see the gap and resync from the
database. While Redis hangs the messages wait, each batch for at most the publish's
timeout (`feed.PUBLISH_TIMEOUT`): past `QUEUE_MAX` waiting the oldest are dropped, and
any older than `STALE_AFTER` once Redis answers again are dropped unpublished, their
viewers having resynced by then.

The thread starts with the first hand-over, and again if it ever stopped; a forked
child starts afresh (nothing of its parent's lock, thread or queue). A process that
exits in good order gives it a second to publish what is still waiting.
"""

import atexit
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

import redis

from tables import feed

logger = logging.getLogger(__name__)

# Commands' messages waiting to be published, at most: past it the oldest are dropped
# (their viewers resync), rather than the process's memory filled while Redis hangs.
QUEUE_MAX = 10_000
# Commands' messages published in one round trip, at most.
BATCH_MAX = 100
# Messages that waited longer are dropped unpublished: by then their viewers have taken
# the feed for lost and resynced from the database (tables/feed.py), and old messages
# published first would hold back the new ones past the consumers' reorder wait.
STALE_AFTER = feed.SILENCE_LIMIT + feed.READ_WAKE


class Wire(Protocol):
    """A message as a command hands it over (tables.events.TableMessage)."""

    def to_wire(self) -> dict[str, Any]: ...


class _Item(NamedTuple):
    """One command's messages, handed over with the Redis client and channel of that
    moment's settings, and when."""

    client: redis.Redis
    channel: str
    table_id: int
    messages: Sequence[Wire]
    handed_at: float


class FeedPublisher:
    """Publishes what commands hand over (`put`), in order, from a thread of its own."""

    def __init__(self) -> None:
        self._reset()
        # A child forked while another thread held the lock would wait for it for ever;
        # nor has it its parent's thread, and what waited was the parent's to publish.
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._waiting: deque[_Item] = deque()
        self._publishing = 0  # taken by the thread, not yet published or given up
        self._dropped = 0  # since the thread last said so
        self._thread: threading.Thread | None = None

    def put(self, table_id: int, messages: Sequence[Wire]) -> None:
        """Hand one command's messages over for publishing; never waits for Redis."""
        item = _Item(
            feed.redis_client(), feed.feed_channel(table_id), table_id, messages, time.monotonic()
        )
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                thread = threading.Thread(target=self._run, name="feed-publisher", daemon=True)
                thread.start()  # before it is counted on: one that failed to start is not
                self._thread = thread
            if len(self._waiting) >= QUEUE_MAX:
                self._waiting.popleft()
                self._dropped += 1
            self._waiting.append(item)
            self._changed.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything handed over is published or given up; whether it was
        within `timeout` seconds."""
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._waiting and not self._publishing, timeout
            )

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._waiting)
                batch = [self._waiting.popleft() for _ in range(min(BATCH_MAX, len(self._waiting)))]
                self._publishing = len(batch)
                dropped, self._dropped = self._dropped, 0
            if dropped:
                logger.error("table feed: %d commands' messages dropped, too many waiting", dropped)
            try:
                _publish(batch)
            except BaseException:  # the thread goes on, whatever one batch met
                tables = sorted({item.table_id for item in batch})
                logger.exception("table feed: publishing the messages of tables %s failed", tables)
            finally:
                with self._changed:
                    self._publishing = 0
                    self._changed.notify_all()


def _publish(batch: list[_Item]) -> None:
    """Publish the batch in order, in one round trip to each Redis (there is one, but for a
    test's own). A message that cannot be put in the feed's form is one table's fault:
    logged and left out, not the batch with it; stale ones are left out (`STALE_AFTER`)."""
    now = time.monotonic()
    fresh = [item for item in batch if now - item.handed_at <= STALE_AFTER]
    if len(fresh) < len(batch):
        logger.warning(
            "table feed: %d commands' messages dropped, older than %s s",
            len(batch) - len(fresh),
            STALE_AFTER,
        )
    start = 0
    while start < len(fresh):
        client = fresh[start].client
        end = start
        while end < len(fresh) and fresh[end].client is client:
            end += 1
        pipeline = client.pipeline(transaction=False)
        for item in fresh[start:end]:
            try:
                wires = [message.to_wire() for message in item.messages]
            except Exception:
                logger.exception("table %s: messages that cannot be published", item.table_id)
                continue
            pipeline.publish(item.channel, feed.payload(item.table_id, wires))
        pipeline.execute()
        start = end


publisher = FeedPublisher()
# A process that ends in good order (a web process stopped for a restart) publishes what
# its last commands handed over, if Redis lets it within a second.
atexit.register(publisher.flush, 1.0)
