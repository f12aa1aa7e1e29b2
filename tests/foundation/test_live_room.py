"""The room runs as it does in production: daphne serving HTTP, static files and
WebSockets, with the timer loop and a Celery worker, all reachable from outside the test
process."""

import json
import urllib.request

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_live_room_serves_health_pages_and_static_files(live_room):
    with urllib.request.urlopen(f"{live_room}/healthz") as response:  # noqa: S310
        assert json.load(response)["status"] == "ok"
    with urllib.request.urlopen(f"{live_room}/static/css/room.css") as response:  # noqa: S310
        assert b"--felt" in response.read()
    with urllib.request.urlopen(f"{live_room}/accounts/login/") as response:  # noqa: S310
        assert b"Log in" in response.read()
