"""Closing betting rounds (see :mod:`tables.engine.state` for the model).

These functions work on a state that ``start_hand``/``apply_in_place`` own and change
it: who acts when at most one player can, closing a round (uncalled bet, pots, next
street or run-out, settlement) and dealing board cards.
"""

from __future__ import annotations

from tables.engine import run_twice, settle
from tables.engine.betting import BOARD_CARDS, NEXT_STREET, Street
from tables.engine.events import DealtBoard, Event, Pots, UncalledReturned
from tables.engine.hand_state import HandState, PlayerStatus
from tables.engine.positions import clockwise_order
from tables.engine.pots import build_pots, uncalled_excess


def lone_actor(st: HandState) -> int | None:
    """The player to act when at most one can (``st.order``: the players still in with
    chips; everyone else is all-in or folded): that player if they still have
    something to call, else None (the round is over)."""
    if not st.order:
        return None
    j = st.order[0]
    return j if st.to_call(j) else None


def close_round(st: HandState, events: list[Event]) -> None:
    """End the betting round and move the hand on as far as it goes."""
    st.actor_index = None
    excess = uncalled_excess(st.contributed)
    if excess is not None:
        j, amount = excess
        st.contributed[j] -= amount
        st.stacks[j] += amount
        if st.status[j] is PlayerStatus.ALL_IN:
            st.status[j] = PlayerStatus.IN  # chips behind again (betting is over for them)
        st.committed[j] -= amount
        events.append(
            UncalledReturned(
                seat=st.seats[j],
                amount=amount,
                stack=st.stacks[j],
                committed=st.committed[j],
                in_pot=st.contributed[j],
                to_match=max(st.committed),
                pot_total=sum(st.contributed),
            )
        )
    n = len(st.seats)
    st.committed = [0] * n  # (the street's bets, the returned part included, are in)
    live = st.live()
    pots = tuple(build_pots(st.seats, st.contributed, live))
    events.append(Pots(street=str(st.street), pots=pots))
    # Settling gets these pots: nobody's contribution changes from here to the payouts.
    if live.count(True) == 1:
        settle.finish_uncontested(st, events, pots, live)
        return
    if st.street is Street.RIVER:
        settle.showdown(st, events, pots, live)
        return
    if st.status.count(PlayerStatus.IN) <= 1:
        # At most one player can still bet: run the board out (RULES.md 3.7), or first
        # ask the players whether to run it twice.
        st.runout = True
        if run_twice.offered(st, live):
            run_twice.ask(st, live, events)
            return
        while (street := NEXT_STREET.get(st.street)) is not None:
            deal_street(st, street, events)
        settle.showdown(st, events, pots, live)
        return
    if st.street is Street.PREFLOP:
        # After the flop the players who can act do so clockwise from the button's left.
        first = (st.seats.index(st.button) + 1) % n
        st.order = tuple(j for j in clockwise_order(first, n) if st.status[j] is PlayerStatus.IN)
    # (Later streets keep that order: it already lacks exactly those who left.)
    street = NEXT_STREET[st.street]
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
    start = len(st.seats) * len(st.hole[0]) + len(st.board)  # after the hole cards dealt
    cards = st.deck[start : start + BOARD_CARDS[street] - len(st.board)]
    st.board.extend(cards)
    st.street = street
    events.append(DealtBoard(street=str(street), cards=cards))
