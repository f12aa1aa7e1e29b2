"""Hand-history text formats of a finished hand: PokerStars text and Open Hand History.

Pure functions of a :class:`HandRecord` (no database, no server): the final engine state,
every event of the hand in order, a few descriptive fields, and whose view it is. The
formatters decide nothing about access: the record says which hole cards its reader may
see (:meth:`HandRecord.known_cards`) and they print exactly those.

- :mod:`tables.formats.pokerstars`: the PokerStars text that tracking software imports.
- :mod:`tables.formats.ohh`: the Open Hand History JSON (PokerTracker's standard).
- :mod:`tables.formats.phh`: PHH (pokerkit's TOML hand history), which `phh_replay` also reads.
"""

import datetime
from dataclasses import dataclass

from tables.engine.events import Event
from tables.engine.state import HandState


@dataclass(frozen=True)
class HandRecord:
    """A finished hand as one reader sees it.

    ``hero`` is the reader's seat (None when they did not play the hand); ``all_cards``
    whether they may see every hole card (auditors). Amounts are integer cents.
    """

    state: HandState
    events: tuple[Event, ...]
    hand_id: int
    table_name: str
    seat_count: int
    started_at: datetime.datetime
    currency: str
    hero: int | None
    all_cards: bool

    def known_cards(self, seat: int) -> tuple[int, ...] | None:
        """The hole cards of ``seat`` if the reader may see them: their own, those
        shown at showdown, or all of them for an auditor."""
        i = self.state.index_of(seat)
        if self.all_cards or seat == self.hero or self.state.shown[i]:
            return self.state.hole[i]
        return None

    def dealt_cards(self, seat: int) -> tuple[int, ...] | None:
        """The hole cards a "dealt" line shows: the reader's own (everyone's for an
        auditor). Cards shown at showdown appear there, not as dealt."""
        if self.all_cards or seat == self.hero:
            return self.state.hole[self.state.index_of(seat)]
        return None

    def player(self, seat: int) -> str:
        """The screen name of the player at ``seat``."""
        return self.state.players[self.state.index_of(seat)]
