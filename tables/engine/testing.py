"""Helpers for tests of the engine and of the layers built on it (no test framework).

* :func:`stacked_deck` -- a full 52-card deck that deals the given hole cards and board,
  following the engine's dealing order (one card at a time clockwise from the small
  blind, then the board with no burn cards), the way pokerkit's WSOP tests set the deck.
* :func:`begin`, :func:`act`, :func:`run` -- start a hand from ``{seat: stack}`` and play
  scripted actions ("call", "raise 800", "timeout") for golden replays.
* :func:`random_action` -- one uniformly chosen legal action of the player to act, with
  bet sizes drawn between the offered bounds, or an answer to run it twice (for
  property tests and benchmarks).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from tables.engine.actions import Action, ActionKind
from tables.engine.cards import parse_cards
from tables.engine.config import KillInfo, TableConfig
from tables.engine.events import Event
from tables.engine.positions import blind_seats, clockwise_order
from tables.engine.state import HandState, SeatEntry, apply, start_hand


def stacked_deck(
    holes: Mapping[int, str], board: str = "", *, button: int, seats: Sequence[int] = ()
) -> list[int]:
    """A deck dealing ``holes`` (seat -> "AsKd...") and ``board`` ("AhKhQh2c3d").

    ``seats`` lists every seat dealt in (defaults to the keys of ``holes``); seats without
    an entry in ``holes`` get arbitrary cards. All hands must have the same length.
    """
    dealt_in = sorted(seats or holes)
    sb, _ = blind_seats(button, dealt_in)
    order = [dealt_in[k] for k in clockwise_order(dealt_in.index(sb), len(dealt_in))]
    wanted = {seat: parse_cards(text) for seat, text in holes.items()}
    per_player = len(next(iter(wanted.values())))
    board_cards = parse_cards(board)
    used = {c for cards in wanted.values() for c in cards} | set(board_cards)
    if len(used) != sum(map(len, wanted.values())) + len(board_cards):
        raise ValueError("a card is used twice")
    spare = iter(c for c in range(52) if c not in used)
    deck: list[int] = []
    for r in range(per_player):
        for seat in order:
            deck.append(wanted[seat][r] if seat in wanted else next(spare))
    deck.extend(board_cards)
    deck.extend(spare)
    return deck


def random_action(state: HandState, rng: random.Random) -> Action:
    """A random legal action of the player to act (bet sizes uniform in the bounds), or
    while the players are asked to run it twice, an answer (or timeout) of one of them."""
    if state.run_twice is not None and state.asking_run_twice:
        seat = rng.choice(state.run_twice.undecided)
        if rng.random() < 0.1:
            return Action.timeout(seat)
        return Action.run_twice(seat, agree=rng.random() < 0.8)
    legal = state.legal_actions()
    seat = legal.seat
    options: list[Action] = []
    if legal.can_fold:
        options.append(Action.fold(seat))
    if legal.can_check:
        options.append(Action.check(seat))
    if legal.call_amount is not None:
        options.append(Action.call(seat))
    if legal.min_to is not None and legal.max_to is not None:
        low, high = legal.min_to, legal.max_to
        options.append(Action.bet_raise(seat, rng.choice((low, high, rng.randint(low, high)))))
    if rng.random() < 0.05:
        options.append(Action.timeout(seat, protection_allowed=rng.random() < 0.5))
    return rng.choice(options)


def begin(
    config: TableConfig,
    stacks: Mapping[int, int],
    *,
    button: int,
    holes: Mapping[int, str] | None = None,
    board: str = "",
    options: Mapping[int, Mapping[str, bool]] | None = None,
    kill: KillInfo | None = None,
) -> tuple[HandState, list[Event]]:
    """Start a hand with ``stacks`` (seat -> chips); ``options`` sets SeatEntry flags."""
    options = options or {}
    entries = [
        SeatEntry(seat=seat, player=f"p{seat}", stack=stack, **options.get(seat, {}))
        for seat, stack in stacks.items()
    ]
    if holes:
        deck = stacked_deck(holes, board, button=button, seats=list(stacks))
    else:
        deck = list(range(52))
    return start_hand(config, entries, button=button, deck=deck, kill=kill)


def act(state: HandState, spec: str) -> tuple[HandState, list[Event]]:
    """Apply a scripted action of the player to act.

    ``spec``: "fold", "check", "call", "bet N" / "raise N" (to a street total of N),
    "timeout" or "timeout noprotect".
    """
    word, _, arg = spec.partition(" ")
    seat = state.actor
    if seat is None:
        raise ValueError(f"nobody is to act, cannot {spec!r}")
    if word in ("bet", "raise"):
        action = Action.bet_raise(seat, int(arg))
    elif word == "timeout":
        action = Action.timeout(seat, protection_allowed=arg != "noprotect")
    else:
        action = Action(ActionKind(word), seat)
    return apply(state, action)


def run(state: HandState, *specs: str) -> tuple[HandState, list[Event]]:
    """Apply several scripted actions; returns the final state and all their events."""
    events: list[Event] = []
    for spec in specs:
        state, new = act(state, spec)
        events.extend(new)
    return state, events
