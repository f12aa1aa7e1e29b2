"""What one table command changed: hand events to log and messages to broadcast.

A command makes one `Recorder`, feeds it the engine's events and its own table events,
and calls `save()` before its transaction ends: the hand events are written in order,
every message gets the next number of the table's stream, and the messages go out after
the commit.
"""

from typing import Any

from tables.engine.events import Event
from tables.events import TableMessage, publish_on_commit
from tables.models import Hand, HandEvent, Table


class Recorder:
    def __init__(self, table: Table) -> None:
        self.table = table
        self._rows: list[HandEvent] = []
        self._bodies: list[tuple[dict[str, Any], dict[int, dict[str, Any]]]] = []

    def engine_events(
        self, *, hand: Hand, events: list[Event], users_by_seat: dict[int, int]
    ) -> None:
        """Log the engine's events and broadcast each in the form each viewer may see."""
        for event in events:
            body = event.to_dict()
            hand.events_logged += 1
            self._rows.append(
                HandEvent(hand=hand, seq=hand.events_logged, type=event.type, data=body)
            )
            if event.visible_to(None):
                self.message({"hand": hand.id, **body})
                continue
            # A private event: the owner sees it whole, everyone else only that it happened.
            private = {
                user_id: {"hand": hand.id, **body}
                for seat, user_id in users_by_seat.items()
                if event.visible_to(seat)
            }
            public = {"hand": hand.id, "type": event.type, "seat": body.get("seat")}
            self.message(public, private)

    def message(
        self, public: dict[str, Any], private: dict[int, dict[str, Any]] | None = None
    ) -> None:
        self._bodies.append((public, private or {}))

    def private_note(self, *, user_id: int, note: dict[str, Any]) -> None:
        """Add `note` to what one player sees of the latest message (nobody else learns
        of it, not even that there was a note)."""
        if not self._bodies:
            return
        public, private = self._bodies[-1]
        private[user_id] = {**private.get(user_id, public), **note}

    def save(self) -> None:
        """Write the logged events and number and publish the messages (after commit)."""
        if self._rows:
            HandEvent.objects.bulk_create(self._rows)
        if not self._bodies:
            return
        first = self.table.event_seq + 1
        messages = [
            TableMessage(version=first + k, public=public, private=private)
            for k, (public, private) in enumerate(self._bodies)
        ]
        self.table.event_seq += len(messages)
        self.table.save(update_fields=["event_seq"])
        publish_on_commit(table_id=self.table.id, messages=messages)
        self._rows.clear()
        self._bodies.clear()
