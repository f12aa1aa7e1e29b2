"""Betting-round machinery of the hand state machine (see :mod:`tables.engine.state`).

These functions work on a state that ``start_hand``/``apply_in_place`` own and mutate it:
who acts when at most one player can, closing a round (uncalled bet, pots, next street
or run-out) and dealing board cards.
"""

from __future__ import annotations

from enum import StrEnum
from itertools import compress
from typing import TYPE_CHECKING

from tables.engine import settle
from tables.engine.betting import BOARD_CARDS, NEXT_STREET, PREFLOP, RIVER, Street
from tables.engine.events import DealtBoard, Event, Pots, UncalledReturned
from tables.engine.positions import CLOCKWISE, CLOCKWISE_GETTERS
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


def lone_actor(st: HandState) -> int | None:
    """The player to act when at most one can (``st.order``: the players still in with
    chips; everyone else is all-in or folded): that player if they still have
    something to call, else None (the round is over)."""
    order = st.order
    if not order:
        return None
    j = order[0]
    return j if st._to_call(j) else None


def close_round(st: HandState, events: list[Event]) -> None:
    """End the betting round and move the hand on as far as it goes."""
    st.actor_index = None
    contributed = st.contributed
    status = st.status
    excess = uncalled_excess(contributed)
    if excess is not None:
        j, amount = excess
        contributed[j] -= amount
        st.stacks[j] += amount
        if status[j] is ALL_IN:
            status[j] = IN  # chips behind again (betting is over for them anyway)
        events.append(UncalledReturned.of((st.seats[j], amount)))
    n = len(status)
    st.committed = [0] * n  # (the street's bets, the returned part included, are in)
    live = [s is not FOLDED for s in status]
    pots = tuple(build_pots(st.seats, contributed, live))  # for the event and the result
    street = st.street
    events.append(Pots.of((str(street), pots)))
    # Settling gets these pots: nobody's contribution changes from here to the payouts.
    if live.count(True) == 1:
        settle.finish_uncontested(st, events, pots, live)
        return
    if street is RIVER:
        settle.showdown(st, events, pots, live)
        return
    if status.count(IN) <= 1:
        # At most one player can still bet: run the board out (RULES.md 3.7).
        st.runout = True
        while st.street is not RIVER:
            deal_street(st, NEXT_STREET[st.street], events)
        settle.showdown(st, events, pots, live)
        return
    if street is PREFLOP:
        # After the flop the players who can act do so clockwise from the button's left.
        first = (st.seats.index(st.button) + 1) % n
        can_act = [s is IN for s in CLOCKWISE_GETTERS[n][first](status)]
        st.order = tuple(compress(CLOCKWISE[n][first], can_act))
    # (Later streets keep that order: it already lacks exactly those who left.)
    street = NEXT_STREET[street]
    deal_street(st, street, events)
    st.to_match = 0
    st.last_raise = st.limits.min_bet(street)
    st.full_bets = 0
    st.acted = [False] * n
    st.aggressor = None
    # Two or more can act (else the board ran out above) and nobody has yet: the first.
    st.actor_index = st.order[0]


def deal_street(st: HandState, street: Street, events: list[Event]) -> None:
    """Deal the board cards of ``street`` (the next cards of the deck, no burn)."""
    board = st.board
    start = len(st.seats) * len(st.hole[0]) + len(board)  # after the hole cards dealt
    cards = st.deck[start : start + BOARD_CARDS[street] - len(board)]  # a tuple
    board.extend(cards)
    st.street = street
    events.append(DealtBoard.of((str(street), cards)))
