"""The web processes and the timer loop tune their cyclic collector at start-up
(poker_room/collector.py): start-up objects frozen, so that a full collection walks only
what was built after, and the thresholds taken from the settings."""

from tests.foundation.web_process import probe_output

PROBE = """
import gc
import poker_room.asgi
print(gc.get_freeze_count(), len(gc.get_objects()), *gc.get_threshold())
"""


def start_web_application(**environment: str) -> list[int]:
    """Import the ASGI application in a process of its own, as each daphne does: what
    is frozen, what is left tracked, and the three thresholds."""
    return [int(number) for number in probe_output(PROBE, **environment).split()]


def test_the_web_applications_start_up_objects_are_frozen():
    """Far more objects frozen than left for the collector to walk."""
    frozen, tracked, *_ = start_web_application()
    assert frozen > 10 * tracked, (frozen, tracked)


def test_the_web_application_takes_its_collector_thresholds_from_the_settings():
    *_, young, middle, full = start_web_application(GC_THRESHOLDS="12345,17,9")
    assert (young, middle, full) == (12345, 17, 9)
