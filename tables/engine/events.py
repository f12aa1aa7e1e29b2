"""Events of a hand: frozen dataclasses, JSON-able, each with a visibility rule.

Every transition of :mod:`tables.engine.start` and :mod:`tables.engine.act` returns the
list of events it caused, in order. The table layer stores them (the immutable hand
record of RULES.md section 9), numbers them, and sends each viewer only what
:meth:`Event.visible_to` allows.

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
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar

from tables.engine.cards import card_str, parse_card
from tables.engine.config import KillInfo
from tables.engine.pots import Pot

#: How a field is written in JSON when it is not a plain value (see Event.json_fields).
CARDS = "cards"  # a tuple of card ids, written as two-character codes
KILL = "kill"  # a KillInfo or None, written as its dict


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """A seat dealt in: number, player (the name shown) and stack at the start of the
    hand, and the player's stable id in the room (None in hands stored before it was)."""

    seat: int
    player: str
    stack: int
    player_id: int | None = None


@dataclass(frozen=True, slots=True)
class SeatAmount:
    """An amount of chips attached to a seat (stacks, winnings, rake shares)."""

    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class Event:
    """Base class. Subclasses set ``type`` and may override :meth:`visible_to`.

    ``json_fields`` names the fields that are not written as they are: :data:`CARDS`,
    :data:`KILL`, or a dataclass for a tuple of those (each written as a dict).
    """

    type: ClassVar[str] = "event"
    json_fields: ClassVar[dict[str, Any]] = {}

    def visible_to(self, seat: int | None) -> bool:
        """True when the player at ``seat`` (None: a spectator) may see this event."""
        return True

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form with a ``"type"`` key, then the fields in order."""
        out: dict[str, Any] = {"type": self.type}
        for field in fields(self):
            value = getattr(self, field.name)
            codec = self.json_fields.get(field.name)
            if codec is None:
                out[field.name] = _plain(value)
            elif codec == CARDS:
                out[field.name] = [card_str(c) for c in value]
            elif codec == KILL:
                out[field.name] = None if value is None else value.to_dict()
            else:  # a tuple of small dataclasses
                out[field.name] = [
                    {f.name: _plain(getattr(item, f.name)) for f in fields(item)} for item in value
                ]
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Event:
        """Inverse of :meth:`to_dict` (use :func:`event_from_dict` to dispatch on type)."""
        values: dict[str, Any] = {}
        for field in fields(cls):
            if field.name not in d and field.default is not MISSING:
                continue  # a field added since the event was stored: its default
            value = d[field.name]
            codec = cls.json_fields.get(field.name)
            if codec is None:
                values[field.name] = _tupled(value)
            elif codec == CARDS:
                values[field.name] = tuple(parse_card(c) for c in value)
            elif codec == KILL:
                values[field.name] = None if value is None else KillInfo.from_dict(value)
            else:
                values[field.name] = tuple(
                    codec(**{k: _tupled(v) for k, v in item.items()}) for item in value
                )
        return cls(**values)


def _plain(value: Any) -> Any:
    """A field's JSON value: tuples become lists."""
    return list(value) if isinstance(value, tuple) else value


def _tupled(value: Any) -> Any:
    """A field's value from JSON: lists become tuples."""
    return tuple(value) if isinstance(value, list) else value


@dataclass(frozen=True, slots=True)
class HandStarted(Event):
    """A hand begins. ``limits`` are those in force (after a kill or overblind)."""

    type: ClassVar[str] = "hand_started"
    json_fields: ClassVar[dict[str, Any]] = {"seats": SeatInfo, "kill": KILL}
    hand_id: str
    button: int
    game: str
    structure: str
    seats: tuple[SeatInfo, ...]
    small_blind: int
    big_blind: int
    ante: int
    small_bet: int
    big_bet: int
    spread_min: int
    spread_max: int
    limit_multiplier: str
    kill: KillInfo | None
    overblind_seat: int | None
    straddle_seat: int | None
    deck_commitment: str | None


@dataclass(frozen=True, slots=True)
class Posted(Event):
    """A forced bet: ante, small_blind, big_blind, newcomer_big_blind, straddle,
    kill_blind or overblind. Antes are dead money; the others are live bets.

    The results ride along (None in events stored before they did): the player's
    ``stack``, ``committed`` this street and ``in_pot`` afterwards, and the hand's
    ``to_match`` and ``pot_total`` (so that a client need do no arithmetic)."""

    type: ClassVar[str] = "posted"
    seat: int
    kind: str
    amount: int
    all_in: bool
    stack: int | None = None
    committed: int | None = None
    in_pot: int | None = None
    to_match: int | None = None
    pot_total: int | None = None


@dataclass(frozen=True, slots=True)
class HoleCards(Event):
    """A player's hole cards. Private: only the owner sees this event."""

    type: ClassVar[str] = "hole_cards"
    json_fields: ClassVar[dict[str, Any]] = {"cards": CARDS}
    seat: int
    cards: tuple[int, ...]

    def visible_to(self, seat: int | None) -> bool:
        """Only the owner of the cards."""
        return seat == self.seat


