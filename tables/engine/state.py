"""The hand state machine: its design, and the names the rest of the room imports.

:class:`HandState` (:mod:`tables.engine.hand_state`), :class:`SeatEntry` and
:func:`start_hand` (:mod:`tables.engine.start`), :func:`apply` and :func:`apply_in_place`
(:mod:`tables.engine.act`) are importable from here, as they always were.

Design
======

One hand, from the posts to the payouts, as a value. Django never appears here; the
table layer (``tables/services``) owns persistence, timing, seating and broadcasting.

* **Pure transitions.** ``start_hand(config, seats, button=..., deck=...)`` builds the
  state and ``apply(state, action)`` returns a *new* state plus the events the action
  caused; the input is never mutated (a state is copied list by list, never deep-copied).
  Illegal actions raise a subclass of
  :class:`~tables.engine.errors.IllegalAction` and change nothing.
  ``apply_in_place(state, action)`` is the same transition for a caller that owns the
  state and has no use for the old one (it skips the copy and returns the events);
  ``apply`` is a copy followed by ``apply_in_place``.
* **verify / can / do** (pokerkit's triad): ``state.legal_actions()`` is what the UI
  offers, ``state.verify(action)`` raises the precise error, ``state.can(action)`` is its
  boolean, and ``apply`` verifies then does. The bounds offered are exactly the bounds
  accepted (a property test checks min-1, min, max and max+1).
* **Automatic streets.** The ``apply`` that closes a betting round also returns uncalled
  bets, collects the pots, deals the next street, runs the board out when at most one
  player can still bet, and settles the hand (showdown, rake, payouts). At a table that
  plays run it twice, a run-out before the river first asks the players still in
  (``state.run_twice``; nobody is to act, the hand is not over): their answers
  (``Action.run_twice``, any order) run the rest of the board once or twice
  (:mod:`tables.engine.run_twice`).
* **Injected deck.** The 52 cards come from the caller (``services/dealing.py`` shuffles
  with ``secrets.SystemRandom`` and publishes the commitment). Hole cards are dealt one
  at a time clockwise from the small blind; the board is the next cards of the deck in
  order -- *no burn cards* (they add nothing to a provably fair shuffled deck).
* **Players by index, seats at the edges.** Internally player ``i`` is the ``i``-th
  dealt-in seat in seat order; every public value (actor, events, pots, views) uses seat
  numbers.
* **JSON at any point.** ``to_dict``/``from_dict`` are lossless; ``view(seat)`` is what
  one seat (or a spectator, ``None``) may see, ``auditor_view()`` is everything.

Betting model
-------------

Per street: ``committed[i]`` (chips put in this street), ``to_match`` (what everyone must
reach), ``last_raise`` (size of the last full bet/raise), ``full_bets`` (limit cap count),
``acted[i]`` (acted since the last *full* bet or raise) and ``order`` (the players who
can still act, status ``IN``, in the round's acting order; a player leaves it on folding,
going all-in or being protected, so finding the next actor skips nobody). A player must
act when they are still in with chips and have not acted since the last full raise, or
are below ``to_match``. Forced live bets (blinds, straddle, kill blind, overblind,
newcomers' big blinds) are not actions, so their posters get the option when the action
comes back unraised. A short all-in raises ``to_match`` but clears nobody's ``acted``:
a player who already acted may then only call or fold, unless the short all-ins since
they acted leave them facing at least a full bet or raise (finer point 19).

Preflop ``to_match`` is the largest *nominal* forced live bet even if its poster was short
(finer point 17), and ``blind_shortfall`` (what the short posters lack) is counted in the
preflop pot-limit maximum (finer point 18);
the round's first actor is left of the big blind (left of the straddle); a killer with
``killer_acts_last`` and an overblinder are moved to the end of the preflop order. Post-flop
the first player left of the button opens.

Decisions documented here (RULES.md leaves them open)
------------------------------------------------------

* Folding is not offered when checking is free; a timeout checks in that case anyway.
* Nobody may bet or raise when no other player still in could call any of it (all the
  others are all-in or have no more chips than the current bet), as pokerkit does
  (finer point 20).
* Chop is decided automatically from the two blinds' ``chop`` preferences at the moment
  everyone else has folded to them (allowed only without straddle, kill, overblind or
  newcomer big blinds, with at least three players dealt in).
* A kill hand takes no straddle and no overblind; an overblind hand takes no straddle
  (the limits are already raised; never compounding, as finer point 5 says of kills).
  A straddle needs at least three players dealt in.
* Voluntary posts (straddle, overblind) need the chips to post them in full.
* A big blind (kill blind, newcomer's big blind) posted all-in for less still sets the
  amount to call for the others (finer point 17); a player who already covers every
  all-in opponent is not asked to act. A straddle or overblind is never posted short:
  it needs the chips to post it in full (above).
* Short all-ins never count toward the limit cap, and the next full raise is the last
  full increment on top of them (finer points 1 and 21, fixed limit too). They reopen the
  betting for a player who already acted only when together they leave that player
  facing at least the last full bet or raise (finer point 19); the minimum raise stays
  that full bet or raise.
* With ``killer_acts_last`` off the killer acts in seat order; their first turn in an
  unraised pot is their option (check or raise), as for any live blind.
* The kill multiplier is the one in the ``KillInfo`` passed in (the table's setting when
  the engine produced it).
* Hands are turned face up at once only after a run-out (betting stopped because at most
  one player could bet); a river that was bet and called shows in the normal order.
* All-in protection: the protected player is treated as all-in for what they have put in;
  the rest of their stack stays behind, untouched.

Module map
----------

``config`` (TableConfig), ``hand_state`` (HandState: queries, verify/can, views, JSON),
``start`` (SeatEntry, verify_start/can_start/start_hand), ``act`` (apply,
apply_in_place), ``betting`` (limits and bet bounds), ``rounds`` (closing rounds,
dealing streets), ``pots``, ``rake``, ``settle`` (showdown, awards, chop), ``events``,
``actions`` (Action, LegalActions), ``errors``, ``positions`` (button and blinds),
``run_twice`` (the agreement to run it twice and the two runs),
``dealing`` (who is dealt in: the table's deal plan), ``advance`` (queued advance
actions), ``testing`` (stacked decks and scripted hands for tests).
"""

from tables.engine.act import apply, apply_in_place
from tables.engine.hand_state import HandState, PlayerStatus
from tables.engine.settle import HandResult
from tables.engine.start import SeatEntry, start_hand

__all__ = [
    "HandResult",
    "HandState",
    "PlayerStatus",
    "SeatEntry",
    "apply",
    "apply_in_place",
    "start_hand",
]
