"""Who is dealt into the next hand, and where the button goes (RULES.md section 3 step 1,
section 4, finer point 16).

The table layer describes its seats as :class:`SeatRecord` values (built from its
database rows) and :func:`deal_plan` decides, as a pure function:

* Players already playing are dealt in; a seat without chips or whose player leaves
  after this hand is not.
* A newcomer (or a player back from sitting out) is dealt in when the big blind reaches
  them, or at once with a live big blind when they asked to post one and sit neither on
  the button nor in the small blind; the button seat includes one the button moves past
  to reach the next player dealt in (finer point 16).
* While fewer than two players are playing, everybody waiting is dealt in without
  posting; the table's first hand puts the button on the first player seated.

The result is the button and the :class:`~tables.engine.start.SeatEntry` list that
:func:`~tables.engine.start.start_hand` takes.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from tables.engine.positions import blind_seats, button_passes, next_button
from tables.engine.start import SeatEntry


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """A seat of the table as the deal sees it.

    ``playing``: dealt into the last hand (or ready to be); ``waiting``: seated, waiting
    for the big blind (or to post one); neither: sitting out. ``sat_down_at`` orders
    the players for the table's first hand. ``post_big_blind``, ``straddle``,
    ``overblind``, ``chop`` and ``auto_muck`` are the player's wishes, ``leaving`` that
    they leave after this hand.
    """

    number: int
    player: str
    stack: int
    playing: bool
    waiting: bool
    sat_down_at: datetime.datetime
    post_big_blind: bool = False
    leaving: bool = False
    straddle: bool = False
    overblind: bool = False
    chop: bool = False
    auto_muck: bool = True
    player_id: int | None = None


@dataclass(frozen=True, slots=True)
class DealPlan:
    """The next hand's button and the players dealt in, in seat order."""

    button: int
    entries: list[SeatEntry]


def deal_plan(seats: Sequence[SeatRecord], *, previous_button: int | None) -> DealPlan | None:
    """Who is dealt in and where the button goes (see the module docstring); None when
    fewer than two players can be dealt in."""
    ready = [s for s in seats if s.stack > 0 and not s.leaving]
    playing = [s for s in ready if s.playing]
    waiting = [s for s in ready if s.waiting]
    waiting_numbers = {s.number for s in waiting}
    posting: set[int] = set()
    if len(playing) < 2:
        # The table (re)starts: the first hand's button goes to the first player seated.
        dealt = sorted(playing + waiting, key=lambda s: s.sat_down_at)
        if len(dealt) < 2:
            return None
        button = next_button(previous_button, [s.number for s in dealt])
    else:
        button = next_button(previous_button, [s.number for s in playing])
        dealt = list(playing)
        for newcomer in sorted(waiting, key=lambda s: s.number):
            if len(playing) > 2 and button_passes(newcomer.number, previous_button, button):
                # The button moves to the next player dealt in; it would have stopped on
                # this seat had its player been playing: a newcomer in the button seat
                # waits until the button has passed (finer point 16). Not heads-up: there
                # the button passes every seat but two every other hand, and the other
                # hands put the newcomer in the small blind, so a third player would
                # wait for ever; they come in when the big blind reaches them.
                continue
            numbers = [s.number for s in dealt] + [newcomer.number]
            small, big = blind_seats(button, numbers)
            if big == newcomer.number:
                dealt.append(newcomer)
            elif newcomer.post_big_blind and newcomer.number not in (small, button):
                dealt.append(newcomer)
                posting.add(newcomer.number)
        # Several newcomers can shift each other's positions: whoever is not the big blind
        # in the final line-up posts a live one, and nobody posts from the small blind.
        while True:
            small, big = blind_seats(button, [s.number for s in dealt])
            misplaced = [
                s
                for s in dealt
                if s.number in waiting_numbers and s.number != big and s.number == small
            ]
            if not misplaced:
                break
            dealt.remove(misplaced[0])
        posting |= {s.number for s in dealt if s.number in waiting_numbers and s.number != big}
    entries = [
        SeatEntry(
            seat=s.number,
            player=s.player,
            stack=s.stack,
            posts_big_blind=s.number in posting,
            straddle=s.straddle,
            overblind=s.overblind,
            chop=s.chop,
            auto_muck=s.auto_muck,
            player_id=s.player_id,
        )
        for s in sorted(dealt, key=lambda s: s.number)
    ]
    return DealPlan(button=button, entries=entries)
