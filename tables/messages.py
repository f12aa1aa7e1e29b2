"""Every message a table sends its viewers, as typed values with one visibility rule each.

A table command emits these (`TableCommand.emit`, tables/services/command.py). Each
message knows what everybody may see of it (`public`) and which viewers may see more
(`private`: user id -> their whole form); a private form is always the public one plus
what that viewer may know. That rule is written once, here, for every kind of message:
the command turns each message into its forms when it is recorded, and the consumer only
picks the form of its viewer (`tables.events.TableMessage.for_user`).

Notes are the other half of the vocabulary: something only one player learns (their
queued advance action was used or cleared, their straddle options, how their straddle
request was answered), added to their own form of the command's last message, so that
nobody else learns even that there was a note.

JSON: `to_dict()` is the message's full content with its `type`; `message_from_dict` is
its inverse (both tested for every type). docs/protocol.md lists every type and note; a
test checks it against `MESSAGE_TYPES` and `NOTE_KEYS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from tables.engine.events import Event, event_from_dict

Body = dict[str, Any]
# Marks a field that says who receives a message, never sent itself.
AUDIENCE = {"audience": True}


@dataclass(frozen=True)
class TableEvent:
    """Base of the table's messages. Subclasses set `type`; most are public as a whole."""

    type: ClassVar[str] = "table_event"

    def to_dict(self) -> Body:
        fields = dataclasses.fields(self)
        return {"type": self.type, **{f.name: getattr(self, f.name) for f in fields}}

    @classmethod
    def from_dict(cls, body: Body) -> TableEvent:
        # A field left out of the JSON takes its default.
        return cls(**{f.name: body[f.name] for f in dataclasses.fields(cls) if f.name in body})

    def public(self) -> Body:
        """What every viewer, spectators included, sees."""
        return self.to_dict()

    def private(self, users_by_seat: Mapping[int, int]) -> dict[int, Body]:
        """user id -> the fuller form that player sees (none by default)."""
        return {}


@dataclass(frozen=True)
class HandEventMessage(TableEvent):
    """An engine event of a hand (tables/engine/events.py), with the hand's id.

    Public events go to everyone whole; a private one (hole cards) goes whole to the
    players its rule admits, and to everyone else only as "this happened at that seat".
    """

    type: ClassVar[str] = "hand_event"
    hand: int
    event: Event

    def to_dict(self) -> Body:
        return {"hand": self.hand, **self.event.to_dict()}

    @classmethod
    def from_dict(cls, body: Body) -> HandEventMessage:
        fields = {k: v for k, v in body.items() if k != "hand"}
        return cls(hand=body["hand"], event=event_from_dict(fields))

    def public(self) -> Body:
        return self.form_for_seat(None)

    def form_for_seat(self, seat: int | None) -> Body:
        """What the player dealt in at `seat` (None: anyone else) receives: the event
        whole, or that it happened at its seat."""
        if self.event.visible_to(seat):
            return self.to_dict()
        return {"hand": self.hand, "type": self.event.type, "seat": self.event.seat}

    def private(self, users_by_seat: Mapping[int, int]) -> dict[int, Body]:
        if self.event.visible_to(None):
            return {}
        whole = self.to_dict()
        return {
            user_id: whole for seat, user_id in users_by_seat.items() if self.event.visible_to(seat)
        }


@dataclass(frozen=True)
class Turn(TableEvent):
    """Whose turn it is, their clock and the hand's amount to match and pot total, for
    all. The actor's own form adds their legal actions (`LegalActions.to_dict`) and the
    bet-size shortcuts (`presets`, tables/engine/presets.py); each other player still to
    decide gets their `advance_options` (what a call costs them now, where a queued raise
    goes). `reconnect_bonus_seconds` is there only when the reconnect bonus just extended
    the clock (by that many seconds)."""

    type: ClassVar[str] = "turn"
    hand: int
    seat: int
    turn: int
    deadline: str
    time_bank_seconds: int
    to_match: int
    pot_total: int
    legal_actions: Body
    presets: Body | None = None
    # One entry ({seat, owed, raise_to}) per player waiting to decide, for that player.
    waiting: list[Body] = field(default_factory=list, metadata=AUDIENCE)
    reconnect_bonus_seconds: int | None = None

    def to_dict(self) -> Body:
        body = super().to_dict()
        if self.reconnect_bonus_seconds is None:
            del body["reconnect_bonus_seconds"]
        return body

    def public(self) -> Body:
        body = self.to_dict()
        for private in ("legal_actions", "presets", "waiting"):
            del body[private]
        return body

    def private(self, users_by_seat: Mapping[int, int]) -> dict[int, Body]:
        public = self.public()
        forms = {}
        for entry in self.waiting:
            user = users_by_seat.get(entry["seat"])
            if user is not None:
                options = {k: v for k, v in entry.items() if k != "seat"}
                forms[user] = {**public, "advance_options": options}
        actor = users_by_seat.get(self.seat)
        if actor is not None:
            forms[actor] = {**public, "legal_actions": self.legal_actions, "presets": self.presets}
        return forms


