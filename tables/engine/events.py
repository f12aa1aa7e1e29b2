"""Events of a hand: frozen dataclasses, JSON-able, each with a visibility rule.

Every transition of :mod:`tables.engine.state` returns the list of events it caused, in
order. The table layer stores them (the immutable hand record of RULES.md section 9),
numbers them, and sends each viewer only what :meth:`Event.visible_to` allows.

JSON form: ``event.to_dict()`` is a dict of plain JSON types with a ``"type"`` key;
:func:`event_from_dict` is its inverse. Cards are written as two-character codes
(``"As"``) so that a stored hand history reads without a decoder; everything else is ints,
strings, bools, None, lists and dicts.

Visibility: ``visible_to(seat)`` answers for a seated player (``seat``) or a spectator
(``None``). Only :class:`HoleCards` is private (to its owner). Auditors read every event
(``events_for(events, seat, auditor=True)``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from tables.engine.cards import card_str, parse_card
from tables.engine.config import KillInfo
from tables.engine.records import fast_init

_CARDS = {"cards": True}
_KILL = {"kill": True}


def _nested(cls: type) -> dict[str, type]:
    return {"nested": cls}


@fast_init
@dataclass(frozen=True, slots=True)
class SeatInfo:
    """A seat dealt in: number, player id and stack at the start of the hand."""

    seat: int
    player: str
    stack: int


@fast_init
@dataclass(frozen=True, slots=True)
class SeatAmount:
    """An amount of chips attached to a seat (stacks, winnings, rake shares)."""

    seat: int
    amount: int


@fast_init
@dataclass(frozen=True, slots=True)
class PotInfo:
    """A pot and the seats that can win it."""

    amount: int
    eligible: tuple[int, ...]


_RECORDS: dict[type, tuple[str, ...]] = {
    SeatInfo: ("seat", "player", "stack"),
    SeatAmount: ("seat", "amount"),
    PotInfo: ("amount", "eligible"),
}


@dataclass(frozen=True, slots=True)
class Event:
    """Base class. Subclasses set ``type`` and may override :meth:`visible_to`."""

    type: ClassVar[str] = "event"

    def visible_to(self, seat: int | None) -> bool:
        """True when the player at ``seat`` (None: a spectator) may see this event."""
        return True

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form with a ``"type"`` key."""
        out: dict[str, Any] = {"type": self.type}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata.get("cards"):
                value = [card_str(c) for c in value]
            elif "nested" in f.metadata:
                keys = _RECORDS[f.metadata["nested"]]
                value = [
                    {k: (list(v) if isinstance(v := getattr(r, k), tuple) else v) for k in keys}
                    for r in value
                ]
            elif f.metadata.get("kill"):
                value = None if value is None else value.to_dict()
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Event:
        """Inverse of :meth:`to_dict` (use :func:`event_from_dict` to dispatch on type)."""
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            value = d[f.name]
            if f.metadata.get("cards"):
                value = tuple(parse_card(c) for c in value)
            elif "nested" in f.metadata:
                record = f.metadata["nested"]
                value = tuple(
                    record(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in r.items()})
                    for r in value
                )
            elif f.metadata.get("kill"):
                value = None if value is None else KillInfo.from_dict(value)
            elif isinstance(value, list):
                value = tuple(value)
            kwargs[f.name] = value
        return cls(**kwargs)


@fast_init
@dataclass(frozen=True, slots=True)
class HandStarted(Event):
    """A hand begins. ``limits`` are those in force (after a kill or overblind)."""

    type: ClassVar[str] = "hand_started"
    hand_id: str
    button: int
    game: str
    structure: str
    seats: tuple[SeatInfo, ...] = field(metadata=_nested(SeatInfo))
    small_blind: int
    big_blind: int
    ante: int
    small_bet: int
    big_bet: int
    spread_min: int
    spread_max: int
    limit_multiplier: str
    kill: KillInfo | None = field(metadata=_KILL)
    overblind_seat: int | None
    straddle_seat: int | None
    deck_commitment: str | None


@fast_init
@dataclass(frozen=True, slots=True)
class Posted(Event):
    """A forced bet: ante, small_blind, big_blind, newcomer_big_blind, straddle,
    kill_blind or overblind. Antes are dead money; the others are live bets."""

    type: ClassVar[str] = "posted"
    seat: int
    kind: str
    amount: int
    all_in: bool


@fast_init
@dataclass(frozen=True, slots=True)
class HoleCards(Event):
    """A player's hole cards. Private: only the owner sees this event."""

    type: ClassVar[str] = "hole_cards"
    seat: int
    cards: tuple[int, ...] = field(metadata=_CARDS)

    def visible_to(self, seat: int | None) -> bool:
        """Only the owner of the cards."""
        return seat == self.seat


