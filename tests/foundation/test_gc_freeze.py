"""The web processes' start-up objects are out of the cyclic collector's way
(poker_room/gc_freeze.py): a full collection walks only what was built after."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc
import poker_room.asgi
print(gc.get_freeze_count(), len(gc.get_objects()))
"""


def test_the_web_applications_start_up_objects_are_frozen():
    """Importing the ASGI application, as each daphne does, freezes what it built:
    far more objects frozen than left for the collector to walk."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "poker_room.settings.test"},
        check=True,
    )
    frozen, tracked = map(int, done.stdout.split())
    assert frozen > 10 * tracked, done.stdout
