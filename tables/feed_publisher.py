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
restore (tables/consumers.py): a process that dies with messages not yet published
loses them, as one that died between its commit and its publish did, and a publish
that fails is logged; in both cases the viewers see the gap and resync from the
database. Past `QUEUE_MAX` messages waiting (Redis hanging) new ones are dropped in the
same way, rather than filling the process's memory.

The thread starts with the first hand-over, and again in a forked child (a Celery
worker's), which has none of its parent's threads. A process that exits in good order
gives it a second to publish what is still waiting.
"""

import atexit
import logging
import os
import queue
import threading
from collections.abc import Sequence
from typing import Any, Protocol

import redis

from tables import feed

logger = logging.getLogger(__name__)

# Commands' messages waiting to be published, at most (see above).
QUEUE_MAX = 10_000
# Commands' messages published in one round trip, at most.
BATCH_MAX = 100


class Wire(Protocol):
    """A message as a command hands it over (tables.events.TableMessage)."""

    def to_wire(self) -> dict[str, Any]: ...


# What is handed over: the Redis client and channel, named when it is handed over (with
# the settings of that moment), the table, and its messages.
_Item = tuple[redis.Redis, str, int, Sequence[Wire]]


class FeedPublisher:
    """Publishes what commands hand over (`put`), in order, from a thread of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._pid: int | None = None
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._waiting = 0  # handed over, not yet published or given up

    def put(self, table_id: int, messages: Sequence[Wire]) -> None:
        """Hand one command's messages over for publishing; never waits for Redis."""
        item = (feed.redis_client(), feed.feed_channel(table_id), table_id, messages)
        with self._lock:
            if self._pid != os.getpid():
                self._start()
            if self._waiting >= QUEUE_MAX:
                logger.error(
                    "table %s: messages dropped, %d waiting to be published", table_id, QUEUE_MAX
                )
                return
            self._waiting += 1
            self._queue.put(item)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything this process handed over is published or given up;
        whether it was within `timeout` seconds."""
        with self._settled:
            return self._settled.wait_for(
                lambda: self._waiting == 0 or self._pid != os.getpid(), timeout
            )

    def _start(self) -> None:
        # The first hand-over of this process: a forked child's copy of its parent's
        # queue is served by no thread, and what waited in it was the parent's.
        self._pid, self._waiting, self._queue = os.getpid(), 0, queue.SimpleQueue()
        thread = threading.Thread(
            target=self._run, args=(self._queue,), name="feed-publisher", daemon=True
        )
        thread.start()

    def _run(self, items: "queue.SimpleQueue[_Item]") -> None:
        while True:
            batch = [items.get()]
            while len(batch) < BATCH_MAX:
                try:
                    batch.append(items.get_nowait())
                except queue.Empty:
                    break
            try:
                _publish(batch)
            except Exception:
                tables = sorted({table_id for _, _, table_id, _ in batch})
                logger.exception("table feed: publishing the messages of tables %s failed", tables)
            finally:
                with self._settled:
                    if items is self._queue:
                        self._waiting -= len(batch)
                        self._settled.notify_all()


def _publish(batch: list[_Item]) -> None:
    """Publish the batch in order, in one round trip to each Redis (there is one, but for a
    test's own). A message that cannot be put in the feed's form is one table's fault:
    logged and left out, not the batch with it."""
    start = 0
    while start < len(batch):
        client = batch[start][0]
        end = start
        while end < len(batch) and batch[end][0] is client:
            end += 1
        pipeline = client.pipeline(transaction=False)
        for _, channel, table_id, messages in batch[start:end]:
            try:
                wires = [message.to_wire() for message in messages]
            except Exception:
                logger.exception("table %s: messages that cannot be published", table_id)
                continue
            pipeline.publish(channel, feed.payload(table_id, wires))
        pipeline.execute()
        start = end


publisher = FeedPublisher()
# A process that ends in good order (a web process stopped for a restart) publishes what
# its last commands handed over, if Redis lets it within a second.
atexit.register(publisher.flush, 1.0)
