"""Issue #16 in a real Chromium, the regulars' extras: table chat with a mute and the
dealer-messages switch, the auto top-up order, and the hand helper (your hand named as
the board comes, the winning five cards lit up at the showdown)."""

import pytest
from playwright.sync_api import expect

from tables.models import Hand, HandStatus, Seat
from tests.browser.test_table_ux import act, all_in_runout, dealt, quiet_table, seated
from tests.kit import PASSWORD, current

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def at_the_table(open_player):
    """A quiet table of two, and alice's page open at it, connected."""
    table = quiet_table()
    users = seated(table)
    page = open_player(users[1], PASSWORD)
    page.goto(f"/tables/{table.id}/")
    expect(page.locator("#conn")).to_have_text("Connected")
    return table, users, page


def say(page, text: str) -> None:
    page.fill("#chat-text", text)
    page.click("#chat-form button[type=submit]")


def test_players_chat_and_a_muted_player_is_shown_as_muted(open_player):
    table = quiet_table()
    users = seated(table)
    alice = open_player(users[1], PASSWORD)
    bob = open_player(users[2], PASSWORD)
    for page in (alice, bob):
        page.goto(f"/tables/{table.id}/")
        expect(page.locator("#conn")).to_have_text("Connected")
    say(alice, "good luck <b>all</b>")
    # Text, never markup: the angle brackets arrive as typed.
    expect(bob.locator("#chat-lines")).to_contain_text("alice: good luck <b>all</b>")
    expect(alice.locator("#chat-text")).to_have_value("")
    bob.get_by_role("button", name="Mute alice").click()
    expect(bob.locator("#chat-lines")).to_contain_text("alice: (muted)")
    expect(bob.locator("#chat-muted")).to_contain_text("alice")
    say(alice, "are you there?")
    expect(alice.locator("#chat-lines")).to_contain_text("are you there?")
    expect(bob.locator("#chat-lines")).not_to_contain_text("are you there?")
    # Reopened, bob's page still knows: the snapshot lists the mute.
    bob.reload()
    expect(bob.locator("#chat-lines .chat-muted")).to_have_count(2)
    bob.locator("#chat-muted button").click()
    say(alice, "welcome back")
    expect(bob.locator("#chat-lines")).to_contain_text("alice: welcome back")


def test_the_dealer_messages_switch_hides_who_won_what_and_is_remembered(open_player):
    table, users, page = at_the_table(open_player)
    state = dealt(table)
    act(table, users[state.actor], "fold")
    win = page.locator("#hand-log .log-win")
    expect(win).to_be_visible()
    page.uncheck("#dealer-lines")
    expect(win).to_be_hidden()
    page.reload()
    expect(page.locator("#dealer-lines")).not_to_be_checked()


def test_an_auto_top_up_order_refills_the_stack_between_hands(open_player):
    table, users, page = at_the_table(open_player)
    expect(page.locator("#auto-top-up")).to_be_visible()
    page.select_option("#auto-top-up-mode", "max")
    expect(page.locator("#hand-log")).to_contain_text("Auto top-up: $100 added.")
    expect(page.locator('.seat.me [aria-label="Stack $200"]')).to_be_visible()
    assert Seat.objects.get(player=users[1]).stack == table.stake_level.buy_in_max
    page.select_option("#auto-top-up-mode", "below")
    expect(page.locator("#auto-top-up-below")).to_be_visible()
    page.fill("#auto-top-up-bb", "40")
    page.locator("#auto-top-up-bb").dispatch_event("change")
    page.reload()
    expect(page.locator("#auto-top-up-mode")).to_have_value("below")
    expect(page.locator("#auto-top-up-bb")).to_have_value("40")


def test_the_hand_helper_names_your_hand_and_the_showdown_lights_the_winning_five(
    open_player,
):
    table, users, page = at_the_table(open_player)
    state = dealt(table)
    expect(page.locator("#best-hand")).to_be_hidden()  # nothing named before the flop
    act(table, users[state.actor], "call")
    _, state = current(table)
    act(table, users[state.actor], "check")
    expect(page.locator("#board .card")).to_have_count(3)
    expect(page.locator("#best-hand")).to_contain_text("You have ")
    # Reopened, the snapshot names it too.
    page.reload()
    expect(page.locator("#best-hand")).to_contain_text("You have ")
    while (live := current_or_none(table)) is not None:
        act(table, users[live.actor], "check" if live.legal_actions().can_check else "call")
    expect(page.locator("#hand-log")).to_contain_text("wins")
    expect(page.locator(".card.best").first).to_be_visible()
    lit = page.locator(".card.best").count()
    assert 5 <= lit <= 10, lit  # five per winning hand (a split lights two)


def current_or_none(table):
    hand = Hand.objects.filter(table=table, status=HandStatus.IN_PROGRESS).first()
    return None if hand is None else current(table)[1]


def test_an_all_in_runout_lights_the_winning_cards_too(open_player):
    table = quiet_table()
    users = seated(table)
    page = open_player(users[1], PASSWORD)
    all_in_runout(page, table, users)
    expect(page.locator(".card.best").first).to_be_visible()


def test_a_spectator_reads_the_chat_but_has_no_box_to_write(open_player, browser, room):
    table = quiet_table()
    users = seated(table)
    alice = open_player(users[1], PASSWORD)
    alice.goto(f"/tables/{table.id}/")
    expect(alice.locator("#conn")).to_have_text("Connected")
    say(alice, "hello rail")
    context = browser.new_context(base_url=room)
    try:
        rail = context.new_page()
        rail.goto(f"/tables/{table.id}/")
        expect(rail.locator("#chat-lines")).to_contain_text("alice: hello rail")
        expect(rail.locator("#chat-text")).to_be_disabled()
    finally:
        context.close()
