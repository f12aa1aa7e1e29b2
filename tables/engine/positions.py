"""Seat arithmetic for the table layer: the moving button and the blind positions.

Seats are numbered; clockwise is towards the next higher seat number, wrapping around
(RULES.md section 8: we move clockwise). The table layer decides who is dealt in; these
helpers only place the button and the blinds among those players.
"""

from __future__ import annotations

from collections.abc import Sequence


def next_button(previous_button: int | None, dealt_in: Sequence[int]) -> int:
    """Seat of the button for the next hand (RULES.md section 3 step 1).

    The button moves clockwise to the next player dealt in. ``previous_button`` may be a
    seat that is no longer dealt in (the player left); None means the table's first hand,
    for which the table layer should pass the first player seated as ``dealt_in[0]``.

    >>> next_button(4, [1, 4, 7]), next_button(7, [1, 4, 7]), next_button(5, [1, 4, 7])
    (7, 1, 7)
    >>> next_button(None, [6, 2])
    6
    """
    if not dealt_in:
        raise ValueError("nobody is dealt in")
    if previous_button is None:
        return dealt_in[0]
    ordered = sorted(dealt_in)
    for seat in ordered:
        if seat > previous_button:
            return seat
    return ordered[0]


def blind_seats(button: int, dealt_in: Sequence[int]) -> tuple[int, int]:
    """``(small_blind_seat, big_blind_seat)`` for a hand with this button.

    The player left of the button posts the small blind, the next the big blind;
    heads-up, the button posts the small blind (RULES.md section 3 step 6).

    >>> blind_seats(4, [1, 4, 7]), blind_seats(7, [4, 7])
    ((7, 1), (7, 4))
    """
    ordered = sorted(dealt_in)
    if button not in ordered or len(ordered) < 2:
        raise ValueError("the button must be one of at least two players dealt in")
    b = ordered.index(button)
    n = len(ordered)
    if n == 2:
        return ordered[b], ordered[(b + 1) % n]
    return ordered[(b + 1) % n], ordered[(b + 2) % n]


def straddle_seat(button: int, dealt_in: Sequence[int]) -> int | None:
    """The seat left of the big blind, the only one that may straddle (RULES.md section
    7); None with fewer than three players dealt in.

    >>> straddle_seat(4, [1, 4, 7, 9]), straddle_seat(9, [1, 4, 7, 9]), straddle_seat(4, [4, 7])
    (1, 7, None)
    """
    ordered = sorted(dealt_in)
    if len(ordered) < 3:
        return None
    _, big = blind_seats(button, ordered)
    return ordered[(ordered.index(big) + 1) % len(ordered)]


def button_passes(seat: int, previous_button: int | None, button: int) -> bool:
    """Whether the button, moving clockwise from ``previous_button`` to ``button``,
    passes over ``seat`` on the way (finer point 16: a newcomer there is in the button
    seat and waits).

    >>> button_passes(6, 5, 1), button_passes(3, 5, 1), button_passes(3, 2, 4)
    (True, False, True)
    """
    if previous_button is None or previous_button == button:
        return False
    if previous_button < button:
        return previous_button < seat < button
    return seat > previous_button or seat < button


def clockwise_order(start: int, n: int) -> list[int]:
    """Indices ``0..n-1`` clockwise beginning with ``start``.

    >>> clockwise_order(2, 4)
    [2, 3, 0, 1]
    """
    return [(start + k) % n for k in range(n)]
