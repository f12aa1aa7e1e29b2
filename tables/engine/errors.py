"""Exceptions of the hand engine.

Two families:

* :class:`ConfigError` / :class:`SetupError` -- a table configuration or a hand set-up that
  cannot be played (admin mistakes, table-layer bugs).
* :class:`IllegalAction` -- a player's action that the rules do not allow right now. Every
  subclass carries a stable machine ``code`` (for the client and the API) and a
  player-readable ``reason``. Raising one never changes the hand state: ``apply`` verifies
  before it copies anything.
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A :class:`~tables.engine.config.TableConfig` with a wrong combination of settings."""

    code = "bad_config"


class SetupError(ValueError):
    """``start_hand`` was called with seats, button or deck that cannot start a hand."""

    code = "bad_setup"


class IllegalAction(ValueError):
    """Base class of every refused player action.

    ``reason`` is a sentence that can be shown to the player as is; ``code`` is stable.
    """

    code = "illegal_action"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def to_dict(self) -> dict[str, str]:
        """JSON form sent back to the client that tried the action."""
        return {"code": self.code, "reason": self.reason}


class HandOver(IllegalAction):
    """The hand is finished; nothing can be done in it any more."""

    code = "hand_over"


class NotYourTurn(IllegalAction):
    """Someone other than the player to act tried to act."""

    code = "not_your_turn"


class NoSuchAction(IllegalAction):
    """An action that does not exist or is not available in this spot.

    Examples: checking while facing a bet, calling when there is nothing to call, folding
    when checking is free.
    """

    code = "no_such_action"


class BelowMinRaise(IllegalAction):
    """A bet or raise smaller than the minimum (and not an all-in for less)."""

    code = "below_min_raise"


class AbovePotLimit(IllegalAction):
    """A pot-limit bet or raise bigger than the pot."""

    code = "above_pot_limit"


class AboveLimit(IllegalAction):
    """A fixed- or spread-limit bet or raise bigger than the limit."""

    code = "above_limit"


class ExceedsStack(IllegalAction):
    """More chips than the player has in front of them (table stakes)."""

    code = "exceeds_stack"


class BettingCapped(IllegalAction):
    """Limit betting already reached its 4 bets this round; only call or fold remain."""

    code = "betting_capped"


class RaiseNotReopened(IllegalAction):
    """Short all-ins did not reopen the betting for a player who already acted (together
    they leave that player facing less than a full bet or raise, finer point 19)."""

    code = "raise_not_reopened"


class OpponentsAllIn(IllegalAction):
    """Nobody left in the hand could call any of a bet or raise (all-in or covered)."""

    code = "opponents_all_in"
