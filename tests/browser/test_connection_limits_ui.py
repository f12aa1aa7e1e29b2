"""The page of a player over the room's limits per viewer (tables/viewer_limits.py), in a
real Chromium: a table socket closed 4429 says why on the page, on a desktop and on a
phone, and connects once the player has closed another.

The player's other sockets are opened outside the browser with its session cookie, as
other tabs would hold them: the room counts the user's sockets, whichever page holds
them."""

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest
from django.conf import settings
from playwright.sync_api import expect
from websockets.sync.client import ClientConnection, connect

from tests.browser.conftest import PHONE, VIEWPORT
from tests.browser.test_table_ux import inside_viewport, quiet_table, seated
from tests.kit import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@contextmanager
def other_tab(room: str, table_id: int, cookie: str) -> Iterator[ClientConnection]:
    """A table socket of the player's, open and following the table (its snapshot read)."""
    url = f"{room.replace('http', 'ws', 1)}/ws/tables/{table_id}/"
    with connect(url, origin=room, additional_headers={"Cookie": cookie}) as ws:
        first = json.loads(ws.recv(timeout=10))
        assert first["type"] == "snapshot", first
        yield ws


@pytest.mark.parametrize("viewport", [VIEWPORT, PHONE], ids=["desktop", "phone"])
def test_a_socket_over_the_users_cap_says_so_and_connects_once_a_tab_is_closed(
    open_player, room, viewport
):
    table = quiet_table()
    users = seated(table)
    page = open_player(users[1], PASSWORD, viewport=viewport, is_mobile=viewport is PHONE)
    session = next(c for c in page.context.cookies() if c["name"] == settings.SESSION_COOKIE_NAME)
    cookie = f"{session['name']}={session['value']}"
    with ExitStack() as tabs:
        others = [
            tabs.enter_context(other_tab(room, table.id, cookie))
            for _ in range(settings.TABLE_SOCKETS_PER_USER)
        ]
        page.goto(f"/tables/{table.id}/")
        expect(page.locator("#conn")).to_have_text("Too many connections")
        banner = page.locator("#conn-banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("close some table tabs")
        expect(banner).to_contain_text("Trying again in 30 s")
        inside_viewport(page, "#conn-banner button")
        others.pop().close()
        banner.get_by_role("button", name="Retry now").click()
        expect(page.locator("#conn")).to_have_text("Connected")
        expect(banner).to_be_hidden()
        expect(page.locator(".seat.me")).to_be_visible()
