"""Run it twice in a real Chromium (issue #16): the players all-in are asked "Run it
twice?" with a clock, agree by clicking (one of them on a 390x844 phone), and both
boards are drawn, the hand log saying so."""

import pytest
from playwright.sync_api import expect

from tables.engine.cards import card_str
from tables.engine.state import HandState
from tables.models import Hand, HandStatus, Seat, Table, TableStatus
from tables.services import play
from tables.services.admin import table_status_set
from tests.browser.conftest import PHONE
from tests.browser.test_straddle_ui import seat_all_paused
from tests.browser.test_table_ui import holdem_table, outside_the_browser_loop, player
from tests.conftest import wait_for
from tests.kit import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def run_twice_table(users) -> Table:
    table = holdem_table(action_seconds=30)
    table.stake_level.run_it_twice = True
    table.stake_level.save()
    seat_all_paused(table, users)
    return table


def deal_and_go_all_in(*, table: Table) -> None:
    """Open the table (the room's worker deals) and have both players go all-in
    preflop: the one to act moves all-in, the other calls."""
    table_status_set(table_id=table.id, status=TableStatus.OPEN)
    hand = wait_for(
        lambda: Hand.objects.filter(table=table, status=HandStatus.IN_PROGRESS).first(),
        what="the deal",
    )
    for _ in range(2):
        state = HandState.from_dict(Hand.objects.get(pk=hand.pk).state)
        seat = Seat.objects.select_related("player").get(table=table, number=state.actor)
        legal = state.legal_actions()
        if legal.can_bet_raise:
            kind, amount = "bet_raise", legal.max_to
        else:
            kind, amount = "call", None
        play.hand_act(table_id=table.id, user=seat.player, kind=kind, amount=amount)


def test_both_players_agree_by_clicking_and_both_boards_are_drawn(open_player):
    alice, bob = player("alice"), player("bob")
    table = outside_the_browser_loop(run_twice_table, users=[alice, bob])
    a = open_player(alice, PASSWORD, viewport=PHONE)
    a.goto(f"/tables/{table.id}/")
    b = open_player(bob, PASSWORD)
    b.goto(f"/tables/{table.id}/")
    for page in (a, b):
        expect(page.locator("#conn")).to_have_text("Connected")
    outside_the_browser_loop(deal_and_go_all_in, table=table)

    for page in (a, b):
        expect(page.locator("#run-twice")).to_be_visible()
        expect(page.locator("#run-twice-text")).to_have_text("Everyone is all-in. Run it twice?")
        expect(page.locator("#clock-text")).to_contain_text("s to answer")
    # On the phone the question and both answers fit the screen.
    for button in ("#btn-run-twice-yes", "#btn-run-twice-no"):
        box = a.locator(button).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    a.locator("#btn-run-twice-yes").click()
    expect(a.locator("#run-twice-text")).to_have_text(
        "You agreed to run it twice: waiting for the others."
    )
    expect(a.locator("#btn-run-twice-yes")).to_be_hidden()
    expect(b.locator("#hand-log")).to_contain_text("alice agrees to run it twice")
    b.locator("#btn-run-twice-yes").click()

    for page in (a, b):
        expect(page.locator("#hand-log")).to_contain_text("the board is run twice")
        expect(page.locator("#board .card")).to_have_count(5)
        expect(page.locator("#board-2")).to_be_visible()
        expect(page.locator("#board-2 .card")).to_have_count(5)
        expect(page.locator("#board-2")).to_have_attribute("aria-label", "Second board, 5 cards")
        expect(page.locator("#board")).to_have_attribute("aria-label", "First board, 5 cards")
        expect(page.locator("#run-twice")).to_be_hidden()
        expect(page.locator("#hand-log")).to_contain_text("Second board, River")
        # Each run's winning cards light up on its own board (at least three in hold'em).
        expect(page.locator("#board-2 .card.best").nth(2)).to_be_visible()
    # The page drew the boards the hand has (run 2 from the deck after run 1).
    hand = outside_the_browser_loop(lambda: Hand.objects.get(table=table))
    state = HandState.from_dict(hand.state)
    assert state.run_twice is not None and state.run_twice.runs == 2
    second = [card_str(c) for c in state.run_twice.second_board]
    drawn = a.locator("#board-2 .card").evaluate_all("nodes => nodes.map(n => n.dataset.card)")
    assert drawn == second

    # The hand history replays both runs, the second board beside the first.
    b.goto("/hands/")
    b.locator("#hands-list button").first.click()
    expect(b.locator("#replay-board-2")).to_be_hidden()
    b.click("#replay-all")
    expect(b.locator("#replay-board .card")).to_have_count(5)
    expect(b.locator("#replay-board-2 .card")).to_have_count(5)
    expect(b.locator("#replay-streets")).to_contain_text("Second board, River")
    replayed = b.locator("#replay-board-2 .card").evaluate_all("ns => ns.map(n => n.dataset.card)")
    assert replayed == second


def test_a_refusal_by_clicking_runs_the_board_once(open_player):
    alice, bob = player("alice"), player("bob")
    table = outside_the_browser_loop(run_twice_table, users=[alice, bob])
    a = open_player(alice, PASSWORD, viewport=PHONE)
    a.goto(f"/tables/{table.id}/")
    expect(a.locator("#conn")).to_have_text("Connected")
    outside_the_browser_loop(deal_and_go_all_in, table=table)
    a.locator("#btn-run-twice-no").click()
    log = a.locator("#hand-log")
    expect(log).to_contain_text("alice refuses to run it twice")
    expect(log).to_contain_text("The board is run once")
    expect(a.locator("#board .card")).to_have_count(5)
    expect(a.locator("#board-2")).to_be_hidden()
    expect(a.locator("#run-twice")).to_be_hidden()
