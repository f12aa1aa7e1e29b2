"""Broadcasting table events to the WebSocket consumers, only after the commit.

Every message a table sends (tables/messages.py) gets the next number of the table's
stream (`Table.event_seq`, STYLE §7). Each message carries its public form and, where
some viewers may see more (their own hole cards), the private form for each of those
players; a command's messages are published together, in one message of the table's
feed. The consumer picks the form its viewer may see (`TableMessage.for_user`), so
one ordered stream serves players and spectators alike, and a card never leaves the
server for a browser that may not see it.

The table's feed (tables/feed.py, Redis pub/sub) carries them to every web process that
has viewers of the table, at most once: a client that sees a gap in the numbers asks for
a fresh snapshot.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from tables import feed


@dataclass(frozen=True)
class TableMessage:
    version: int
    public: dict[str, Any]
    # user id -> the form of the event that player may see instead of `public`
    private: dict[int, dict[str, Any]] = field(default_factory=dict)
    # The JSON text of each form, made once: a web process holds many viewers of a table
    # and sends each of them one of a few forms (user id, or None for the public one).
    _texts: dict[int | None, str] = field(default_factory=dict, compare=False, repr=False)

    def for_user(self, user_id: int | None) -> dict[str, Any]:
        """The message as this viewer (None: a spectator) receives it."""
        body = self.private.get(user_id, self.public) if user_id is not None else self.public
        return {"v": self.version, **body}

    def text_for(self, user_id: int | None) -> str:
        """`for_user` as the JSON text sent on the viewer's socket."""
        form = user_id if user_id in self.private else None
        text = self._texts.get(form)
        if text is None:
            text = self._texts[form] = json.dumps(self.for_user(form))
        return text

    def to_wire(self) -> dict[str, Any]:
        # JSON-safe keys: the table feed serialises with msgpack.
        private = {str(uid): body for uid, body in self.private.items()}
        return {"version": self.version, "public": self.public, "private": private}

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> "TableMessage":
        private = {int(uid): body for uid, body in wire["private"].items()}
        return cls(version=wire["version"], public=wire["public"], private=private)


def messages_from_group(group_message: dict[str, Any]) -> list[TableMessage]:
    """The messages of one `table.messages` group message, decoded once per process.

    The table's feed reads a message once per process and hands the same dict to each
    of its viewers' consumers: the first to read it decodes it and keeps the result in
    it, so the messages (and their JSON texts) are made once for all the viewers of the
    table this process serves.
    """
    decoded = group_message.get(_DECODED)
    if decoded is None:
        decoded = group_message[_DECODED] = [
            TableMessage.from_wire(wire) for wire in group_message["messages"]
        ]
    return decoded


_DECODED = "_decoded"  # never sent: it is added where the message was received


def player_presence_group(table_id: int, user_id: int) -> str:
    """The group of one player's sockets at a table, whichever web process holds them:
    when one closes, its members say whether another is still open."""
    return f"table.{table_id}.player.{user_id}"


def publish_on_commit(*, table_id: int, messages: Sequence[TableMessage]) -> None:
    """Send the messages to the table's viewers once the current transaction commits."""
    if messages:
        # Robust: the command has committed; a Redis that is down must not turn its
        # answer into an error (Django logs it). Viewers see the gap and resync.
        # A function, not a partial: Django names a failing robust callback by __qualname__.
        pending = list(messages)

        def publish() -> None:
            _publish(table_id, pending)

        transaction.on_commit(publish, robust=True)


def _publish(table_id: int, messages: list[TableMessage]) -> None:
    feed.publish(table_id, [message.to_wire() for message in messages])
