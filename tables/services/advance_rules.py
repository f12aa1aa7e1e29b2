"""When a queued advance action still fits, and what it becomes on the player's turn.

Pure functions of the engine state (see services/advance.py for the command).
"""

from typing import Any

from tables.engine.actions import Action
from tables.engine.state import HandState

ADVANCE_KINDS = {"fold", "check", "check_fold", "call", "call_any", "bet_raise"}
# Kinds that stay valid when someone bets or raises in the same street ("call any" is a
# call of whatever is bet by then).
SURVIVES_RAISE = {"fold", "check_fold", "call_any"}


def advance_still_valid(advance: dict[str, Any], state: HandState) -> bool:
    if advance["street"] != str(state.street):
        return False
    return advance["kind"] in SURVIVES_RAISE or advance["to_match"] == state.to_match


def advance_action(advance: dict[str, Any], state: HandState, seat: int) -> Action | None:
    """The action a still-valid advance becomes now that it is `seat`'s turn, if legal."""
    legal = state.legal_actions()
    kind = advance["kind"]
    if kind in ("fold", "check_fold"):
        return Action.check(seat) if legal.can_check else Action.fold(seat)
    if kind == "check":
        return Action.check(seat) if legal.can_check else None
    if kind == "call":
        return Action.call(seat) if legal.can_call else None
    if kind == "call_any":
        return Action.check(seat) if legal.can_check else Action.call(seat)
    action = Action.bet_raise(seat, advance["amount"])
    return action if state.can(action) else None
