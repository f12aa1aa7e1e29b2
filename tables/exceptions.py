"""Errors of table commands: each has a stable code and a reason a player can read.

Consumers send them as `{"type": "error", "code": ..., "message": ...}`, views as 4xx.
"""


class TableError(Exception):
    code = "table_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class TableNotFound(TableError):
    code = "table_not_found"


class TableBusy(TableError):
    """The table's lock (or a lock its command needed) was not free within the command's
    lock timeout: nothing was done, and the command may be sent again."""

    code = "table_busy"


class RoomBusy(TableError):
    """A new seat refused while the room is past its capacity (tables/capacity.py):
    nothing was done, and the player may ask again in a while."""

    code = "room_busy"


class TableClosed(TableError):
    code = "table_closed"


class SeatUnavailable(TableError):
    code = "seat_unavailable"


class NotSeated(TableError):
    code = "not_seated"


class BuyInOutOfRange(TableError):
    code = "buy_in_out_of_range"


class HandInProgress(TableError):
    code = "hand_in_progress"


class NotYourTurn(TableError):
    code = "not_your_turn"


class StaleCommand(TableError):
    code = "stale"


class IllegalTableAction(TableError):
    """An action the engine refused; `code` is the engine's (below_min_raise, ...)."""

    code = "illegal_action"


class BlindOptionNotAllowed(TableError):
    """A straddle or overblind the stake level (or the next hand, a kill hand) does not take."""

    code = "blind_option_not_allowed"


class BlindOptionSeat(TableError):
    """A straddle or overblind asked from a seat it is not open to in the next hand."""

    code = "blind_option_seat"


class BlindOptionCannotCover(TableError):
    """A straddle or overblind the player's stack cannot post in full."""

    code = "blind_option_cannot_cover"