@dataclass(frozen=True, slots=True)
class DealtBoard(Event):
    """Board cards of a street (flop: 3, turn: 1, river: 1)."""

    type: ClassVar[str] = "dealt_board"
    json_fields: ClassVar[dict[str, Any]] = {"cards": CARDS}
    street: str
    cards: tuple[int, ...]
    # Which run of the board (run it twice: 1 or 2; 1 in events stored before runs).
    run: int = 1


@dataclass(frozen=True, slots=True)
class Acted(Event):
    """A player's decision. ``amount`` = chips added now, ``street_total`` = their
    commitment this street afterwards. ``action`` is fold, check, call, bet or raise.
    With the results, as in :class:`Posted`: ``stack``, ``in_pot``, ``to_match``,
    ``pot_total`` afterwards."""

    type: ClassVar[str] = "acted"
    seat: int
    action: str
    amount: int
    street_total: int
    all_in: bool
    stack: int | None = None
    in_pot: int | None = None
    to_match: int | None = None
    pot_total: int | None = None


@dataclass(frozen=True, slots=True)
class TimedOut(Event):
    """A player's time ran out; ``resolution`` is check, protected or fold (RULES 5)."""

    type: ClassVar[str] = "timed_out"
    seat: int
    resolution: str


@dataclass(frozen=True, slots=True)
class Protected(Event):
    """All-in protection: the seat stays in for the ``amount_in`` it has put in."""

    type: ClassVar[str] = "protected"
    seat: int
    amount_in: int


@dataclass(frozen=True, slots=True)
class UncalledReturned(Event):
    """The uncalled part of a bet goes back to its bettor; with the results, as in
    :class:`Posted` (``committed`` is their street total less the part returned)."""

    type: ClassVar[str] = "uncalled_returned"
    seat: int
    amount: int
    stack: int | None = None
    committed: int | None = None
    in_pot: int | None = None
    to_match: int | None = None
    pot_total: int | None = None


@dataclass(frozen=True, slots=True)
class Pots(Event):
    """The pots at the end of a betting round (or of the hand, before rake)."""

    type: ClassVar[str] = "pots"
    json_fields: ClassVar[dict[str, Any]] = {"pots": Pot}
    street: str
    pots: tuple[Pot, ...]


@dataclass(frozen=True, slots=True)
class Shown(Event):
    """A hand turned face up at showdown with its descriptions (``low`` None if none)."""

    type: ClassVar[str] = "shown"
    json_fields: ClassVar[dict[str, Any]] = {"cards": CARDS}
    seat: int
    cards: tuple[int, ...]
    high: str
    low: str | None
    # The run whose board the descriptions are of (run it twice: 1 or 2).
    run: int = 1


@dataclass(frozen=True, slots=True)
class Mucked(Event):
    """A losing hand thrown away unseen (the hand history keeps the cards for auditors)."""

    type: ClassVar[str] = "mucked"
    seat: int


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
    # The winner's stack with this pot in it (None in events stored before it was sent).
    stack: int | None = None
    # The run of the board this share was won on (run it twice: 1 or 2, half the pot each).
    run: int = 1


@dataclass(frozen=True, slots=True)
class RunTwiceAsked(Event):
    """Betting is over before the river with everyone all-in (but at most one who has
    matched): the players still in (``seats``) are asked whether to run it twice."""

    type: ClassVar[str] = "run_twice_asked"
    seats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RunTwiceAnswered(Event):
    """A player asked agreed (``agree``) or refused to run it twice; ``timed_out``: their
    time ran out, which refuses. ``undecided``: the seats still to answer afterwards."""

    type: ClassVar[str] = "run_twice_answered"
    seat: int
    agree: bool
    timed_out: bool
    undecided: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RunTwiceDecided(Event):
    """How many times the rest of the board is dealt: 2 when everyone agreed, else 1."""

    type: ClassVar[str] = "run_twice_decided"
    runs: int


@dataclass(frozen=True, slots=True)
class Raked(Event):
    """The hand's rake and each seat's contributed share of it."""

    type: ClassVar[str] = "rake"
    json_fields: ClassVar[dict[str, Any]] = {"contributed": SeatAmount}
    amount: int
    contributed: tuple[SeatAmount, ...]


@dataclass(frozen=True, slots=True)
class Chopped(Event):
    """The blinds chopped: every forced bet and ante went back to its owner, no rake."""

    type: ClassVar[str] = "chopped"
    json_fields: ClassVar[dict[str, Any]] = {"returned": SeatAmount}
    seats: tuple[int, ...]
    returned: tuple[SeatAmount, ...]


@dataclass(frozen=True, slots=True)
class HandEnded(Event):
    """Final stacks, rake, net winnings per winner, the scooper and the next hand's kill."""

    type: ClassVar[str] = "hand_ended"
    json_fields: ClassVar[dict[str, Any]] = {
        "stacks": SeatAmount,
        "winners": SeatAmount,
        "next_kill": KILL,
    }
    stacks: tuple[SeatAmount, ...]
    rake: int
    winners: tuple[SeatAmount, ...]
    scooped_by: int | None
    next_kill: KillInfo | None
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
        RunTwiceAsked,
        RunTwiceAnswered,
        RunTwiceDecided,
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
