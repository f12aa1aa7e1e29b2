"""The state of one hand: :class:`HandState`, its queries, the verify/can pair and JSON.

A :class:`HandState` is built by :func:`tables.engine.start.start_hand` and moved on by
:func:`tables.engine.act.apply` (a new state) or :func:`~tables.engine.act.apply_in_place`
(the same state, for a caller that owns it); :mod:`tables.engine.state` explains the
model as a whole. This module answers questions about a state and never changes one:

* **Queries**: the actor, the pots, a seat's stack, what a player needs to call
  (:meth:`HandState.to_call`) and the bounds of a bet or raise
  (:meth:`HandState.raise_range`).
* **verify / can** (pokerkit's triad, the "do" being ``apply``): ``legal_actions()`` is
  what the UI offers, ``verify(action)`` raises the precise
  :class:`~tables.engine.errors.IllegalAction`, ``can(action)`` is its boolean.
* **Views and JSON**: ``view(seat)`` is what one seat (or a spectator, ``None``) may see,
  ``auditor_view()`` everything; ``to_dict``/``from_dict`` are lossless, and their form is
  what the database stores for every hand, so it never changes.

Per-player lists are indexed by *player index*: player ``i`` is the ``i``-th dealt-in
seat in seat order (``seats[i]``). Public values (actor, events, pots, views) use seats.
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tables.engine import errors
from tables.engine.actions import Action, ActionKind, LegalActions, refuse_bet_raise
from tables.engine.betting import Limits, Street, is_capped, min_raise_increment, raise_bounds
from tables.engine.cards import card_str
from tables.engine.config import KillInfo, TableConfig
from tables.engine.pots import Pot, build_pots
from tables.engine.run_twice import RunTwice, verify_answer
from tables.engine.settle import HandResult


class PlayerStatus(StrEnum):
    """Where a player dealt in stands."""

    IN = "in"  # can still act
    FOLDED = "folded"
    ALL_IN = "all_in"
    PROTECTED = "protected"  # all-in protection after a timeout (RULES.md section 5)


@dataclass(slots=True)
class HandState:
    """One hand in progress or finished. Treat as immutable unless you own it (see
    :func:`tables.engine.act.apply_in_place`).

    Per-player lists are indexed like ``seats``. See :mod:`tables.engine.state` for the
    betting model these fields describe.
    """

    # Fixed for the whole hand.
    config: TableConfig
    hand_id: str
    button: int
    seats: tuple[int, ...]
    players: tuple[str, ...]
    # The players' stable ids in the room beside their names (None: not given, or a
    # state stored before they were kept).
    player_ids: tuple[int | None, ...]
    starting_stacks: tuple[int, ...]
    auto_muck: tuple[bool, ...]
    hole: tuple[tuple[int, ...], ...]
    deck: tuple[int, ...]
    deck_commitment: str | None
    limits: Limits
    small_blind_index: int
    big_blind_index: int
    straddler: int | None
    killer: int | None
    kill: KillInfo | None
    overblinder: int | None
    chop_possible: bool
    # Changing as the hand goes.
    street: Street
    board: list[int]
    stacks: list[int]
    status: list[PlayerStatus]
    committed: list[int]
    contributed: list[int]
    antes: list[int]
    acted: list[bool]
    shown: list[bool]
    # The players who can still act (status IN), in the round's acting order.
    order: tuple[int, ...]
    actor_index: int | None
    to_match: int
    last_raise: int
    full_bets: int
    aggressor: int | None
    runout: bool
    over: bool
    result: HandResult | None
    # What the live blinds posted all-in for less lack of their nominal amounts: the
    # preflop pot-limit maximum counts them as posted in full (finer point 18). Last and
    # with defaults, so that states saved before they existed still load (as does the
    # agreement to run it twice, None when nobody was asked: tables/engine/run_twice.py).
    blind_shortfall: int = 0
    run_twice: RunTwice | None = None

    def copy(self) -> HandState:
        """A copy sharing the immutable parts and owning fresh per-player lists."""
        new = HandState(*_FIELD_VALUES(self))
        for name in _CHANGING_LISTS:
            setattr(new, name, getattr(self, name).copy())
        return new

    # -- simple queries -----------------------------------------------------------------

    @property
    def actor(self) -> int | None:
        """Seat of the player to act; None once the hand is over."""
        return None if self.actor_index is None else self.seats[self.actor_index]

    @property
    def is_over(self) -> bool:
        """True once the hand is settled (``result`` is set)."""
        return self.over

    @property
    def asking_run_twice(self) -> bool:
        """True while the players all-in are asked whether to run it twice."""
        return self.run_twice is not None and self.run_twice.runs == 0

    @property
    def pot_total(self) -> int:
        """Every chip in the middle now (collected pots plus this street's bets)."""
        return 0 if self.over else sum(self.contributed)

    @property
    def pots(self) -> list[Pot]:
        """Pots collected so far (bets of the current street not included).

        Once the hand is over: the final pots before rake.
        """
        if self.result is not None:
            return list(self.result.pots)
        collected = [c - k for c, k in zip(self.contributed, self.committed, strict=True)]
        return build_pots(self.seats, collected, self.live())

    def live(self) -> list[bool]:
        """Per player: still in the hand (not folded)."""
        folded = PlayerStatus.FOLDED
        return [s is not folded for s in self.status]

    def index_of(self, seat: int) -> int:
        """Player index of ``seat`` (ValueError if that seat is not dealt in)."""
        return self.seats.index(seat)

    def stack_of(self, seat: int) -> int:
        """Chips behind of the player at ``seat``."""
        return self.stacks[self.seats.index(seat)]

    # -- what a player may do ------------------------------------------------------------

    def to_call(self, i: int) -> int:
        """Chips player ``i`` needs to add to call (before the stack cap).

        When nobody else can act (everyone else still in is all-in), only the largest
        commitment of the players still in is worth calling, which may be below
        ``to_match``.
        """
        committed = self.committed[i]
        if committed >= self.to_match:
            return 0
        if len(self.order) > (i in self.order):  # someone else can still act
            return self.to_match - committed
        in_hand = max(c for c, live in zip(self.committed, self.live(), strict=True) if live)
        return max(0, min(self.to_match, in_hand) - committed)

    def raise_range(self, i: int) -> tuple[int | None, int | None, str | None, int]:
        """``(min_to, max_to, raise_closed, full_to)`` of a bet/raise by player ``i``.

        ``raise_closed`` says why none is possible although chips are behind; ``full_to``
        is the smallest "to" of a full bet or raise (0 when none is allowed): an allowed
        bet below it is an all-in for less.
        """
        committed = self.committed[i]
        all_in_to = committed + self.stacks[i]
        if all_in_to <= self.to_match:
            return None, None, None, 0
        # Nobody may bet unless someone else still in could call part of it (finer point 20).
        if not any(
            j != i and self.committed[j] + self.stacks[j] > self.to_match for j in self.order
        ):
            return None, None, "opponents_all_in", 0
        if is_capped(self.limits, self.full_bets):
            return None, None, "betting_capped", 0
        if self.acted[i] and self.to_match - committed < min_raise_increment(
            self.limits, self.street, self.last_raise
        ):
            # Finer points 1, 19, 21: the short all-ins since this player acted leave them
            # facing less than a full bet or raise; together they may reach one.
            return None, None, "raise_not_reopened", 0
        pot_total = sum(self.contributed)
        if self.street is Street.PREFLOP:
            pot_total += self.blind_shortfall  # finer point 18: every blind in full
        low, high = raise_bounds(
            self.limits,
            self.street,
            to_match=self.to_match,
            last_raise=self.last_raise,
            committed=committed,
            pot_total=pot_total,
        )
        if all_in_to < low:
            return all_in_to, all_in_to, None, low
        return low, (all_in_to if high is None or high > all_in_to else high), None, low

    # -- the verify / can pair (apply is in tables.engine.act) ---------------------------

    def legal_actions(self) -> LegalActions:
        """The options of the player to act (raises HandOver when the hand is over)."""
        if self.over or self.actor_index is None:
            raise errors.HandOver("The hand is over.")
        i = self.actor_index
        stack = self.stacks[i]
        to_call = self.to_call(i)
        call_amount = min(to_call, stack) if to_call else None
        min_to, max_to, closed, _ = self.raise_range(i)
        return LegalActions(
            seat=self.seats[i],
            can_fold=to_call > 0,
            can_check=to_call == 0,
            call_amount=call_amount,
            call_all_in=call_amount is not None and call_amount == stack,
            is_bet=self.to_match == 0,
            min_to=min_to,
            max_to=max_to,
            all_in_to=self.committed[i] + stack,
            raise_closed=closed,
        )

    def verify(self, action: Action) -> LegalActions | None:
        """Raise the precise IllegalAction if ``action`` is not allowed; else the options."""
        if self.over:
            raise errors.HandOver("The hand is over.")
        if self.asking_run_twice or action.kind is ActionKind.RUN_TWICE:
            verify_answer(self, action)
            return None  # (an answer to run it twice is not a turn: no options)
        if action.seat != self.actor:
            raise errors.NotYourTurn(f"It is seat {self.actor}'s turn, not seat {action.seat}'s.")
        legal = self.legal_actions()
        kind = action.kind
        if kind is ActionKind.FOLD:
            if not legal.can_fold:
                raise errors.NoSuchAction("You can check for free; folding is not offered.")
        elif kind is ActionKind.CHECK:
            if not legal.can_check:
                raise errors.NoSuchAction(
                    f"You cannot check: it costs {legal.call_amount} to call."
                )
        elif kind is ActionKind.CALL:
            if legal.call_amount is None:
                raise errors.NoSuchAction("There is nothing to call; you can check.")
        elif kind is ActionKind.BET_RAISE:
            refuse_bet_raise(legal, action.to, self.limits.structure)
        return legal

    def can(self, action: Action) -> bool:
        """True when ``apply(self, action)`` would be accepted."""
        try:
            self.verify(action)
        except errors.IllegalAction:
            return False
        return True

    # -- views --------------------------------------------------------------------------

    def view(self, seat: int | None) -> dict[str, Any]:
        """What the player at ``seat`` (None: a spectator) may see, as plain JSON.

        Hole cards: the viewer's own, and others' only once shown at showdown.
        """
        players = []
        for i, s in enumerate(self.seats):
            visible = s == seat or self.shown[i]
            players.append(
                {
                    "seat": s,
                    "player": self.players[i],
                    "player_id": self.player_ids[i],
                    "stack": self.stacks[i],
                    "committed": self.committed[i],
                    "in_pot": self.contributed[i],
                    "status": str(self.status[i]),
                    "cards": [card_str(c) for c in self.hole[i]] if visible else None,
                    "shown": self.shown[i],
                }
            )
        legal = None
        if not self.over and seat is not None and seat == self.actor:
            legal = self.legal_actions().to_dict()
        if self.kill:
            limit_reason = "kill"
        elif self.overblinder is not None:
            limit_reason = "overblind"
        else:
            limit_reason = None
        return {
            "hand_id": self.hand_id,
            "game": str(self.config.game),
            "structure": str(self.config.structure),
            "limits": self.limits.to_dict(),
            # Why the limits are not the table's own this hand: "kill", "overblind" or None.
            "limit_reason": limit_reason,
            "button": self.button,
            "street": str(self.street),
            "board": [card_str(c) for c in self.board],
            "pots": [p.to_dict() for p in self.pots],
            "pot_total": self.pot_total,
            "to_match": self.to_match,
            "actor": self.actor,
            "is_over": self.over,
            "players": players,
            "legal_actions": legal,
            "result": None if self.result is None else self.result.to_dict(),
            "deck_commitment": self.deck_commitment,
            "run_twice": None if self.run_twice is None else self.run_twice.view(),
        }

    def auditor_view(self) -> dict[str, Any]:
        """Everything, including every hole card and the deck order."""
        out = self.to_dict()
        out["deck_cards"] = [card_str(c) for c in self.deck]
        out["hole_cards"] = [
            {"seat": s, "cards": [card_str(c) for c in self.hole[i]]}
            for i, s in enumerate(self.seats)
        ]
        return out

    # -- JSON ---------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Lossless plain JSON form (cards as ints), the fields in declaration order."""
        out: dict[str, Any] = {}
        for name in _FIELD_NAMES:
            value = getattr(self, name)
            if name in _DICT_FIELDS:
                value = None if value is None else value.to_dict()
            elif name == "hole":
                value = [list(h) for h in value]
            elif name == "status":
                value = [str(s) for s in value]
            elif isinstance(value, StrEnum):
                value = str(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HandState:
        """Inverse of :meth:`to_dict`."""
        kwargs = dict(d)
        kwargs.setdefault("player_ids", [None] * len(d["seats"]))
        kwargs["config"] = TableConfig.from_dict(d["config"])
        kwargs["limits"] = Limits.from_dict(d["limits"])
        kwargs["kill"] = None if d["kill"] is None else KillInfo.from_dict(d["kill"])
        kwargs["result"] = None if d["result"] is None else HandResult.from_dict(d["result"])
        if (agreement := d.get("run_twice")) is not None:  # (absent in older states)
            kwargs["run_twice"] = RunTwice.from_dict(agreement)
        kwargs["hole"] = tuple(tuple(h) for h in d["hole"])
        kwargs["street"] = Street(d["street"])
        status = [PlayerStatus(s) for s in d["status"]]
        kwargs["status"] = status
        # Only players who can still act: states saved before ``order`` was kept that way
        # listed everyone.
        kwargs["order"] = tuple(j for j in d["order"] if status[j] is PlayerStatus.IN)
        for name in _TUPLE_FIELDS:
            kwargs[name] = tuple(d[name])
        for name in _LIST_FIELDS:
            kwargs[name] = list(d[name])
        return cls(**kwargs)


_FIELD_NAMES = tuple(field.name for field in dataclasses.fields(HandState))
#: Every field's value, in order (what the dataclass's ``__init__`` takes).
_FIELD_VALUES = operator.attrgetter(*_FIELD_NAMES)
#: The fields that change as the hand goes; every other field holds an immutable value.
_CHANGING_LISTS = (
    "board",
    "stacks",
    "status",
    "committed",
    "contributed",
    "antes",
    "acted",
    "shown",
)
#: Fields written as their own ``to_dict()`` (or None).
_DICT_FIELDS = frozenset(("config", "limits", "kill", "result", "run_twice"))
_TUPLE_FIELDS = ("seats", "players", "player_ids", "starting_stacks", "auto_muck", "deck")
_LIST_FIELDS = ("board", "stacks", "committed", "contributed", "antes", "acted", "shown")
