"""Player actions and the legal-action summary offered to the player to act.

An :class:`Action` names the seat that acts; the engine refuses it with ``not_your_turn``
when that seat is not the one to act. Bets and raises use the *raise TO* convention:
``to`` is the player's total commitment on the street after the action (for a bet, the bet
itself).

:class:`LegalActions` is what the UI offers (the ``can_*`` of the verify/can/do triad);
``apply`` re-verifies every action against exactly these bounds;
:func:`refuse_bet_raise` words the error of a bet or raise outside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tables.engine import errors
from tables.engine.config import Structure


class ActionKind(StrEnum):
    """What a player can do when it is their turn (``timeout`` is sent by the server)."""

    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    BET_RAISE = "bet_raise"
    TIMEOUT = "timeout"
    # The answer of a player asked to run it twice (``agree``); not turn-based.
    RUN_TWICE = "run_twice"


@dataclass(frozen=True, slots=True)
class Action:
    """A decision of the player at ``seat``.

    ``to`` is required for ``bet_raise`` only. ``protection_allowed`` matters for
    ``timeout`` only: the table layer passes False when the player used up their daily
    all-in protections (``allin_protection_per_day``). ``agree`` is the answer of a
    ``run_twice`` (a ``timeout`` while the players are asked refuses for the seat).
    """

    kind: ActionKind
    seat: int
    to: int | None = None
    protection_allowed: bool = True
    agree: bool = False

    def __post_init__(self) -> None:
        # Accept the plain string of a kind (from JSON or a test) and normalise it.
        object.__setattr__(self, "kind", ActionKind(self.kind))

    @classmethod
    def fold(cls, seat: int) -> Action:
        """Fold."""
        return cls(kind=ActionKind.FOLD, seat=seat)

    @classmethod
    def check(cls, seat: int) -> Action:
        """Check."""
        return cls(kind=ActionKind.CHECK, seat=seat)

    @classmethod
    def call(cls, seat: int) -> Action:
        """Call (all-in for less when the stack is short)."""
        return cls(kind=ActionKind.CALL, seat=seat)

    @classmethod
    def bet_raise(cls, seat: int, to: int) -> Action:
        """Bet or raise to a street total of ``to``."""
        return cls(kind=ActionKind.BET_RAISE, seat=seat, to=to)

    @classmethod
    def timeout(cls, seat: int, *, protection_allowed: bool = True) -> Action:
        """The player's time ran out (RULES.md section 5)."""
        return cls(kind=ActionKind.TIMEOUT, seat=seat, protection_allowed=protection_allowed)

    @classmethod
    def run_twice(cls, seat: int, *, agree: bool) -> Action:
        """Agree (or refuse) to run the rest of the board twice."""
        return cls(kind=ActionKind.RUN_TWICE, seat=seat, agree=agree)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form."""
        return {
            "kind": str(self.kind),
            "seat": self.seat,
            "to": self.to,
            "protection_allowed": self.protection_allowed,
            "agree": self.agree,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Action:
        """Inverse of :meth:`to_dict` (``to``, ``protection_allowed``, ``agree`` optional)."""
        return cls(
            kind=ActionKind(d["kind"]),
            seat=int(d["seat"]),
            to=None if d.get("to") is None else int(d["to"]),
            protection_allowed=bool(d.get("protection_allowed", True)),
            agree=bool(d.get("agree", False)),
        )


@dataclass(frozen=True, slots=True)
class LegalActions:
    """The options of the player to act.

    * ``call_amount`` -- chips to add to call (capped at the stack: ``call_all_in``), or
      None when there is nothing to call.
    * ``min_to``/``max_to`` -- bounds of a bet/raise as a street total (equal in fixed
      limit); None when no bet/raise is possible. When the stack is below a full raise the
      only option is the all-in, so ``min_to == max_to == all_in_to``.
    * ``raise_closed`` -- why no bet/raise is possible although there is a stack behind:
      "betting_capped", "raise_not_reopened" or "opponents_all_in" (None otherwise).
    """

    seat: int
    can_fold: bool
    can_check: bool
    call_amount: int | None
    call_all_in: bool
    is_bet: bool
    min_to: int | None
    max_to: int | None
    all_in_to: int
    raise_closed: str | None

    @property
    def can_bet_raise(self) -> bool:
        """True when a bet or raise is possible."""
        return self.min_to is not None

    @property
    def can_call(self) -> bool:
        """True when there is something to call."""
        return self.call_amount is not None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON form for the client."""
        return {
            "seat": self.seat,
            "can_fold": self.can_fold,
            "can_check": self.can_check,
            "call_amount": self.call_amount,
            "call_all_in": self.call_all_in,
            "can_bet_raise": self.can_bet_raise,
            "is_bet": self.is_bet,
            "min_to": self.min_to,
            "max_to": self.max_to,
            "all_in_to": self.all_in_to,
            "raise_closed": self.raise_closed,
        }


def refuse_bet_raise(legal: LegalActions, to: int | None, structure: Structure) -> None:
    """Raise the precise IllegalAction for a bet/raise to ``to`` outside ``legal``."""
    if to is None:
        raise errors.NoSuchAction("A bet or raise needs an amount.")
    word = "bet" if legal.is_bet else "raise"
    if legal.min_to is None or legal.max_to is None:
        closed = legal.raise_closed
        if closed == "betting_capped":
            raise errors.BettingCapped("The betting is capped: you may only call or fold.")
        if closed == "raise_not_reopened":
            raise errors.RaiseNotReopened(
                "The all-ins since you acted do not add up to a full raise: you may only "
                "call or fold."
            )
        if closed == "opponents_all_in":
            raise errors.OpponentsAllIn(
                "Nobody else could call a raise (all-in or covered): you may only call or fold."
            )
        raise errors.ExceedsStack(f"You do not have enough chips to {word}; you can call.")
    if to > legal.all_in_to:
        raise errors.ExceedsStack(f"You only have enough chips to {word} to {legal.all_in_to}.")
    if to < legal.min_to:
        if legal.min_to == legal.all_in_to == legal.max_to:
            raise errors.BelowMinRaise(f"You can only {word} all-in, to {legal.min_to}.")
        raise errors.BelowMinRaise(f"The minimum {word} is to {legal.min_to}.")
    if to > legal.max_to:
        if structure is Structure.PL:
            raise errors.AbovePotLimit(f"The pot limit allows a {word} to {legal.max_to}.")
        if structure is Structure.FL:
            raise errors.AboveLimit(f"In fixed limit you {word} to exactly {legal.max_to}.")
        raise errors.AboveLimit(f"The limit allows a {word} to at most {legal.max_to}.")
