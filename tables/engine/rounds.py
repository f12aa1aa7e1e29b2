"""Betting-round machinery of the hand state machine (see :mod:`tables.engine.state`).

These functions work on a *private, freshly copied* :class:`~tables.engine.state.HandState`
inside ``start_hand``/``apply`` and mutate it: who must act next, closing a round
(uncalled bet, pots, next street or run-out) and dealing board cards.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from tables.engine import settle
from tables.engine.betting import NEXT_STREET, Street
from tables.engine.events import DealtBoard, Event, PotInfo, Pots, UncalledReturned
from tables.engine.positions import clockwise_tuple
from tables.engine.pots import build_pots, uncalled_excess

if TYPE_CHECKING:
    from tables.engine.state import HandState


class PlayerStatus(StrEnum):
    """Where a player dealt in stands."""

    IN = "in"  # can still act
    FOLDED = "folded"
    ALL_IN = "all_in"
    PROTECTED = "protected"  # all-in protection after a timeout (RULES.md section 5)


IN = PlayerStatus.IN
FOLDED = PlayerStatus.FOLDED
ALL_IN = PlayerStatus.ALL_IN
PROTECTED = PlayerStatus.PROTECTED


def next_actor(st: HandState, after: int | None) -> int | None:
    """The next player in the round's order who must act, after ``after`` (None: first).

    A player must act when they are still in with chips (status ``IN``), somebody else
    is still in the hand, and either they have not acted since the last full bet or
    raise or they are below ``to_match``. When nobody else can act (all-in), only
    calling or folding to the largest other commitment can matter.
    """
    status = st.status
    live = len(status) - status.count(FOLDED)
    if live < 2:
        return None
    order = st.order
    if after is not None:  # the round's order, starting after ``after``
        start = order.index(after) + 1
        order = order[start:] + order[:start]
    acted = st.acted
    committed = st.committed
    to_match = st.to_match
    # Counted in C: in almost every round two or more players can still act.
    if status.count(IN) > 1:
        for j in order:
            if status[j] is IN and (not acted[j] or committed[j] < to_match):
                return j
        return None
    # Nobody else can act: call the largest other commitment or not.
    for j in order:
        if status[j] is IN:
            max_other = max(
                (c for m, c in enumerate(committed) if m != j and status[m] is not FOLDED),
                default=0,
            )
            if committed[j] < max_other:
                return j
    return None


def advance(st: HandState, events: list[Event], after: int) -> None:
    """Pass the turn on, or close the round when nobody needs to act."""
    nxt = next_actor(st, after)
    if nxt is not None:
        st.actor_index = nxt
    else:
        close_round(st, events)


def close_round(st: HandState, events: list[Event]) -> None:
    """End the betting round and move the hand on as far as it goes."""
    st.actor_index = None
    excess = uncalled_excess(st.contributed)
    if excess is not None:
        j, amount = excess
        st.contributed[j] -= amount
        st.committed[j] -= amount
        st.stacks[j] += amount
        if st.status[j] is ALL_IN:
            st.status[j] = IN  # chips behind again (betting is over for them anyway)
        events.append(UncalledReturned.of((st.seats[j], amount)))
    n = len(st.seats)
    st.committed = [0] * n
    live = [s is not FOLDED for s in st.status]
    pots = build_pots(st.seats, st.contributed, live)
    # A Pot and a PotInfo hold the same two values: the event copies them.
    events.append(Pots.of((str(st.street), tuple(map(PotInfo.of, pots)))))
    # Settling gets these pots: nobody's contribution changes from here to the payouts.
    if sum(live) == 1:
        settle.finish_uncontested(st, events, pots)
        return
    if st.street is Street.RIVER:
        settle.showdown(st, events, pots)
        return
    if st.status.count(IN) <= 1:
        # At most one player can still bet: run the board out (RULES.md 3.7).
        st.runout = True
        while st.street is not Street.RIVER:
            deal_street(st, NEXT_STREET[st.street], events)
        settle.showdown(st, events, pots)
        return
    deal_street(st, NEXT_STREET[st.street], events)
    st.to_match = 0
    st.last_raise = st.limits.min_bet(st.street)
    st.full_bets = 0
    st.acted = [False] * n
    st.aggressor = None
    st.order = clockwise_tuple((st.seats.index(st.button) + 1) % n, n)
    st.actor_index = next_actor(st, None)


def deal_street(st: HandState, street: Street, events: list[Event]) -> None:
    """Deal the board cards of ``street`` (the next cards of the deck, no burn)."""
    start = len(st.seats) * st.config.game.hole_cards + len(st.board)
    cards = st.deck[start : start + street.board_cards - len(st.board)]
    st.board.extend(cards)
    st.street = street
    events.append(DealtBoard.of((str(street), tuple(cards))))
