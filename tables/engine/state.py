"""The hand state machine: :class:`HandState`, :func:`start_hand` and :func:`apply`.

Design
======

One hand, from the posts to the payouts, as a value. Django never appears here; the
table layer (``tables/services``) owns persistence, timing, seating and broadcasting.

* **Pure transitions.** ``start_hand(config, seats, button=..., deck=...)`` builds the
  state and ``apply(state, action)`` returns a *new* state plus the events the action
  caused; the input is never mutated (a state is copied list by list, never deep-copied,
  which keeps ~thousands of hands per second). Illegal actions raise a subclass of
  :class:`~tables.engine.errors.IllegalAction` and change nothing.
  ``apply_in_place(state, action)`` is the same transition for a caller that owns the
  state and has no use for the old one (it skips the copy and returns the events);
  ``apply`` is a copy followed by ``apply_in_place``.
* **verify / can / do** (pokerkit's triad): ``state.legal_actions()`` is what the UI
  offers, ``state.verify(action)`` raises the precise error, ``state.can(action)`` is its
  boolean, and ``apply`` verifies then does. The bounds offered are exactly the bounds
  accepted (a property test checks min-1, min, max and max+1).
* **Automatic streets.** The ``apply`` that closes a betting round also returns uncalled
  bets, collects the pots, deals the next street, runs the board out when at most one
  player can still bet, and settles the hand (showdown, rake, payouts).
* **Injected deck.** The 52 cards come from the caller (``services/dealing.py`` shuffles
  with ``secrets.SystemRandom`` and publishes the commitment). Hole cards are dealt one
  at a time clockwise from the small blind; the board is the next cards of the deck in
  order -- *no burn cards* (they add nothing to a provably fair shuffled deck).
* **Players by index, seats at the edges.** Internally player ``i`` is the ``i``-th
  dealt-in seat in seat order; every public value (actor, events, pots, views) uses seat
  numbers.
* **JSON at any point.** ``to_dict``/``from_dict`` are lossless; ``view(seat)`` is what
  one seat (or a spectator, ``None``) may see, ``auditor_view()`` is everything.

Betting model
-------------

Per street: ``committed[i]`` (chips put in this street), ``to_match`` (what everyone must
reach), ``last_raise`` (size of the last full bet/raise), ``full_bets`` (limit cap count),
``acted[i]`` (acted since the last *full* bet or raise) and ``order`` (the players who
can still act, status ``IN``, in the round's acting order; a player leaves it on folding,
going all-in or being protected, so finding the next actor skips nobody). A player must
act when they are still in with chips and have not acted since the last full raise, or
are below ``to_match``. Forced live bets (blinds, straddle, kill blind, overblind,
newcomers' big blinds) are not actions, so their posters get the option when the action
comes back unraised. A short all-in raises ``to_match`` but clears nobody's ``acted``:
a player who already acted may then only call or fold, unless the short all-ins since
they acted leave them facing at least a full bet or raise (finer point 19).

Preflop ``to_match`` is the largest *nominal* forced live bet even if its poster was short
(finer point 17), and ``blind_shortfall`` (what the short posters lack) is counted in the
preflop pot-limit maximum (finer point 18);
the round's first actor is left of the big blind (left of the straddle); a killer with
``killer_acts_last`` and an overblinder are moved to the end of the preflop order. Post-flop
the first player left of the button opens.

Decisions documented here (RULES.md leaves them open)
------------------------------------------------------

* Folding is not offered when checking is free; a timeout checks in that case anyway.
* Nobody may bet or raise when no other player still in could call any of it (all the
  others are all-in or have no more chips than the current bet), as pokerkit does
  (finer point 20).
* Chop is decided automatically from the two blinds' ``chop`` preferences at the moment
  everyone else has folded to them (allowed only without straddle, kill, overblind or
  newcomer big blinds, with at least three players dealt in).
* A kill hand takes no straddle and no overblind; an overblind hand takes no straddle
  (the limits are already raised; never compounding, as finer point 5 says of kills).
  A straddle needs at least three players dealt in.
* Voluntary posts (straddle, overblind) need the chips to post them in full.
* A big blind (kill blind, newcomer's big blind) posted all-in for less still sets the
  amount to call for the others (finer point 17); a player who already covers every
  all-in opponent is not asked to act. A straddle or overblind is never posted short:
  it needs the chips to post it in full (above).
* Short all-ins never count toward the limit cap, and the next full raise is the last
  full increment on top of them (finer points 1 and 21, fixed limit too). They reopen the
  betting for a player who already acted only when together they leave that player
  facing at least the last full bet or raise (finer point 19); the minimum raise stays
  that full bet or raise.
* With ``killer_acts_last`` off the killer acts in seat order; their first turn in an
  unraised pot is their option (check or raise), as for any live blind.
* The kill multiplier is the one in the ``KillInfo`` passed in (the table's setting when
  the engine produced it).
* Hands are turned face up at once only after a run-out (betting stopped because at most
  one player could bet); a river that was bet and called shows in the normal order.
* All-in protection: the protected player is treated as all-in for what they have put in;
  the rest of their stack stays behind, untouched.

Module map
----------

``config`` (TableConfig), ``betting`` (limits and bet bounds), ``rounds`` (who acts,
closing rounds), ``pots``, ``rake``, ``settle`` (showdown, awards, chop), ``events``,
``actions`` (Action, LegalActions), ``errors``, ``positions`` (button and blinds),
``records`` (a cheaper ``__init__`` for the frozen records built on every hand),
``testing`` (stacked decks and scripted hands for tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from itertools import compress, repeat
from typing import Any, NoReturn

from tables.engine import errors, settle
from tables.engine.actions import (
    BET_RAISE,
    CALL,
    CHECK,
    FOLD,
    TIMEOUT,
    Action,
    ActionKind,
    LegalActions,
    refuse_bet_raise,
)
from tables.engine.betting import (
    PREFLOP,
    Limits,
    Street,
    is_capped,
    min_raise_increment,
    raise_bounds,
)
from tables.engine.cards import card_str
from tables.engine.config import (
    FL,
    FULL_KILL,
    HOLDEM,
    NL,
    NO_KILL,
    PL,
    SL,
    KillInfo,
    TableConfig,
)
from tables.engine.events import (
    Acted,
    Event,
    HandStarted,
    HoleCards,
    Posted,
    Protected,
    SeatInfo,
    TimedOut,
)
from tables.engine.positions import CLOCKWISE, CLOCKWISE_GETTERS, clockwise_order
from tables.engine.pots import Pot, build_pots
from tables.engine.records import Record
from tables.engine.rounds import (
    ALL_IN,
    FOLDED,
    IN,
    PROTECTED,
    PlayerStatus,
    close_round,
    lone_actor,
)
from tables.engine.settle import HandResult


class SeatEntry(Record):
    """A player dealt in to the hand, with their choices for it.

    ``posts_big_blind``: a newcomer posting a live big blind out of position (not allowed
    from the small-blind or button seat, finer point 16). ``straddle``/``overblind``: asks
    to post one (honoured when the table allows it and the seat qualifies). ``chop``: the
    "chop blinds" preference. ``auto_muck``: "auto-muck losing hands" (RULES.md section 3).

    A record (a tuple with named fields, :mod:`tables.engine.records`): ``start_hand``
    sorts the entries by seat as tuples and reads their fields as columns in C.
    """

    __slots__ = ()

    seat: int
    player: str
    stack: int
    posts_big_blind: bool = False
    straddle: bool = False
    overblind: bool = False
    chop: bool = False
    auto_muck: bool = True


@dataclass(slots=True)
class HandState:
    """One hand in progress or finished. Treat as immutable: use :func:`apply`.

    Per-player lists are indexed like ``seats``. See the module docstring for the model.
    """

    # Fixed for the whole hand.
    config: TableConfig
    hand_id: str
    button: int
    seats: tuple[int, ...]
    players: tuple[str, ...]
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
    # with a default, so that states saved before it existed still load.
    blind_shortfall: int = 0

    # -- copying ------------------------------------------------------------------------

    def copy(self) -> HandState:
        """A copy sharing the immutable parts and owning fresh per-player lists."""
        # Field by field, spelled out: apply() copies the state on every action, and plain
        # slot reads and writes cost a third of a getattr/setattr loop or of __init__.
        new = object.__new__(HandState)
        new.config = self.config
        new.hand_id = self.hand_id
        new.button = self.button
        new.seats = self.seats
        new.players = self.players
        new.starting_stacks = self.starting_stacks
        new.auto_muck = self.auto_muck
        new.hole = self.hole
        new.deck = self.deck
        new.deck_commitment = self.deck_commitment
        new.limits = self.limits
        new.small_blind_index = self.small_blind_index
        new.big_blind_index = self.big_blind_index
        new.straddler = self.straddler
        new.killer = self.killer
        new.kill = self.kill
        new.overblinder = self.overblinder
        new.chop_possible = self.chop_possible
        new.street = self.street
        new.board = self.board.copy()
        new.stacks = self.stacks.copy()
        new.status = self.status.copy()
        new.committed = self.committed.copy()
        new.contributed = self.contributed.copy()
        new.antes = self.antes.copy()
        new.acted = self.acted.copy()
        new.shown = self.shown.copy()
        new.order = self.order
        new.actor_index = self.actor_index
        new.to_match = self.to_match
        new.last_raise = self.last_raise
        new.full_bets = self.full_bets
        new.aggressor = self.aggressor
        new.runout = self.runout
        new.over = self.over
        new.result = self.result
        new.blind_shortfall = self.blind_shortfall
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
        return build_pots(self.seats, collected, [s is not FOLDED for s in self.status])

    def index_of(self, seat: int) -> int:
        """Player index of ``seat`` (ValueError if that seat is not dealt in)."""
        return self.seats.index(seat)

    def stack_of(self, seat: int) -> int:
        """Chips behind of the player at ``seat``."""
        return self.stacks[self.seats.index(seat)]

    # -- the verify / can / do triad ----------------------------------------------------

    def legal_actions(self) -> LegalActions:
        """The options of the player to act (raises HandOver when the hand is over)."""
        if self.over or self.actor_index is None:
            raise errors.HandOver("The hand is over.")
        i = self.actor_index
        stack = self.stacks[i]
        to_call = self._to_call(i)
        call_amount = min(to_call, stack) if to_call else None
        min_to, max_to, closed, _ = self._raise_range(i)
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

    def _to_call(self, i: int) -> int:
        """Chips player ``i`` needs to add to call (before the stack cap).

        When nobody else can act (everyone else still in is all-in), only the largest
        other commitment is worth calling, which may be below ``to_match``.
        """
        status = self.status
        committed = self.committed
        target = self.to_match
        if committed[i] >= target:  # no commitment is above to_match: nothing to call
            return 0
        # Counting in C first: someone else can act in almost every decision.
        if status.count(IN) - (status[i] is IN) == 0:
            # The largest commitment of the players still in, i's included: it caps the
            # call exactly as the largest other one does (at or below i's: nothing).
            in_hand = max(compress(committed, [s is not FOLDED for s in status]), default=0)
            if in_hand < target:
                target = in_hand
        to_call = target - committed[i]
        return to_call if to_call > 0 else 0

    def _raise_range(self, i: int) -> tuple[int | None, int | None, str | None, int]:
        """``(min_to, max_to, raise_closed, full_to)`` of a bet/raise by player ``i``.

        ``full_to`` is the smallest "to" of a full bet or raise (0 when none is allowed):
        an allowed bet below it is an all-in for less.
        """
        committed = self.committed
        stacks = self.stacks
        all_in_to = committed[i] + stacks[i]
        to_match = self.to_match
        if all_in_to <= to_match:
            return None, None, None, 0
        # Nobody may bet unless someone else still in could call part of it.
        for j in self.order:  # the players still in with chips
            if j != i and committed[j] + stacks[j] > to_match:
                break
        else:
            return None, None, "opponents_all_in", 0
        limits = self.limits
        if is_capped(limits, self.full_bets):
            return None, None, "betting_capped", 0
        street = self.street
        if self.acted[i] and to_match - committed[i] < min_raise_increment(
            limits, street, self.last_raise
        ):
            # Finer points 1, 19, 21: the short all-ins since this player acted leave them
            # facing less than a full bet or raise; together they may reach one.
            return None, None, "raise_not_reopened", 0
        pot_total = sum(self.contributed)
        if street is PREFLOP:
            pot_total += self.blind_shortfall  # finer point 18: every blind in full
        low, high = raise_bounds(
            limits,
            street,
            to_match=to_match,
            last_raise=self.last_raise,
            committed=committed[i],
            pot_total=pot_total,
        )
        if all_in_to < low:
            return all_in_to, all_in_to, None, low
        return low, (all_in_to if high is None or high > all_in_to else high), None, low

    def verify(self, action: Action) -> LegalActions:
        """Raise the precise IllegalAction if ``action`` is not allowed; else the options."""
        if self.over:
            raise errors.HandOver("The hand is over.")
        if action.seat != self.actor:
            raise errors.NotYourTurn(f"It is seat {self.actor}'s turn, not seat {action.seat}'s.")
        legal = self.legal_actions()
        kind = action.kind
        if kind is FOLD:
            if not legal.can_fold:
                raise errors.NoSuchAction("You can check for free; folding is not offered.")
        elif kind is CHECK:
            if not legal.can_check:
                raise errors.NoSuchAction(
                    f"You cannot check: it costs {legal.call_amount} to call."
                )
        elif kind is CALL:
            if legal.call_amount is None:
                raise errors.NoSuchAction("There is nothing to call; you can check.")
        elif kind is BET_RAISE:
            refuse_bet_raise(legal, action.to, self.limits.structure)
        elif kind is not TIMEOUT:  # pragma: no cover - ActionKind is closed
            raise errors.NoSuchAction(f"Unknown action {kind!r}.")
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
        return {
            "hand_id": self.hand_id,
            "game": str(self.config.game),
            "structure": str(self.config.structure),
            "limits": self.limits.to_dict(),
            # Why the limits are not the table's own this hand: "kill", "overblind" or None.
            "limit_reason": "kill"
            if self.kill
            else "overblind"
            if self.overblinder is not None
            else None,
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
        """Lossless plain JSON form (cards as ints)."""
        out: dict[str, Any] = {}
        for name in _FIELD_NAMES:
            value = getattr(self, name)
            if name in ("config", "limits", "kill", "result"):
                value = None if value is None else value.to_dict()
            elif name == "hole":
                value = [list(h) for h in value]
            elif isinstance(value, StrEnum):
                value = str(value)
            elif name == "status":
                value = [str(s) for s in value]
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HandState:
        """Inverse of :meth:`to_dict`."""
        kwargs = dict(d)
        kwargs["config"] = TableConfig.from_dict(d["config"])
        kwargs["limits"] = Limits.from_dict(d["limits"])
        kwargs["kill"] = None if d["kill"] is None else KillInfo.from_dict(d["kill"])
        kwargs["result"] = None if d["result"] is None else HandResult.from_dict(d["result"])
        kwargs["hole"] = tuple(tuple(h) for h in d["hole"])
        kwargs["street"] = Street(d["street"])
        kwargs["status"] = [PlayerStatus(s) for s in d["status"]]
        # Only players who can still act: states saved before ``order`` was kept that way
        # listed everyone.
        kwargs["order"] = tuple([j for j in d["order"] if kwargs["status"][j] is IN])
        for name in _TUPLE_FIELDS:
            kwargs[name] = tuple(d[name])
        for name in _LIST_FIELDS:
            kwargs[name] = list(d[name])
        return cls(**kwargs)


_FIELD_NAMES = tuple(f.name for f in fields(HandState))
_TUPLE_FIELDS = ("seats", "players", "starting_stacks", "auto_muck", "deck")
_LIST_FIELDS = ("board", "stacks", "committed", "contributed", "antes", "acted", "shown")


# ---------------------------------------------------------------------------------------
# Starting a hand
# ---------------------------------------------------------------------------------------


def start_hand(
    config: TableConfig,
    seats: Sequence[SeatEntry],
    *,
    button: int,
    deck: Sequence[int],
    hand_id: str = "",
    kill: KillInfo | None = None,
    deck_commitment: str | None = None,
) -> tuple[HandState, list[Event]]:
    """Post the forced bets, deal the hole cards and return the state and its events.

    ``seats`` are the players dealt in (any order); ``button`` one of their seats;
    ``deck`` the full 52-card order (dealt from index 0). ``kill`` is the previous hand's
    ``result.next_kill`` when the killer is still dealt in (ignored when the table plays
    no kills or the killer is not dealt in).
    """
    # (No comprehension here reads a local variable: that would make it a closure cell,
    # slower for every other use of it in this function; map and compress do instead.)
    table_limits = _checked(config)
    entries = sorted(seats)  # by seat: the first field (no two entries share a seat)
    n = len(entries)
    if not 2 <= n <= 10:
        raise errors.SetupError(f"A hand needs 2 to 10 players dealt in, not {n}.")
    # The entries' fields as columns (one pass, transposed in C). Here and in the other
    # zips of every hand the lengths are equal by construction: zip without a keyword
    # is called in C directly, at half the cost (hence the noqa: B905).
    columns = zip(*entries)  # noqa: B905
    seat_numbers, players, stacks_t, newcomer, straddles, overblinds, chops, auto_muck = columns
    if len(set(seat_numbers)) != n:
        raise errors.SetupError("A seat is dealt in twice.")
    stacks = list(stacks_t)
    if min(stacks) <= 0:
        raise errors.SetupError("Every player dealt in needs chips.")
    starting_stacks = stacks_t
    if button not in seat_numbers:
        raise errors.SetupError(f"The button seat {button} is not dealt in.")
    deck_t = tuple(deck)
    if len(deck_t) != 52 or set(deck_t) != _ALL_CARDS:  # a set: sorting costs more
        raise errors.SetupError("The deck must hold each of the 52 cards once.")

    b = seat_numbers.index(button)
    sb, bb = (b, (b + 1) % n) if n == 2 else ((b + 1) % n, (b + 2) % n)
    has_newcomers = True in newcomer
    for j in (sb, b) if has_newcomers else ():
        if newcomer[j]:
            raise errors.SetupError(
                f"Seat {seat_numbers[j]} cannot post a newcomer big blind from the "
                "small-blind or button seat; it waits until the button passes (finer point 16)."
            )
    bb_amount = config.big_blind
    # Kill (limit games only, validated): the killer must still be dealt in.
    killer: int | None = None
    kill_in_force: KillInfo | None = None
    if kill is not None and config.kill is not NO_KILL and kill.seat in seat_numbers:
        killer = seat_numbers.index(kill.seat)
        kill_in_force = KillInfo(kill.seat, kill.multiplier)
    # Overblind: one per hand, the first asking from the button's left (finer point 6).
    overblinder: int | None = None
    if config.allow_overblind and killer is None:
        for j in clockwise_order((b + 1) % n, n):
            if overblinds[j] and stacks_t[j] >= config.ante + 2 * bb_amount:
                overblinder = j
                break
    # Straddle: the player left of the big blind, three or more dealt in.
    straddler: int | None = None
    if config.allow_straddle and killer is None and overblinder is None and n >= 3:
        j = (bb + 1) % n
        if straddles[j] and stacks_t[j] >= config.ante + 2 * bb_amount:
            straddler = j
    if killer is not None and kill_in_force is not None:
        scale = kill_in_force.multiplier
    else:
        scale = FULL_KILL if overblinder is not None else NO_KILL
    limits = table_limits if scale is NO_KILL else Limits.for_hand(config, scale)

    committed = [0] * n
    contributed = [0] * n
    antes = [0] * n
    status = [IN] * n
    events: list[Event] = [
        HandStarted.of(  # its 17 fields, in order
            (
                hand_id,
                button,
                str(config.game),
                str(config.structure),
                tuple(map(SeatInfo.of, zip(seat_numbers, players, stacks_t))),  # noqa: B905
                config.small_blind,
                bb_amount,
                config.ante,
                limits.small_bet,
                limits.big_bet,
                limits.spread_min,
                limits.spread_max,
                limits.multiplier,
                kill_in_force,
                None if overblinder is None else seat_numbers[overblinder],  # overblind_seat
                None if straddler is None else seat_numbers[straddler],  # straddle_seat
                deck_commitment,
            )
        )
    ]

    # The forced bets as (player, kind, amount, live), in posting order: antes (dead),
    # then the blinds, the newcomers' big blinds and the special live bets.
    deal_order = CLOCKWISE[n][sb]
    ante = config.ante
    posts = (
        list(zip(deal_order, repeat("ante"), repeat(ante), repeat(False), strict=False))
        if ante
        else []
    )
    special: dict[int, tuple[str, int]] = {}
    if killer is not None:
        kill_blind = limits.small_bet if config.structure is FL else limits.spread_min
        special[killer] = ("kill_blind", kill_blind)
    if overblinder is not None:
        special[overblinder] = ("overblind", 2 * bb_amount)
    if straddler is not None:
        special[straddler] = ("straddle", 2 * bb_amount)
    nominal = [0]
    if sb not in special:
        posts.append((sb, "small_blind", config.small_blind, True))
        nominal.append(min(config.small_blind, bb_amount))
    if bb not in special:
        posts.append((bb, "big_blind", bb_amount, True))
        nominal.append(bb_amount)
    newcomers = False
    for j in deal_order if has_newcomers else ():
        if newcomer[j] and j not in (sb, bb) and j not in special:
            posts.append((j, "newcomer_big_blind", bb_amount, True))
            nominal.append(bb_amount)
            newcomers = True
    for j, (kind, amount) in special.items():
        posts.append((j, kind, amount, True))
        nominal.append(amount)
    blind_shortfall = 0
    for j, kind, amount, live in posts:
        stack = stacks[j]
        paid = amount if amount < stack else stack
        if live and paid < amount:  # a blind posted all-in for less (finer points 17-18)
            blind_shortfall += amount - paid
        if paid <= 0:  # all-in from the ante already
            continue
        stacks[j] = stack = stack - paid
        contributed[j] += paid
        if live:
            committed[j] += paid
        else:
            antes[j] += paid
        if not stack:
            status[j] = ALL_IN
        events.append(Posted.of((seat_numbers[j], kind, paid, not stack)))

    # Hole cards: one at a time clockwise from the small blind, so the player in deal
    # position p gets the deck's cards p, p + n, p + 2n, ... (a slice with step n).
    hole_cards = 2 if config.game is HOLDEM else 4  # config.game.hole_cards, inlined
    in_deal_order = list(map(deck_t.__getitem__, _DEAL_SLICES[hole_cards][n]))
    dealt_to = CLOCKWISE_GETTERS[n][sb](seat_numbers)
    events.extend(map(HoleCards.of, zip(dealt_to, in_deal_order)))  # noqa: B905
    hole = CLOCKWISE_GETTERS[n][(n - sb) % n](in_deal_order)  # back to seat order

    # Preflop order and bet levels.
    first = ((straddler if straddler is not None else bb) + 1) % n
    order: Sequence[int] = CLOCKWISE[n][first]
    last = killer if (killer is not None and config.killer_acts_last) else overblinder
    if last is not None:
        order = list(order)
        order.remove(last)
        order.append(last)
    to_match = max(nominal)
    if config.structure is PL or config.structure is NL:
        last_raise = max(bb_amount, to_match)  # finer point 4: the straddle is a bigger BB
    elif config.structure is SL:
        last_raise = to_match - bb_amount if straddler is not None else to_match
    else:
        last_raise = limits.small_bet
    chop_possible = (
        config.allow_chop and n >= 3 and chops[sb] and chops[bb] and not special and not newcomers
    )
    # Field by field: a 38-keyword call costs four times as much (every hand starts here).
    state = object.__new__(HandState)
    state.config = config
    state.hand_id = hand_id
    state.button = button
    state.seats = seat_numbers
    state.players = players
    state.starting_stacks = starting_stacks
    state.auto_muck = auto_muck
    state.hole = hole
    state.deck = deck_t
    state.deck_commitment = deck_commitment
    state.limits = limits
    state.small_blind_index = sb
    state.big_blind_index = bb
    state.straddler = straddler
    state.killer = killer
    state.kill = kill_in_force
    state.overblinder = overblinder
    state.chop_possible = chop_possible
    state.street = PREFLOP
    state.board = []
    state.stacks = stacks
    state.status = status
    state.committed = committed
    state.contributed = contributed
    state.antes = antes
    state.acted = [False] * n
    state.shown = [False] * n
    # Only those who can act: the posts may have put some all-in.
    if ALL_IN in status:
        order = compress(order, [s is IN for s in map(status.__getitem__, order)])
    state.order = tuple(order)
    state.actor_index = None
    state.to_match = to_match
    state.last_raise = last_raise
    state.full_bets = 2 if straddler is not None else 1
    state.aggressor = None
    state.runout = False
    state.over = False
    state.result = None
    state.blind_shortfall = blind_shortfall
    # Nobody has acted yet: the first in order opens, when someone else can act too.
    state.actor_index = state.order[0] if len(state.order) > 1 else lone_actor(state)
    if state.actor_index is None:  # everyone is all-in from the posts
        close_round(state, events)
    return state, events


_ALL_CARDS = frozenset(range(52))
# _DEAL_SLICES[h][n][p]: the deck's slice of the h hole cards of deal position p of n.
_DEAL_SLICES = {h: [tuple(slice(p, h * n, n) for p in range(n)) for n in range(11)] for h in (2, 4)}


def _checked(config: TableConfig) -> Limits:
    """``config.validate()`` (raising its ConfigError) and the limits of an ordinary
    hand of ``config``, worked out once per configuration object: a table, a replay or a
    simulation plays many hands with one, and these cost a twentieth of a hand's start.

    Entries are keyed by the object's identity and hold the object, so that its id is
    not reused while it is remembered; a few dozen are kept at most.
    """
    known = _CHECKED.get(id(config))
    if known is not None and known[0] is config:
        return known[1]
    config.validate()
    limits = Limits.for_hand(config)
    if len(_CHECKED) >= _MAX_CHECKED:
        _CHECKED.clear()
    _CHECKED[id(config)] = (config, limits)
    return limits


_CHECKED: dict[int, tuple[TableConfig, Limits]] = {}
_MAX_CHECKED = 64


# ---------------------------------------------------------------------------------------
# Applying actions
# ---------------------------------------------------------------------------------------


def apply(state: HandState, action: Action) -> tuple[HandState, list[Event]]:
    """Apply ``action`` and return the new state and the events; ``state`` is untouched.

    Raises an :class:`~tables.engine.errors.IllegalAction` subclass (state unchanged) if
    the action is not allowed. Closing a round advances the hand as far as it goes
    without a decision (next street, run-out, showdown, settlement).
    """
    st = state.copy()  # an illegal action raises on the copy, which is then dropped
    return st, apply_in_place(st, action)


def apply_in_place(state: HandState, action: Action) -> list[Event]:
    """:func:`apply` for a caller that owns ``state`` and needs no copy: it becomes the
    new state. An illegal action raises before anything changes, as for :func:`apply`.

    For code that loads a state only to move it on (the table services, ``phh_replay``):
    copying the state is a tenth of the cost of an action.

    It accepts exactly what :meth:`HandState.verify` accepts, without building a
    :class:`LegalActions` (this runs on every action); a refused action goes through
    ``verify`` for its precise error. The turn then passes along ``state.order``.
    """
    i = state.actor_index
    seat = action.seat
    if i is None or seat != state.seats[i]:
        _refuse(state, action)  # the hand is over or it is not this seat's turn
    order = state.order
    committed = state.committed
    # When someone else can act the whole difference is to call (no commitment is above
    # to_match); otherwise only what the others still in put in is worth calling.
    to_call = state.to_match - committed[i] if len(order) > 1 else state._to_call(i)
    kind = action.kind
    events: list[Event] = []
    if kind is TIMEOUT:
        kind = _timeout(state, action, i, to_call, events)
    leaves = True  # the player can act no more this hand (folded, all-in or protected)
    if kind is CALL or kind is BET_RAISE:
        stacks = state.stacks
        stack = stacks[i]
        if kind is CALL:
            if not to_call:
                _refuse(state, action)
            amount = to_call if to_call < stack else stack
            word = "call"
            state.acted[i] = True
        else:
            to = action.to
            min_to, max_to, _, full_to = state._raise_range(i)
            if to is None or min_to is None or max_to is None or not min_to <= to <= max_to:
                _refuse(state, action)
            amount = to - committed[i]
            to_match = state.to_match
            word = "bet" if to_match == 0 else "raise"
            if to >= full_to:
                # A full bet or raise: reopens the betting for everyone.
                state.last_raise = to - to_match
                state.full_bets += 1
                state.acted = [False] * len(state.seats)
            state.acted[i] = True
            state.to_match = to
            state.aggressor = i
        stacks[i] = stack = stack - amount
        committed[i] = street_total = committed[i] + amount
        state.contributed[i] += amount
        if stack:
            leaves = False
            events.append(Acted.of((seat, word, amount, street_total, False)))
        else:
            state.status[i] = ALL_IN
            events.append(Acted.of((seat, word, amount, street_total, True)))
    elif kind is CHECK:
        if to_call:
            _refuse(state, action)
        state.acted[i] = True
        leaves = False
        events.append(Acted.of((seat, "check", 0, committed[i], False)))
    elif kind is FOLD:
        if not to_call:
            _refuse(state, action)
        state.acted[i] = True
        state.status[i] = FOLDED
        events.append(Acted.of((seat, "fold", 0, committed[i], False)))
    # else: a timeout that protected the player (all-in for what they put in)
    # Pass the turn along the order, from the player's place in it.
    p = order.index(i)
    if leaves:  # (folding around, the player leaving is the first of the order)
        state.order = order = order[1:] if p == 0 else order[:p] + order[p + 1 :]
        if kind is FOLD and state.chop_possible and _folded_to_blinds(state):
            settle.chop(state, events)
            return events
    else:
        p += 1
    n = len(order)
    if n > 1:
        acted = state.acted
        to_match = state.to_match
        j = order[p] if p < n else order[0]
        if not acted[j] or committed[j] < to_match:  # the usual case: the next in order
            state.actor_index = j
            return events
        for j in order[p:] + order[:p]:
            if not acted[j] or committed[j] < to_match:
                state.actor_index = j
                return events
        close_round(state, events)
        return events
    nxt = lone_actor(state)
    if nxt is None:
        close_round(state, events)
    else:
        state.actor_index = nxt
    return events


def _refuse(state: HandState, action: Action) -> NoReturn:
    """Raise the precise IllegalAction for an action the fast checks refused."""
    state.verify(action)
    raise AssertionError(f"verify() accepts {action!r}")  # pragma: no cover


def _timeout(
    st: HandState, action: Action, i: int, to_call: int, events: list[Event]
) -> ActionKind:
    """Resolve a timeout (RULES.md section 5): the action it becomes (check or fold), or
    TIMEOUT itself when the player is all-in protected (done here)."""
    seat = st.seats[i]
    if to_call == 0:
        resolution, kind = "check", CHECK
    elif (
        st.config.allin_protection
        and action.protection_allowed
        and st.contributed[i] > st.antes[i]  # finer point 8: antes do not count
    ):
        resolution, kind = "protected", TIMEOUT
    else:
        resolution, kind = "fold", FOLD
    events.append(TimedOut.of((seat, resolution)))
    if kind is TIMEOUT:
        st.status[i] = PROTECTED
        st.acted[i] = True
        events.append(Protected.of((seat, st.contributed[i])))
    return kind


def _folded_to_blinds(st: HandState) -> bool:
    """Everyone but the two blinds folded and neither blind has acted (chop moment)."""
    if st.street is not PREFLOP:
        return False
    sb, bb = st.small_blind_index, st.big_blind_index
    if st.acted[sb] or st.acted[bb]:
        return False
    return all((s is not FOLDED) == (j in (sb, bb)) for j, s in enumerate(st.status))
