"""Lookup tables for Omaha 8-or-better low hands (the big one precomputed in ``lowtable``).

Only the ranks ace to eight count for a low, so a set of low ranks is an 8-bit mask:
ace is bit 0, the deuce bit 1, ... the eight bit 7. Compared as integers, two masks of
five ranks order exactly like two lows compared from the highest card down, so
``LOW_MASKS``, the 56 possible lows sorted as integers, runs from the wheel
(5-4-3-2-A, mask ``0b11111``) to the worst low (8-7-6-5-4). A low's *value* is its
position in that list plus one: 1 for the wheel, 56 for 8-7-6-5-4; lower is better.

In Omaha the low is made of exactly two hole cards and exactly three board cards, all of
different ranks. The best low therefore depends only on the mask of the hole cards' low
ranks and the mask of the board's: ``OMAHA_LOW[hole_mask << 8 | board_mask]`` is the
value of the best low, or ``None`` when no low qualifies. Suits never matter, and paired
cards in the hole or on the board simply share their rank bit.
"""

import base64
import zlib
from itertools import combinations

# Low-rank bit of every card id (see cards.py): ace -> bit 0, deuce -> bit 1 ... eight ->
# bit 7; nine to king -> 0, they never play in a low.
LOW_BIT: tuple[int, ...] = tuple(
    (1 if rank == 12 else 1 << (rank + 1) if rank <= 6 else 0) for rank in range(13) for _ in "cdhs"
)

LOW_MASKS: tuple[int, ...] = tuple(
    sorted(sum(1 << bit for bit in bits) for bits in combinations(range(8), 5))
)

# Stand-in for "no low" while building: above every 8-bit mask, so min() skips it.
_NONE = 1 << 8


def _lowest_three(mask: int) -> int:
    """Return the mask of the three lowest ranks in ``mask``, or ``_NONE`` if fewer."""
    picked = 0
    for _ in range(3):
        if not mask:
            return _NONE
        lowest = mask & -mask
        picked |= lowest
        mask ^= lowest
    return picked


def build_omaha_low() -> tuple[int | None, ...]:
    """Return the table of the best Omaha low for every (hole mask, board mask) pair."""
    lowest_three = [_lowest_three(mask) for mask in range(256)]
    # For two given hole ranks, the best low takes the three lowest other board ranks.
    pair_rows = {
        pair: [pair | lowest_three[board & ~pair] for board in range(256)]
        for pair in (1 << a | 1 << b for a, b in combinations(range(8), 2))
    }
    value_of: list[int | None] = [None] * (2 * _NONE)
    for position, mask in enumerate(LOW_MASKS):
        value_of[mask] = position + 1

    # best[hole]: for every board mask, the best low mask with two ranks of ``hole``.
    # paired[hole]: the same restricted to pairs holding the highest rank of ``hole``.
    no_low = [_NONE] * 256
    best = [no_low]
    paired = [no_low]
    for hole in range(1, 256):
        top = 1 << (hole.bit_length() - 1)
        rest = hole ^ top
        if rest:
            second = 1 << (rest.bit_length() - 1)
            paired.append(list(map(min, paired[hole ^ second], pair_rows[top | second])))
        else:
            paired.append(no_low)
        best.append(list(map(min, best[rest], paired[hole])))
    table: list[int | None] = []
    for row in best:
        table.extend(map(value_of.__getitem__, row))
    return tuple(table)


def pack_omaha_low(table: tuple[int | None, ...]) -> str:
    """The text of ``lowtable.OMAHA_LOW_PACKED`` for ``table`` (None written as 0)."""
    return base64.b64encode(zlib.compress(bytes(v or 0 for v in table), 9)).decode()


def _unpack_omaha_low(packed: str) -> tuple[int | None, ...]:
    """Inverse of :func:`pack_omaha_low`."""
    value_or_none = (None, *range(1, len(LOW_MASKS) + 1))
    return tuple(map(value_or_none.__getitem__, zlib.decompress(base64.b64decode(packed))))


def _load_omaha_low() -> tuple[int | None, ...]:
    # Decoding the precomputed table costs a tenth of building it (phh_replay's start-up).
    from tables.engine.lowtable import OMAHA_LOW_PACKED

    return _unpack_omaha_low(OMAHA_LOW_PACKED)


OMAHA_LOW: tuple[int | None, ...] = _load_omaha_low()


if __name__ == "__main__":  # regenerate lowtable.py: python -m tables.engine.lowhands
    import sys
    import textwrap
    from pathlib import Path

    target = Path(__file__).with_name("lowtable.py")
    head = target.read_text().split("OMAHA_LOW_PACKED = (")[0]
    lines = textwrap.wrap(pack_omaha_low(build_omaha_low()), 84)
    body = "".join(f'    "{line}"\n' for line in lines)
    target.write_text(f"{head}OMAHA_LOW_PACKED = (\n{body})\n")
    sys.stdout.write(f"wrote {target}\n")
