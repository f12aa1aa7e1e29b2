"""A Python snippet run in a process of its own, as a web process starts (each daphne
imports the ASGI application in a fresh interpreter): what start-up leaves behind."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def probe_output(code: str, **environment: str) -> str:
    """What `code` prints, run from the project's root with the test settings."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": "/usr/bin:/bin",
            "DJANGO_SETTINGS_MODULE": "poker_room.settings.test",
            **environment,
        },
        check=True,
    )
    return done.stdout
