"""Broadcasting table events to the WebSocket consumers, only after the commit.

Every event a table produces gets the next number of the table's stream
(`Table.event_seq`, STYLE §7). One message per event goes to the table's group; it
carries the public form of the event and, where some viewers may see more (their own
hole cards), the private form for each of those players. The consumer picks the form
its viewer may see, so one ordered stream serves players and spectators alike, and a
card never leaves the server for a browser that may not see it.

Channel layers deliver at most once: a client that sees a gap in the numbers asks for
a fresh snapshot.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction


@dataclass(frozen=True)
class TableMessage:
    version: int
    public: dict[str, Any]
    # user id -> the form of the event that player may see instead of `public`
    private: dict[int, dict[str, Any]] = field(default_factory=dict)

    def for_user(self, user_id: int | None) -> dict[str, Any]:
        body = self.private.get(user_id, self.public) if user_id is not None else self.public
        return {"v": self.version, **body}


def table_group(table_id: int) -> str:
    return f"table.{table_id}"


def publish_on_commit(*, table_id: int, messages: Sequence[TableMessage]) -> None:
    """Send the messages to the table's group once the current transaction commits."""
    if messages:
        # Robust: the command has committed; a channel layer that is down must not turn its
        # answer into an error (Django logs it). Viewers see the gap and resync.
        # A function, not a partial: Django names a failing robust callback by __qualname__.
        pending = list(messages)

        def publish() -> None:
            _publish(table_id, pending)

        transaction.on_commit(publish, robust=True)


def _publish(table_id: int, messages: list[TableMessage]) -> None:
    layer = get_channel_layer()
    send = async_to_sync(layer.group_send)
    for message in messages:
        send(
            table_group(table_id),
            {
                "type": "table.message",
                "version": message.version,
                "public": message.public,
                # JSON-safe keys: the channel layer serialises with msgpack.
                "private": {str(uid): body for uid, body in message.private.items()},
            },
        )
