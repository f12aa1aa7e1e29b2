"""Advance actions: what a player ticks before their turn (RULES-like "pre-action" buttons).

A player not yet to act may queue fold, check, check/fold, call, call any or bet/raise to
an amount. The queued action remembers the street and the amount to match when it was
ticked. It runs the instant the player's turn arrives if it still fits; a change of street
clears every queued action, and a bet or raise clears queued checks, calls and bets (a
fold, check/fold or call any stays: it is still what the player wants). Only the player
ever learns of their queued action or of its clearing (nothing is published: the answer
tells them). Clearing when nothing is queued takes not even the table's lock.
"""

from typing import Any

from accounts.models import User
from tables.engine.advance import ADVANCE_KINDS
from tables.engine.rounds import PlayerStatus
from tables.exceptions import IllegalTableAction, NotSeated, NotYourTurn
from tables.models import Seat
from tables.services.command import (
    TableCommand,
    Unchanged,
    table_command,
    unchanged_before_lock,
)


def _nothing_queued(
    *, table_id: int, user: User, kind: str | None = None, amount: int | None = None
) -> Unchanged[None] | None:
    """Clearing a seat with nothing queued changes nothing: answered without the
    table's lock (read before it)."""
    if kind is not None:
        return None
    empty = Seat.objects.filter(table_id=table_id, player=user, advance__isnull=True)
    return Unchanged(None) if empty.exists() else None


@unchanged_before_lock(_nothing_queued)
@table_command
def seat_advance_set(
    cmd: TableCommand, *, user: User, kind: str | None = None, amount: int | None = None
) -> dict[str, Any] | None:
    """Queue (or with `kind` None, clear) the player's advance action; returns it. What
    is queued already is not written again."""
    seat = cmd.seat_of(user)
    if seat is None:
        raise NotSeated("You are not seated at this table.")
    if kind is None:
        if seat.advance is not None:
            seat.advance = None
            cmd.save_seat(seat, "advance")
        return None
    if kind not in ADVANCE_KINDS:
        raise IllegalTableAction(
            f"Unknown advance action {kind!r}: use fold, check, check_fold, call, call_any"
            " or bet_raise.",
            code="no_such_action",
        )
    hand = cmd.hand
    if hand is None:
        raise NotYourTurn("No hand is being played at this table.")
    state = cmd.state
    if seat.number not in state.seats or (
        state.status[state.index_of(seat.number)] is not PlayerStatus.IN
    ):
        raise NotYourTurn("You have no decision left to make in this hand.")
    if state.actor == seat.number:
        raise NotYourTurn("It is your turn: act now.", code="your_turn")
    if kind == "bet_raise" and (type(amount) is not int or amount <= state.to_match):
        raise IllegalTableAction(
            "A queued bet or raise needs the total to bet, above the current bet.",
            code="bad_amount",
        )
    queued = {
        "kind": kind,
        "amount": amount if kind == "bet_raise" else None,
        "street": str(state.street),
        "to_match": state.to_match,
        "hand": hand.id,
    }
    if seat.advance != queued:
        seat.advance = queued
        cmd.save_seat(seat, "advance")
    return seat.advance