@fast_init
@dataclass(frozen=True, slots=True)
class DealtBoard(Event):
    """Board cards of a street (flop: 3, turn: 1, river: 1)."""

    type: ClassVar[str] = "dealt_board"
    street: str
    cards: tuple[int, ...] = field(metadata=_CARDS)


@fast_init
@dataclass(frozen=True, slots=True)
class Acted(Event):
    """A player's decision. ``amount`` = chips added now, ``street_total`` = their
    commitment this street afterwards. ``action`` is fold, check, call, bet or raise."""

    type: ClassVar[str] = "acted"
    seat: int
    action: str
    amount: int
    street_total: int
    all_in: bool


@fast_init
@dataclass(frozen=True, slots=True)
class TimedOut(Event):
    """A player's time ran out; ``resolution`` is check, protected or fold (RULES 5)."""

    type: ClassVar[str] = "timed_out"
    seat: int
    resolution: str


@fast_init
@dataclass(frozen=True, slots=True)
class Protected(Event):
    """All-in protection: the seat stays in for the ``amount_in`` it has put in."""

    type: ClassVar[str] = "protected"
    seat: int
    amount_in: int


@fast_init
@dataclass(frozen=True, slots=True)
class UncalledReturned(Event):
    """The uncalled part of a bet goes back to its bettor."""

    type: ClassVar[str] = "uncalled_returned"
    seat: int
    amount: int


@fast_init
@dataclass(frozen=True, slots=True)
class Pots(Event):
    """The pots at the end of a betting round (or of the hand, before rake)."""

    type: ClassVar[str] = "pots"
    street: str
    pots: tuple[PotInfo, ...] = field(metadata=_nested(PotInfo))


@fast_init
@dataclass(frozen=True, slots=True)
class Shown(Event):
    """A hand turned face up at showdown with its descriptions (``low`` None if none)."""

    type: ClassVar[str] = "shown"
    seat: int
    cards: tuple[int, ...] = field(metadata=_CARDS)
    high: str
    low: str | None


@fast_init
@dataclass(frozen=True, slots=True)
class Mucked(Event):
    """A losing hand thrown away unseen (the hand history keeps the cards for auditors)."""

    type: ClassVar[str] = "mucked"
    seat: int


@fast_init
@dataclass(frozen=True, slots=True)
class Won(Event):
    """``amount`` of pot number ``pot`` (0 = main) to ``seat``. ``share`` is "high",
    "low" or None (the whole pot, or uncontested); ``description`` None if not shown."""

    type: ClassVar[str] = "won"
    seat: int
    pot: int
    amount: int
    share: str | None
    description: str | None


@fast_init
@dataclass(frozen=True, slots=True)
class Raked(Event):
    """The hand's rake and each seat's contributed share of it."""

    type: ClassVar[str] = "rake"
    amount: int
    contributed: tuple[SeatAmount, ...] = field(metadata=_nested(SeatAmount))


@fast_init
@dataclass(frozen=True, slots=True)
class Chopped(Event):
    """The blinds chopped: every forced bet and ante went back to its owner, no rake."""

    type: ClassVar[str] = "chopped"
    seats: tuple[int, ...]
    returned: tuple[SeatAmount, ...] = field(metadata=_nested(SeatAmount))


@fast_init
@dataclass(frozen=True, slots=True)
class HandEnded(Event):
    """Final stacks, rake, net winnings per winner, the scooper and the next hand's kill."""

    type: ClassVar[str] = "hand_ended"
    stacks: tuple[SeatAmount, ...] = field(metadata=_nested(SeatAmount))
    rake: int
    winners: tuple[SeatAmount, ...] = field(metadata=_nested(SeatAmount))
    scooped_by: int | None
    next_kill: KillInfo | None = field(metadata=_KILL)
    chopped: bool


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        HandStarted,
        Posted,
        HoleCards,
        DealtBoard,
        Acted,
        TimedOut,
        Protected,
        UncalledReturned,
        Pots,
        Shown,
        Mucked,
        Won,
        Raked,
        Chopped,
        HandEnded,
    )
}


def event_from_dict(d: dict[str, Any]) -> Event:
    """Rebuild any event from its :meth:`Event.to_dict` form."""
    try:
        cls = EVENT_TYPES[d["type"]]
    except KeyError:
        raise ValueError(f"unknown event type {d.get('type')!r}") from None
    return cls.from_dict(d)


def events_for(events: Iterable[Event], seat: int | None, *, auditor: bool = False) -> list[Event]:
    """The events that ``seat`` (None: spectator) may see; auditors see them all."""
    if auditor:
        return list(events)
    return [e for e in events if e.visible_to(seat)]
