"""Broadcasting table events to the WebSocket consumers, only after the commit.

Every message a table sends (tables/messages.py) gets the next number of the table's
stream (`Table.event_seq`, STYLE §7). Each message carries its public form and, where
some viewers may see more (their own hole cards), the private form for each of those
players; a command's messages are published together, in one message of the table's
feed, each form as the JSON text its viewers are sent. The consumer picks the form its
viewer may see (`SentMessage.text_for`), so one ordered stream serves players and
spectators alike, and a card never leaves the server for a browser that may not see it.

The table's feed (tables/feed.py, Redis pub/sub) carries them to every web process that
has viewers of the table, at most once: a client that sees a gap in the numbers asks for
a fresh snapshot.

A publish that fails because Redis is away (`PublishFailures`) is not the command's
failure: it has committed, and its viewers resync once the feed is back. Each failure
used to be logged with its traceback (29 in 10 s in an outage, issue 46): a process now
logs the first of an outage with its traceback, then at most one line every
`PUBLISH_FAILURES_LOG_EVERY` counting the failures since, and one line when a publish
works again. (While the stream is down the timer loop times no turn out:
tables/stream_outage.py.)
"""

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from poker_room.channel_layer import REDIS_DOWN_ERRORS
from tables import feed

logger = logging.getLogger(__name__)

# At most one line this often (seconds) about a process's publishes failing.
PUBLISH_FAILURES_LOG_EVERY = 10.0


@dataclass(frozen=True)
class TableMessage:
    version: int
    public: dict[str, Any]
    # user id -> the form of the event that player may see instead of `public`
    private: dict[int, dict[str, Any]] = field(default_factory=dict)

    def for_user(self, user_id: int | None) -> dict[str, Any]:
        """The message as this viewer (None: a spectator) receives it."""
        body = self.private.get(user_id, self.public) if user_id is not None else self.public
        return {"v": self.version, **body}

    def to_wire(self) -> dict[str, Any]:
        """The message as the table's feed carries it: the JSON text of each form, made
        once here rather than by every web process that has viewers of the table (a
        turn has a form for each player dealt in). JSON-safe keys: the feed serialises
        with msgpack."""
        public = json.dumps(self.for_user(None))
        private = {str(uid): json.dumps(self.for_user(uid)) for uid in self.private}
        return {"version": self.version, "public": public, "private": private}


@dataclass(frozen=True)
class SentMessage:
    """A message as a web process receives it from the table's feed: its number and the
    JSON text of each of its forms, sent as they are."""

    version: int
    public: str
    # user id -> the text of the form that player sees instead of `public`
    private: dict[int, str]

    def text_for(self, user_id: int | None) -> str:
        """The JSON text this viewer (None: a spectator) is sent."""
        return self.private.get(user_id, self.public) if user_id is not None else self.public

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> "SentMessage":
        """The message of `TableMessage.to_wire`; ValueError if it is not one."""
        version, public, private = wire["version"], wire["public"], wire["private"]
        if (
            type(version) is not int
            or not isinstance(public, str)
            or not all(
                isinstance(uid, str) and uid.isdecimal() and isinstance(text, str)
                for uid, text in private.items()
            )
        ):
            raise ValueError("not a table message")
        return cls(
            version=version,
            public=public,
            private={int(uid): text for uid, text in private.items()},
        )


def messages_from_group(group_message: dict[str, Any]) -> list[SentMessage]:
    """The messages of one `table.messages` group message, decoded once per process.

    The table's feed reads a message once per process and hands the same dict to each
    of its viewers' consumers: the first to read it decodes it and keeps the result in
    it, so the messages are decoded once for all the viewers of the table this process
    serves.
    """
    decoded = group_message.get(_DECODED)
    if decoded is None:
        decoded = group_message[_DECODED] = [
            SentMessage.from_wire(wire) for wire in group_message["messages"]
        ]
    return decoded


_DECODED = "_decoded"  # never sent: it is added where the message was received


def player_presence_group(table_id: int, user_id: int) -> str:
    """The group of one player's sockets at a table, whichever web process holds them:
    when one closes, its members say whether another is still open."""
    return f"table.{table_id}.player.{user_id}"


class PublishFailures:
    """This process's publishes to the tables' stream failing for Redis being away, and
    what its log says of them (see the module's note). Thread-safe: commands publish from
    every thread of the process."""

    def __init__(
        self,
        *,
        log_every: float = PUBLISH_FAILURES_LOG_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log_every = log_every
        self._clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None  # the first failure of the outage (clock seconds)
        self._failed = 0  # publishes failed since then
        self._unlogged = 0  # of those, not yet counted in a line
        self._logged_at = 0.0

    def failed(self, error: BaseException) -> None:
        with self._lock:
            now = self._clock()
            if self._since is None:
                self._since, self._failed, self._unlogged, self._logged_at = now, 1, 0, now
                first, count = True, 0
            else:
                self._failed += 1
                self._unlogged += 1
                first, count = False, 0
                if now - self._logged_at >= self._log_every:
                    count, self._unlogged, self._logged_at = self._unlogged, 0, now
        if first:
            logger.error(
                "tables' stream: a publish failed (%s); the viewers resync when it works "
                "again. Further failures are counted, a line every %g s",
                error,
                self._log_every,
                exc_info=error,
            )
        elif count:
            logger.error("tables' stream: %d more publishes failed (the last: %s)", count, error)

    def worked(self) -> None:
        if self._since is None:  # the usual case: nothing to say, no lock taken
            return
        with self._lock:
            if self._since is None:
                return
            failed, lasted = self._failed, self._clock() - self._since
            self._since = None
        logger.warning(
            "tables' stream: publishing works again, after %d failed publishes over %.0f s",
            failed,
            lasted,
        )


PUBLISH_FAILURES = PublishFailures()


def publish_on_commit(*, table_id: int, messages: Sequence[TableMessage]) -> None:
    """Send the messages to the table's viewers once the current transaction commits."""
    if messages:
        # The command has committed: a Redis that is down must not turn its answer into
        # an error. Viewers see the gap and resync. Robust for anything else (Django
        # logs it). A function, not a partial: Django names a failing robust callback by
        # __qualname__.
        pending = list(messages)

        def publish() -> None:
            try:
                _publish(table_id, pending)
            except REDIS_DOWN_ERRORS as exc:
                PUBLISH_FAILURES.failed(exc)
            else:
                PUBLISH_FAILURES.worked()

        transaction.on_commit(publish, robust=True)


def _publish(table_id: int, messages: list[TableMessage]) -> None:
    feed.publish(table_id, [message.to_wire() for message in messages])