@dataclass(frozen=True)
class RunTwiceAsk(TableEvent):
    """The players all-in (`seats`) are asked whether to run it twice, for all to see:
    their clock (`deadline`) is the hand's turn `turn`, which a timeout ends (refusing
    for whoever has not answered); each answer is a `run_twice_answered` hand event."""

    type: ClassVar[str] = "run_twice_ask"
    hand: int
    turn: int
    deadline: str
    seats: list[int]


@dataclass(frozen=True)
class SeatsChanged(TableEvent):
    """How every seat stands now (`tables.selectors.seats_public`): after any seating
    change and after each hand."""

    type: ClassVar[str] = "seats"
    seats: list[Body]


@dataclass(frozen=True)
class SeatLeft(TableEvent):
    """The seat is free; its stack is back in its player's wallet."""

    type: ClassVar[str] = "seat_left"
    seat: int
    player: str


@dataclass(frozen=True)
class TableStatusChanged(TableEvent):
    """An admin (or the failure guard) opened, paused or closed the table."""

    type: ClassVar[str] = "table_status"
    status: str


@dataclass(frozen=True)
class BlindOptionAsked(TableEvent):
    """A player asked for (`wanted`) or cancelled a straddle or overblind."""

    type: ClassVar[str] = "blind_option"
    seat: int
    kind: str
    wanted: bool


@dataclass(frozen=True)
class ShowdownHands(TableEvent):
    """The five cards of every hand shown down (`hands`: `{seat, high, high_cards, low,
    low_cards}`), sent once the hand is over, so that the winning ones can be lit up."""

    type: ClassVar[str] = "showdown_hands"
    hand: int
    hands: list[Body]
    # The same on the second run's board when the board was run twice (else empty).
    second: list[Body] = field(default_factory=list)


@dataclass(frozen=True)
class ChatSent(TableEvent):
    """A line of chat. Everyone reads it, or only `readers` (the players seated, when the
    table keeps its chat from spectators: everyone else learns only that a line was
    written); a viewer in `muted_by` (they muted its author) learns only who wrote."""

    type: ClassVar[str] = "chat"
    id: int
    seat: int
    player: str
    text: str
    at: str
    readers: list[int] | None = field(default=None, metadata=AUDIENCE)
    muted_by: list[int] = field(default_factory=list, metadata=AUDIENCE)

    def _content(self) -> Body:
        return {k: v for k, v in self.to_dict().items() if k not in ("readers", "muted_by")}

    def public(self) -> Body:
        if self.readers is None:
            return self._content()
        return {"type": self.type, "id": self.id, "hidden": True}

    def private(self, users_by_seat: Mapping[int, int]) -> dict[int, Body]:
        content = self._content()
        forms = {uid: content for uid in self.readers or ()}
        muted = {"type": self.type, "id": self.id, "seat": self.seat, "player": self.player}
        # Only a reader learns who wrote a line they muted: a mute holds at every table,
        # and a muter kept from this table's chat must learn no more than the rest.
        muters = [uid for uid in self.muted_by if self.readers is None or uid in self.readers]
        forms.update({uid: {**muted, "muted": True} for uid in muters})
        return forms

    def form_for(self, user_id: int | None) -> Body:
        """What this viewer (None: an anonymous spectator) reads of the line."""
        return self.private({}).get(user_id, self.public()) if user_id else self.public()


MESSAGE_TYPES: dict[str, type[TableEvent]] = {
    cls.type: cls
    for cls in (
        Turn,
        RunTwiceAsk,
        SeatsChanged,
        SeatLeft,
        TableStatusChanged,
        BlindOptionAsked,
        ChatSent,
        ShowdownHands,
    )
}


def message_from_dict(body: Body) -> TableEvent:
    """The message `to_dict` wrote (a hand event when its type is not a table one)."""
    cls = MESSAGE_TYPES.get(body["type"])
    if cls is None:
        return HandEventMessage.from_dict(body)
    return cls.from_dict(body)


@dataclass(frozen=True)
class Note:
    """Base of what only one player learns, added to their form of the last message."""

    key: ClassVar[str] = "note"

    def fields(self) -> Body:
        return {self.key: getattr(self, self.key)}


@dataclass(frozen=True)
class AdvanceNote(Note):
    """Their queued advance action now (None: used or cleared)."""

    key: ClassVar[str] = "advance"
    advance: Body | None


@dataclass(frozen=True)
class BlindOptionsNote(Note):
    """Which straddle / overblind options are open to them for the next hand."""

    key: ClassVar[str] = "blind_options"
    blind_options: Body


@dataclass(frozen=True)
class BlindRequestsNote(Note):
    """At the deal: whether each of their requests was posted, and why not."""

    key: ClassVar[str] = "blind_requests"
    blind_requests: list[Body]


@dataclass(frozen=True)
class AutoTopUpNote(Note):
    """Their auto top-up just ran: `added` of the `due` (less when the wallet was short)."""

    key: ClassVar[str] = "auto_top_up"
    auto_top_up: Body


@dataclass(frozen=True)
class BestHandNote(Note):
    """With each board dealt: the best hand they make now (tables/hand_helper.py)."""

    key: ClassVar[str] = "best_hand"
    best_hand: Body


NOTE_KEYS: tuple[str, ...] = tuple(
    cls.key
    for cls in (AdvanceNote, BlindOptionsNote, BlindRequestsNote, AutoTopUpNote, BestHandNote)
)
