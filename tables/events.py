"""Broadcasting table events to the WebSocket consumers, only after the commit.

Every message a table sends (tables/messages.py) gets the next number of the table's
stream (`Table.event_seq`, STYLE §7). Each message carries its public form and, where
some viewers may see more (their own hole cards), the private form for each of those
players; a command's messages go to the table's group together, in one channel-layer
message. The consumer picks the form its viewer may see (`TableMessage.for_user`), so
one ordered stream serves players and spectators alike, and a card never leaves the
server for a browser that may not see it.

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
        """The message as this viewer (None: a spectator) receives it."""
        body = self.private.get(user_id, self.public) if user_id is not None else self.public
        return {"v": self.version, **body}

    def to_wire(self) -> dict[str, Any]:
        # JSON-safe keys: the channel layer serialises with msgpack.
        private = {str(uid): body for uid, body in self.private.items()}
        return {"version": self.version, "public": self.public, "private": private}

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> "TableMessage":
        private = {int(uid): body for uid, body in wire["private"].items()}
        return cls(version=wire["version"], public=wire["public"], private=private)


def table_group(table_id: int) -> str:
    return f"table.{table_id}"


def player_presence_group(table_id: int, user_id: int) -> str:
    """The group of one player's sockets at a table, whichever web process holds them:
    when one closes, its members say whether another is still open."""
    return f"table.{table_id}.player.{user_id}"


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
    send = async_to_sync(get_channel_layer().group_send)
    send(
        table_group(table_id),
        {"type": "table.messages", "messages": [message.to_wire() for message in messages]},
    )
