"""Pure-Python poker engine of the room: cards, decks, hand values, betting and pots.

Nothing in this package imports Django; it takes and returns plain ints, enums and dataclasses.
"""

# Public API of the hand state machine (tables/engine/state.py has the design notes).
from tables.engine.actions import Action, ActionKind, LegalActions
from tables.engine.config import (
    Game,
    KillInfo,
    KillMode,
    Structure,
    TableConfig,
    default_small_blind,
)
from tables.engine.errors import ConfigError, IllegalAction, SetupError
from tables.engine.events import Event, event_from_dict, events_for
from tables.engine.positions import blind_seats, next_button
from tables.engine.state import (
    HandResult,
    HandState,
    PlayerStatus,
    SeatEntry,
    apply,
    apply_in_place,
    start_hand,
)

__all__ = [
    "Action",
    "ActionKind",
    "ConfigError",
    "Event",
    "Game",
    "HandResult",
    "HandState",
    "IllegalAction",
    "KillInfo",
    "KillMode",
    "LegalActions",
    "PlayerStatus",
    "SeatEntry",
    "SetupError",
    "Structure",
    "TableConfig",
    "apply",
    "apply_in_place",
    "blind_seats",
    "default_small_blind",
    "event_from_dict",
    "events_for",
    "next_button",
    "start_hand",
]
