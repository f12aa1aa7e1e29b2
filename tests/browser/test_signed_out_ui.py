"""The table page of a player whose session ended (tables/session_watch.py), in a real
Chromium: logged out in another tab of the same browser, the table's socket is closed
4401 and the page says the player is signed out, with a way to sign in again, instead
of reconnecting."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_table_ux import quiet_table, seated
from tests.kit import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_log_out_in_another_tab_says_signed_out_at_the_table(open_player):
    table = quiet_table()
    users = seated(table)
    page = open_player(users[1], PASSWORD)
    page.goto(f"/tables/{table.id}/")
    expect(page.locator("#conn")).to_have_text("Connected")
    other_tab = page.context.new_page()
    other_tab.goto("/")
    other_tab.get_by_role("button", name="Log out").click()
    expect(page.locator("#conn")).to_have_text("Signed out")
    banner = page.locator("#conn-banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("You are signed out of this table")
    expect(banner.get_by_role("link", name="Sign in again")).to_have_attribute(
        "href", f"/accounts/login/?next=%2Ftables%2F{table.id}%2F"
    )
    # No reconnect is scheduled: the same cookie would only open a spectator's socket.
    socket = "[window.tableClient.socket.closedForGood, window.tableClient.socket.retryTimer]"
    assert page.evaluate(socket) == [True, None]
