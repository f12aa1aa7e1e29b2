"""What the table offers a player beside the bare legal actions: the bet-size shortcuts
on their turn, and what the advance ("in turn") boxes would do while they wait.

RULES §2: a pot-sized bet or raise is the call plus everything in the middle after
calling (before the flop the blinds count in full, finer point 18). Every shortcut is
clamped to what the player may bet now (`min_to`..`max_to`), so any one of them is an
amount the engine accepts. The browser shows these numbers; it computes none.
"""

from typing import Any

from tables.engine.actions import LegalActions
from tables.engine.betting import LATE_STREETS, Street
from tables.engine.config import Structure
from tables.engine.hand_state import HandState, PlayerStatus


def _pot_for_raising(state: HandState) -> int:
    pot = sum(state.contributed)
    return pot + state.blind_shortfall if state.street is Street.PREFLOP else pot


def bet_presets(state: HandState, legal: LegalActions) -> dict[str, int] | None:
    """The actor's shortcuts `min`, `half` (pot), `pot`, `allin` as street totals
    ("raise to"), or None when they may not bet or raise (`legal`: the actor's legal
    actions, which the caller has already worked out)."""
    if legal.min_to is None or legal.max_to is None or state.actor_index is None:
        return None
    low, high = legal.min_to, legal.max_to
    current = state.to_match
    call = max(0, current - state.committed[state.actor_index])
    pot = _pot_for_raising(state)

    def clamp(to: int) -> int:
        return min(high, max(low, to))

    return {
        "min": low,
        "half": clamp(current + (pot + call) // 2),
        "pot": clamp(current + pot + call),
        "allin": clamp(legal.all_in_to),
    }


def advance_options(state: HandState) -> list[dict[str, Any]]:
    """For each player still to decide who is not the actor: what a call would cost
    them now (`owed`, capped at their stack) and the total a queued bet or raise goes to
    (`raise_to`: one more bet in fixed limit, else a minimum raise of the bet now)."""
    limits = state.limits
    current = state.to_match
    if limits.structure is Structure.FL:
        late = state.street in LATE_STREETS
        raise_to = current + (limits.big_bet if late else limits.small_bet)
    else:
        big = limits.big_blind
        raise_to = big if current == 0 else max(current * 2, current + big)
    out = []
    for i, seat in enumerate(state.seats):
        if i == state.actor_index or state.status[i] is not PlayerStatus.IN:
            continue
        owed = min(max(0, current - state.committed[i]), state.stacks[i])
        out.append({"seat": seat, "owed": owed, "raise_to": raise_to})
    return out
