"""Random-but-legal decisions for the bots, from the `legal_actions` of a `turn` message.

Pure functions of a plain dict and a `random.Random`, so they are tested without a room:
whatever `choose_action` returns is one of the options `legal_actions` offers (a bet or
raise always lies between `min_to` and `max_to`). A `Profile` weighs the options, so a
table of bots mixes calling stations, folders and maniacs.
"""

import random
from dataclasses import dataclass
from typing import Any

from tables.commands import Act


@dataclass(frozen=True)
class Profile:
    """Relative weights of the kinds of decision (zero: only when nothing else is legal)."""

    name: str
    fold: float
    passive: float  # check or call
    bet_raise: float
    all_in: float


PROFILES: tuple[Profile, ...] = (
    Profile("station", fold=1, passive=8, bet_raise=1, all_in=0.1),
    Profile("tight", fold=5, passive=4, bet_raise=1, all_in=0.1),
    Profile("aggressive", fold=2, passive=3, bet_raise=5, all_in=0.5),
    Profile("maniac", fold=1, passive=2, bet_raise=5, all_in=2),
)


@dataclass(frozen=True)
class Decision:
    """An `act` command's fields: `action` (fold, check, call, bet_raise) and `amount`."""

    action: str
    amount: int | None = None

    def command(self, *, turn: int) -> Act:
        """The `act` command for this decision."""
        return Act(action=self.action, amount=self.amount, turn=turn)


def legal_options(legal: dict[str, Any]) -> list[tuple[str, Decision]]:
    """Every decision `legal` allows, each tagged with the weight it draws on.

    A bet or raise is drawn from the bounds: the minimum, the maximum or in between
    (equal in fixed limit). The all-in is offered as a bet only when the structure lets
    the whole stack in (`max_to == all_in_to`); a short call is an all-in by itself.
    """
    options: list[tuple[str, Decision]] = []
    if legal.get("can_fold"):
        options.append(("fold", Decision("fold")))
    if legal.get("can_check"):
        options.append(("passive", Decision("check")))
    if legal.get("call_amount") is not None:
        options.append(("call_all_in" if legal.get("call_all_in") else "passive", Decision("call")))
    low, high = legal.get("min_to"), legal.get("max_to")
    if legal.get("can_bet_raise") and low is not None and high is not None:
        options.append(("bet_raise", Decision("bet_raise", low)))
        if high > low:
            options.append(("bet_raise", Decision("bet_raise", high)))
            options.append(("bet_raise", Decision("bet_raise", (low + high) // 2)))
        if high == legal.get("all_in_to"):
            options.append(("all_in", Decision("bet_raise", high)))
    return options


def choose_action(legal: dict[str, Any], *, rng: random.Random, profile: Profile) -> Decision:
    """A random decision among the legal ones, weighted by `profile`."""
    options = legal_options(legal)
    if not options:
        raise ValueError(f"no legal action in {legal!r}")
    weights = {
        "fold": profile.fold,
        "passive": profile.passive,
        "bet_raise": profile.bet_raise,
        "all_in": profile.all_in,
        # Calling off the stack is as likely as shoving it.
        "call_all_in": profile.all_in + profile.passive / 4,
    }
    # A zero weight still allows the option when nothing else is legal.
    chosen = rng.choices(options, weights=[max(weights[tag], 1e-3) for tag, _ in options])[0]
    decision = chosen[1]
    if chosen[0] == "bet_raise" and legal["max_to"] > legal["min_to"] and rng.random() < 0.5:
        # Between the bounds, any amount: uniform rather than the three landmarks.
        return Decision("bet_raise", rng.randint(legal["min_to"], legal["max_to"]))
    return decision
