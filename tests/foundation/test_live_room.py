"""The room runs as it does in production: daphne serving HTTP, static files and
WebSockets, with the timer loop and a Celery worker, all reachable from outside the test
process."""

import json
import urllib.error
import urllib.request

import pytest

from tests.conftest import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def health(url: str) -> dict:
    try:
        with urllib.request.urlopen(f"{url}/healthz") as response:  # noqa: S310
            return json.load(response)
    except urllib.error.HTTPError as error:  # a 503 carries the report too
        return json.load(error)


def test_the_live_room_serves_health_pages_and_static_files(live_room):
    # /healthz is about the process (its database and Redis answer), not the room.
    wait_for(lambda: health(live_room)["status"] == "ok", timeout=10, what="/healthz ok")
    with urllib.request.urlopen(f"{live_room}/static/css/room.css") as response:  # noqa: S310
        assert b"--felt" in response.read()
    with urllib.request.urlopen(f"{live_room}/accounts/login/") as response:  # noqa: S310
        assert b"Log in" in response.read()
