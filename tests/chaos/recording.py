"""The room's outside world, recorded instead of used: the messages the services
publish, and a fault the machine can inject into one table.

No timer loop runs under the chaos machines (tests/chaos/conftest.py): a machine decides
when (and whether) a turn times out or a deal is tried, so no clock of the machine
running the test moves a table. The services machine also records the published
messages (the WebSocket machine lets them go to the real Redis channel layer and reads
them from its sockets); the turns they announce are what a stale timeout is drawn from.
"""

import contextlib
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from tables.engine.deck import shuffled_deck
from tables.engine.state import HandState
from tables.events import TableMessage
from tables.models import Hand, HandStatus

FAULT = "chaos: injected fault"
_load_state = HandState.from_dict


@dataclass
class Recorded:
    # (table id, hand id the message is about or None, message)
    messages: list[tuple[int, int | None, TableMessage]] = field(default_factory=list)
    broken: set[int] = field(default_factory=set)
    armed: bool = False
    # The shuffles of this example, seeded by Hypothesis: the same choices deal the same
    # cards, so that a failure replays and shrinks.
    shuffler: random.Random = field(default_factory=random.Random)

    def clear(self) -> None:
        self.messages.clear()
        self.broken.clear()
        self.armed = False


RECORDED = Recorded()


def publish_recorded(table_id: int, messages: list[TableMessage]) -> None:
    """Stands in for `tables.events._publish` (after the commit, as the real one)."""
    live = (
        Hand.objects.filter(table_id=table_id, status=HandStatus.IN_PROGRESS)
        .values_list("pk", flat=True)
        .first()
    )
    for message in messages:
        hand = message.public.get("hand")
        RECORDED.messages.append((table_id, hand if isinstance(hand, int) else live, message))


def shuffled_deck_seeded() -> list[int]:
    """Stands in for `tables.services.hands.shuffled_deck` (the deck is injected)."""
    return shuffled_deck(RECORDED.shuffler)


def load_state_with_faults(data: dict) -> HandState:
    """`HandState.from_dict`, failing for the hands of a broken table while armed."""
    state = _load_state(data)
    if RECORDED.armed and int(state.hand_id.split("-")[0]) in RECORDED.broken:
        raise RuntimeError(FAULT)
    return state


@contextlib.contextmanager
def faults_armed(broken: set[int]) -> Iterator[None]:
    """Let the fault hit the broken tables' commands (not the invariants' own reads)."""
    RECORDED.broken = set(broken)
    RECORDED.armed = True
    try:
        yield
    finally:
        RECORDED.armed = False


def injected(exc: BaseException) -> bool:
    return isinstance(exc, RuntimeError) and str(exc) == FAULT
