"""Acting in a hand: :func:`apply` and :func:`apply_in_place` (the "do" of verify/can/do).

Both verify the action first (an illegal one raises the
:class:`~tables.engine.errors.IllegalAction` that :meth:`HandState.verify
<tables.engine.hand_state.HandState.verify>` raises, and nothing changes), then:

1. resolve a timeout (RULES.md section 5): a check when checking is free, all-in
   protection when the table and the player's daily allowance allow it and the player
   has put in more than antes, else a fold;
2. do the action: chips from the stack to the street's commitment; a full bet or raise
   reopens the betting for everyone, a short all-in moves ``to_match`` only;
3. pass the turn along ``state.order`` to the next player who has not acted since the
   last full raise or is below ``to_match``; when nobody is left the round closes
   (:func:`tables.engine.rounds.close_round`: next street, run-out or settlement). A
   fold that leaves only the two blinds, neither having acted, chops when both asked.
"""

from __future__ import annotations

from typing import NoReturn

from tables.engine import run_twice, settle
from tables.engine.actions import Action, ActionKind
from tables.engine.betting import Street
from tables.engine.events import Acted, Event, Protected, TimedOut
from tables.engine.hand_state import HandState, PlayerStatus
from tables.engine.rounds import close_round, lone_actor


def apply(state: HandState, action: Action) -> tuple[HandState, list[Event]]:
    """Apply ``action`` and return the new state and the events; ``state`` is untouched.

    Raises an :class:`~tables.engine.errors.IllegalAction` subclass if the action is not
    allowed. Closing a round advances the hand as far as it goes without a decision
    (next street, run-out, showdown, settlement).
    """
    new = state.copy()
    return new, apply_in_place(new, action)


def apply_in_place(state: HandState, action: Action) -> list[Event]:
    """:func:`apply` for a caller that owns ``state`` and needs no copy: it becomes the
    new state and the events are returned (the table services and ``phh_replay`` load a
    state only to move it on). An illegal action raises before anything changes.

    The action is checked against the same numbers :meth:`HandState.legal_actions`
    offers (what to call, the bet or raise bounds), worked out once; an action they
    refuse goes through :meth:`HandState.verify` for its precise error.
    """
    if state.asking_run_twice:
        return run_twice.answer_in_place(state, action)
    i = state.actor_index
    if i is None or action.seat != state.seats[i] or action.kind is ActionKind.RUN_TWICE:
        _refuse(state, action)  # over, not this seat's turn, or nobody asked to run twice
    to_call = state.to_call(i)
    events: list[Event] = []
    kind: ActionKind = action.kind
    if kind is ActionKind.TIMEOUT:
        kind = _timeout(state, action, i, to_call, events)
    if kind is ActionKind.CALL:
        if not to_call:
            _refuse(state, action)
        state.acted[i] = True
        _put_in(state, i, min(to_call, state.stacks[i]), "call", events)
    elif kind is ActionKind.BET_RAISE:
        min_to, max_to, _, full_to = state.raise_range(i)
        to = action.to
        if to is None or min_to is None or max_to is None or not min_to <= to <= max_to:
            _refuse(state, action)
        _bet_raise(state, i, to, full_to, events)
    elif kind is ActionKind.CHECK:
        if to_call:
            _refuse(state, action)
        state.acted[i] = True
        _acted(state, i, "check", 0, events)
    elif kind is ActionKind.FOLD:
        if not to_call:
            _refuse(state, action)
        state.acted[i] = True
        state.status[i] = PlayerStatus.FOLDED
        _acted(state, i, "fold", 0, events)
    # (else a timeout protected the player: all-in for what they put in, done above)
    _pass_turn(state, i, folded=kind is ActionKind.FOLD, events=events)
    return events


def _refuse(state: HandState, action: Action) -> NoReturn:
    """Raise the precise IllegalAction of an action the checks above refused."""
    state.verify(action)
    raise AssertionError(f"verify() accepts {action!r}, which apply refused")


def _put_in(state: HandState, i: int, amount: int, word: str, events: list[Event]) -> None:
    """Move ``amount`` from player ``i``'s stack to the pot (a call, bet or raise)."""
    state.stacks[i] -= amount
    state.committed[i] += amount
    state.contributed[i] += amount
    if state.stacks[i] == 0:
        state.status[i] = PlayerStatus.ALL_IN
    _acted(state, i, word, amount, events)


def _acted(state: HandState, i: int, word: str, amount: int, events: list[Event]) -> None:
    """The Acted event of player ``i``'s decision, once it is done."""
    events.append(
        Acted(
            seat=state.seats[i],
            action=word,
            amount=amount,
            street_total=state.committed[i],
            all_in=state.status[i] is PlayerStatus.ALL_IN,
            stack=state.stacks[i],
            in_pot=state.contributed[i],
            to_match=state.to_match,
            pot_total=sum(state.contributed),
        )
    )


def _bet_raise(state: HandState, i: int, to: int, full_to: int, events: list[Event]) -> None:
    """A bet or raise to ``to`` (within the bounds); ``full_to`` is the smallest full one."""
    word = "bet" if state.to_match == 0 else "raise"
    if to >= full_to:
        # A full bet or raise: reopens the betting for everyone.
        state.last_raise = to - state.to_match
        state.full_bets += 1
        state.acted = [False] * len(state.seats)
    state.acted[i] = True
    state.to_match = to
    state.aggressor = i
    _put_in(state, i, to - state.committed[i], word, events)


def _timeout(
    state: HandState, action: Action, i: int, to_call: int, events: list[Event]
) -> ActionKind:
    """What a timeout becomes (check or fold), or TIMEOUT itself when the player is
    all-in protected (done here)."""
    if to_call == 0:
        resolution, kind = "check", ActionKind.CHECK
    elif (
        state.config.allin_protection
        and action.protection_allowed
        and state.contributed[i] > state.antes[i]  # finer point 8: antes do not count
    ):
        resolution, kind = "protected", ActionKind.TIMEOUT
    else:
        resolution, kind = "fold", ActionKind.FOLD
    events.append(TimedOut(seat=action.seat, resolution=resolution))
    if kind is ActionKind.TIMEOUT:
        state.status[i] = PlayerStatus.PROTECTED
        state.acted[i] = True
        events.append(Protected(seat=action.seat, amount_in=state.contributed[i]))
    return kind


def _pass_turn(state: HandState, i: int, *, folded: bool, events: list[Event]) -> None:
    """Give the turn to the next player in order who must act, or close the round."""
    order = state.order
    p = order.index(i)
    if state.status[i] is not PlayerStatus.IN:  # folded, all-in or protected: out of it
        state.order = order = order[:p] + order[p + 1 :]
        if folded and state.chop_possible and _folded_to_blinds(state):
            settle.chop(state, events)
            return
    else:
        p += 1
    if len(order) > 1:
        for j in order[p:] + order[:p]:
            if not state.acted[j] or state.committed[j] < state.to_match:
                state.actor_index = j
                return
        close_round(state, events)
        return
    state.actor_index = lone_actor(state)
    if state.actor_index is None:
        close_round(state, events)


def _folded_to_blinds(state: HandState) -> bool:
    """Everyone but the two blinds folded and neither blind has acted (chop moment)."""
    if state.street is not Street.PREFLOP:
        return False
    sb, bb = state.small_blind_index, state.big_blind_index
    if state.acted[sb] or state.acted[bb]:
        return False
    return all(
        (s is not PlayerStatus.FOLDED) == (j in (sb, bb)) for j, s in enumerate(state.status)
    )
