"""The "Straddle next hand" toggle in a real Chromium (issue #13): shown only to the
player left of the next big blind, pressed when asked, and the next deal tells them the
straddle was posted."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tables.models import Table, TableStatus
from tables.services.admin import table_status_set
from tables.services.seating import seat_take
from tests.browser.test_table_ui import holdem_table, outside_the_browser_loop, player
from tests.kit import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def seat_all_paused(table, users) -> None:
    """Seat everyone, then pause the table: no hand is dealt until an admin opens it (a
    paused table takes no buy-ins, so the seats come first; each sit is its own command,
    so the deal is held meanwhile)."""
    Table.objects.filter(pk=table.pk).update(next_hand_at=timezone.now() + timedelta(hours=1))
    for number, user in enumerate(users, start=1):
        seat_take(
            table_id=table.id,
            user=user,
            seat_number=number,
            buy_in=10_000,
            idempotency_key=f"straddle-{user.username}",
        )
    table_status_set(table_id=table.id, status=TableStatus.PAUSED)
    Table.objects.filter(pk=table.pk).update(next_hand_at=None)


def test_the_straddle_toggle_is_offered_left_of_the_big_blind_and_the_deal_posts_it(
    open_player,
):
    # Paused: the players sit down and alice asks before the first hand is dealt.
    table = holdem_table(action_seconds=30)
    table.stake_level.allow_straddle = True
    table.stake_level.save()
    bob, carol, dave, alice = (player(name) for name in ("bob", "carol", "dave", "alice"))
    # The first hand: button seat 1 (bob, seated first), blinds carol and dave, so the
    # straddle is alice's in seat 4; bob has none.
    outside_the_browser_loop(seat_all_paused, table=table, users=[bob, carol, dave, alice])
    a = open_player(alice, PASSWORD)
    a.goto(f"/tables/{table.id}/")
    b = open_player(bob, PASSWORD)
    b.goto(f"/tables/{table.id}/")
    toggle = a.locator("#btn-straddle")
    expect(toggle).to_be_visible()
    expect(toggle).to_have_text("Straddle next hand ($4)")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    expect(b.locator("#conn")).to_have_text("Connected")
    expect(b.locator("#btn-straddle")).to_be_hidden()
    expect(a.locator("#btn-overblind")).to_be_hidden()  # not allowed at this stake level

    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    expect(b.locator("#hand-log")).to_contain_text("alice asks to straddle next hand")

    outside_the_browser_loop(table_status_set, table_id=table.id, status=TableStatus.OPEN)
    log = a.locator("#hand-log")
    expect(log).to_contain_text("alice posts a straddle $4")
    expect(log).to_contain_text("You posted a straddle of $4.00: you act last before the flop.")
    # Bob, left of the straddle, acts first: the call is the straddle.
    expect(b.locator("#act-now")).to_be_visible()
    expect(b.locator("#btn-call")).to_contain_text("Call $4")
    # The request was for this hand only; next hand's straddle seat is bob's.
    expect(toggle).to_be_hidden()
