"""The poker room in a real Chromium: sit down, play a hand by clicking, time out, errors.

Two players in two browser contexts play heads-up No-Limit Hold'em at a live room
(daphne, the timer loop and Celery on the test database). Each page's DOM is checked: a
player sees their own hole cards face up and the opponent's face down (the opponent's
cards are nowhere in the page) until the showdown turns them up. The screenshots in
docs/screenshots/ are saved here.
"""

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from playwright.sync_api import Page, expect

from cashier.services import deposit_create
from tables.engine.cards import card_str
from tables.models import Game, Hand, HandStatus, Structure
from tables.services.seating import seat_take
from tests.browser.conftest import PHONE, SCREENSHOTS
from tests.kit import PASSWORD, StakeLevelFactory, TableFactory, UserFactory

CARD_NAME = re.compile(
    r"^(Ace|King|Queen|Jack|Ten|Nine|Eight|Seven|Six|Five|Four|Three|Two)"
    r" of (spades|hearts|diamonds|clubs)$"
)
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def player(name: str, amount: int = 100_000, **fields):
    user = UserFactory(username=name, **fields)
    deposit_create(user=user, amount=amount, idempotency_key=f"browser-{name}")
    return user


def holdem_table(**fields):
    stake = StakeLevelFactory(
        name="NL Hold'em $1/$2",
        game=Game.HOLDEM,
        structure=Structure.NO_LIMIT,
        small_blind=100,
        big_blind=200,
        buy_in_min=4_000,
        buy_in_max=20_000,
        allin_protection=fields.pop("allin_protection", True),
    )
    defaults = {"name": "Copacabana", "seats": 6, "pause_between_hands_ms": 60_000}
    return TableFactory(stake_level=stake, **{**defaults, **fields})


def hilo_stake():
    return StakeLevelFactory(
        name="FL Omaha Hi-Lo $2/$4", game=Game.OMAHA8, structure=Structure.FIXED_LIMIT,
        small_blind=100, big_blind=200, small_bet=200, big_bet=400,
        buy_in_min=4_000, buy_in_max=20_000,
    )  # fmt: skip


def lobby_extras():
    """More tables, so that the lobby looks like a room."""
    omaha = StakeLevelFactory(
        name="PL Omaha $0.50/$1", game=Game.OMAHA, structure=Structure.POT_LIMIT,
        small_blind=50, big_blind=100, small_bet=100, big_bet=200,
        buy_in_min=2_000, buy_in_max=10_000,
    )  # fmt: skip
    hilo = hilo_stake()
    micro = StakeLevelFactory(
        name="NL Hold'em $0.05/$0.10", game=Game.HOLDEM, structure=Structure.NO_LIMIT,
        small_blind=5, big_blind=10, small_bet=10, big_bet=20,
        buy_in_min=200, buy_in_max=1_000,
    )  # fmt: skip
    TableFactory(name="Bellagio", stake_level=omaha, seats=6)
    TableFactory(name="Monte Carlo", stake_level=hilo, seats=8)
    TableFactory(name="Riverboat", stake_level=micro, seats=9)


def outside_the_browser_loop(function, **kwargs):
    """Run a service in a plain thread: Playwright's loop lives in this one, and Django's
    ORM refuses to run in a thread with a running event loop."""

    def run():
        try:
            return function(**kwargs)
        finally:
            connection.close()  # this thread's own connection; the test database is dropped later

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


def sit(page: Page, seat: int, dollars: str) -> None:
    page.get_by_role("button", name=f"Take seat {seat}").click()
    dialog = page.locator("#buyin-dialog")
    expect(dialog).to_be_visible()
    page.fill("#buyin-amount", dollars)
    page.click("#buyin-submit")
    expect(dialog).to_be_hidden()
    expect(page.locator(f'.seat.me[data-seat="{seat}"]')).to_be_visible()


def cards_in_page(page: Page) -> set[str]:
    return set(page.eval_on_selector_all("[data-card]", "els => els.map(e => e.dataset.card)"))


def my_turn(pages: list[Page]) -> Page:
    """The page whose player must act now (waits for one)."""
    for _ in range(100):
        for page in pages:
            if page.locator("#act-now").is_visible():
                return page
        pages[0].wait_for_timeout(100)
    raise AssertionError("nobody got a turn")


def test_two_players_play_a_hand_to_showdown_by_clicking(open_player, browser, room):
    table = holdem_table()
    lobby_extras()
    alice = player("alice", auto_muck=False)
    bob = player("bob", auto_muck=False, four_color_deck=True)
    a, b = open_player(alice, PASSWORD), open_player(bob, PASSWORD)
    url = f"/tables/{table.id}/"
    a.goto(url)
    b.goto(url)
    for page in (a, b):
        expect(page.locator("#conn")).to_have_text("Connected")
    sit(a, 1, "100")
    sit(b, 4, "150")
    seats = {a: (1, 4), b: (4, 1)}

    # The hand starts: each sees their own two cards face up, the other's two face down.
    for page, (mine, theirs) in seats.items():
        expect(page.locator(f'.seat[data-seat="{mine}"] .hole .card:not(.back)')).to_have_count(2)
        expect(page.locator(f'.seat[data-seat="{theirs}"] .hole .card.back')).to_have_count(2)
        for card in page.locator(f'.seat[data-seat="{mine}"] .hole .card').all():
            expect(card).to_have_attribute("aria-label", CARD_NAME)
    expect(b.locator("body.four-color")).to_have_count(1)
    # A spectator on a phone sees every hole card face down.
    phone = browser.new_context(viewport=PHONE, base_url=room, is_mobile=True, has_touch=True)
    spectator = phone.new_page()
    spectator.goto(url)
    expect(spectator.locator(".seat .hole .card.back")).to_have_count(4)
    expect(spectator.locator(".seat .hole .card:not(.back)")).to_have_count(0)
    expect(spectator.locator("#seat-hint")).to_contain_text("Log in to take a seat")
    seen_mid_hand = {a: cards_in_page(a), b: cards_in_page(b)}

    # Preflop: the waiting player ticks an advance action; it shows ticked until used.
    actor = my_turn([a, b])
    waiting = b if actor is a else a
    advance = waiting.locator("#act-advance input[data-advance=check]")
    expect(advance).to_be_visible()
    advance.check()
    expect(advance).to_be_checked()
    waiting.wait_for_timeout(300)  # the ack is in; still ticked
    expect(advance).to_be_checked()
    expect(actor.locator("#btn-call")).to_contain_text("Call $1")
    actor.click("#btn-call")
    # The advance check ran on the waiting player's turn: the flop comes at once.
    for page in (a, b):
        expect(page.locator("#board .card")).to_have_count(3)
        expect(page.locator("#hand-log")).to_contain_text("checks")
    expect(waiting.locator("#act-advance input[data-advance=check]")).not_to_be_checked()

    # Flop: the first to act checks with the keyboard shortcut, the other bets the pot.
    first = my_turn([a, b])
    first.keyboard.press("c")
    second = b if first is a else a
    expect(second.locator("#act-now")).to_be_visible()
    second.click("[data-preset=pot]")
    expect(second.locator("#bet-amount")).to_have_value("4")
    expect(second.locator("#btn-raise")).to_contain_text("Bet $4")
    second.click("#btn-raise")
    expect(first.locator("#btn-call")).to_contain_text("Call $4")
    expect(first.locator(".bet")).to_contain_text("$4")
    first.screenshot(path=str(SCREENSHOTS / "table.png"))
    expect(spectator.locator(".bet")).to_contain_text("$4")
    spectator.screenshot(path=str(SCREENSHOTS / "table-phone.png"), full_page=True)
    phone.close()
    for page in (a, b):
        seen_mid_hand[page] |= cards_in_page(page)
    first.click("#btn-call")

    # Turn and river: check it down.
    for _ in range(4):
        page = my_turn([a, b])
        expect(page.locator("#btn-call")).to_contain_text("Check")
        page.click("#btn-call")
        expect(page.locator("#act-now")).to_be_hidden()
    for page in (a, b):
        expect(page.locator("#hand-log")).to_contain_text("wins")

    # Showdown: both hands face up on both pages; before it, nobody's page held the
    # other's cards.
    hand = Hand.objects.get(table=table)
    assert hand.status == HandStatus.FINISHED
    hole = dict(zip(hand.state["seats"], hand.state["hole"], strict=True))
    for page, (mine, theirs) in seats.items():
        theirs_cards = {card_str(c) for c in hole[theirs]}
        assert not theirs_cards & seen_mid_hand[page]
        assert {card_str(c) for c in hole[mine]} <= seen_mid_hand[page]
        shown = page.locator(f'.seat[data-seat="{theirs}"] .hole .card:not(.back)')
        expect(shown).to_have_count(2)
        assert set(shown.evaluate_all("els => els.map(e => e.dataset.card)")) == theirs_cards
        expect(page.locator(".seat.winner")).not_to_have_count(0)

    # The hand history replays it street by street.
    b.goto("/hands/")
    b.locator("#hands-list button").first.click()
    expect(b.locator("#replay-street")).to_have_text("Preflop")
    expect(b.locator("#replay-streets")).to_contain_text(re.compile(r"\w+ calls \$1"))
    b.click("#replay-next")
    expect(b.locator("#replay-street")).to_have_text("Flop")
    expect(b.locator("#replay-board .card")).to_have_count(3)
    b.click("#replay-all")
    expect(b.locator("#replay-streets")).to_contain_text("wins")
    b.screenshot(path=str(SCREENSHOTS / "hands.png"))

    # The lobby shows the table with its players and average pot; then the cashier.
    a.goto("/")
    row = a.locator(f'#lobby-rows tr[data-id="{table.id}"]')
    expect(row).to_contain_text("2/6")
    expect(row).to_contain_text("$1/$2")
    a.screenshot(path=str(SCREENSHOTS / "lobby.png"))
    a.goto("/cashier/")
    expect(a.locator("h1")).to_have_text("Cashier")
    a.screenshot(path=str(SCREENSHOTS / "cashier.png"))


def test_a_player_whose_time_runs_out_is_folded_and_the_table_says_so(open_player):
    table = holdem_table(action_seconds=1, time_bank_seconds=1, allin_protection=False)
    alice = player("alice")
    bob = player("bob")
    a = open_player(alice, PASSWORD)
    a.goto(f"/tables/{table.id}/")
    sit(a, 1, "100")
    # Two seconds is short: remember every text the countdown showed, however briefly.
    a.evaluate(
        """() => {
          window.clockTexts = [];
          const text = document.getElementById("clock-text");
          new MutationObserver(() => window.clockTexts.push(text.textContent))
            .observe(text, {childList: true, characterData: true, subtree: true});
        }"""
    )
    # Bob sits down without a browser; alice, seated first, has the button and acts first.
    outside_the_browser_loop(
        seat_take, table_id=table.id, user=bob, seat_number=2, buy_in=10_000, idempotency_key="bob"
    )
    expect(a.locator("#hand-log")).to_contain_text("alice ran out of time and folds")
    shown = a.evaluate("window.clockTexts")
    assert any(re.fullmatch(r"\d s to act|Time bank: \d s", t) for t in shown), shown
    expect(a.locator('.seat[data-seat="1"] [data-role=note]')).to_have_text("Time out: fold")
    expect(a.locator('.seat[data-seat="2"]')).to_have_class(re.compile("winner"))
    expect(a.locator("#act-now")).to_be_hidden()


def test_errors_are_shown_buy_in_out_of_range_and_a_lost_connection(open_player):
    table = holdem_table()
    alice = player("alice")
    a = open_player(alice, PASSWORD)
    a.goto(f"/tables/{table.id}/")
    a.get_by_role("button", name="Take seat 3").click()
    a.fill("#buyin-amount", "1")
    a.click("#buyin-submit")
    error = a.locator("#buyin-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("The buy-in must be from $40.00 to $200.00.")
    expect(a.locator("#buyin-dialog")).to_be_visible()
    a.click("#buyin-cancel")

    # The connection drops: a banner says so, then it reconnects and resynchronises.
    a.evaluate("window.tableClient.socket.drop()")
    banner = a.locator("#conn-banner")
    expect(banner).to_contain_text("Connection lost")
    expect(a.locator("#conn")).to_have_text("Connected")
    expect(banner).to_be_hidden()
    expect(a.locator("#hand-log")).to_contain_text("Reconnected")

    # A table that does not exist is a friendly 404 page.
    response = a.goto("/tables/999999/")
    assert response is not None and response.status == 404
    expect(a.locator("h1")).to_have_text("Page not found")


def money_text(cents: int) -> str:
    """An amount as static/js/table/format.js `money` writes it ("$2", "$1.90")."""
    return f"${cents // 100}" if cents % 100 == 0 else f"${cents / 100:.2f}"


def test_at_a_hi_lo_showdown_each_winners_plate_says_which_half_they_won(open_player):
    """Issue #13: "High $x" and "Low $y" on the winners' plates (not two "Wins"), and the
    pot total stays on screen until the next hand."""
    from datetime import timedelta

    from django.utils import timezone

    from tables.models import HandEvent
    from tests.kit import act_passively, deal, stacked_deck_forced

    stake = hilo_stake()
    # The room's own timer loop must not deal: this test deals from a known deck.
    table = TableFactory(
        name="Monte Carlo", stake_level=stake, seats=6, pause_between_hands_ms=60_000,
        next_hand_at=timezone.now() + timedelta(hours=1),
    )  # fmt: skip
    alice, bob = player("alice", auto_muck=False), player("bob", auto_muck=False)
    for number, user in ((1, alice), (2, bob)):
        outside_the_browser_loop(
            seat_take, table_id=table.id, user=user, seat_number=number, buy_in=10_000,
            idempotency_key=f"hilo-{number}",
        )  # fmt: skip
    a = open_player(alice, PASSWORD)
    b = open_player(bob, PASSWORD, viewport=PHONE, is_mobile=True, has_touch=True)
    for page in (a, b):
        page.goto(f"/tables/{table.id}/")
        expect(page.locator("#conn")).to_have_text("Connected")

    # Kings full of nothing for alice (high, no low); bob's ace-four makes the wheel-ish
    # low 7-4-3-2-A and only a pair of nines for high.
    holes = {1: "KdKcJhTh", 2: "Ac4s9d9c"}
    with stacked_deck_forced(holes, "2c3d7hKsQc", button=1, seats=[1, 2]):
        hand = outside_the_browser_loop(deal, table=table)
    hand = outside_the_browser_loop(act_passively, table=table)
    won = {e.data["seat"]: e.data for e in HandEvent.objects.filter(hand=hand, type="won")}
    assert (won[1]["share"], won[2]["share"]) == ("high", "low")
    dollars = {seat: money_text(data["amount"]) for seat, data in won.items()}
    expect(a.locator('.seat[data-seat="1"] [data-role=note]')).to_have_text(f"High {dollars[1]}")
    expect(a.locator('.seat[data-seat="2"] [data-role=note]')).to_have_text(f"Low {dollars[2]}")
    expect(a.locator("#pot .pot-total")).to_have_text("Pot $4")
    expect(b.locator('.seat[data-seat="2"] [data-role=note]')).to_have_text(f"Low {dollars[2]}")
    for page, name in ((a, "showdown-hilo.png"), (b, "showdown-hilo-phone.png")):
        page.click("#board")  # the deal's movement finished at once (motion.js)
        page.screenshot(path=str(SCREENSHOTS / name), full_page=page is b)


def test_a_kill_hand_shows_the_limits_in_force_in_the_table_header(open_player):
    """Issue #13: the header names the kill's limits ("$4/$8 · kill x2", with a
    multiplication sign) during a kill hand, not only the stake level's $2/$4."""
    from datetime import timedelta

    from django.utils import timezone

    from tables.services import play
    from tests.kit import current, deal

    stake = StakeLevelFactory(
        name="FL Hold'em $2/$4 kill", game=Game.HOLDEM, structure=Structure.FIXED_LIMIT,
        small_blind=100, big_blind=200, small_bet=200, big_bet=400,
        buy_in_min=4_000, buy_in_max=20_000, kill="full", kill_min_pot=0,
    )  # fmt: skip
    table = TableFactory(
        name="Killarney", stake_level=stake, seats=6, pause_between_hands_ms=60_000,
        next_hand_at=timezone.now() + timedelta(hours=1),
    )  # fmt: skip
    users = {1: player("alice"), 2: player("bob")}
    for number, user in users.items():
        outside_the_browser_loop(
            seat_take, table_id=table.id, user=user, seat_number=number, buy_in=10_000,
            idempotency_key=f"kill-{number}",
        )  # fmt: skip
    a = open_player(users[1], PASSWORD)
    a.goto(f"/tables/{table.id}/")
    expect(a.locator("#conn")).to_have_text("Connected")
    limits = a.locator("#hand-limits")
    # Hand 1: whoever acts first folds; the other wins the pot and, with it, the kill.
    outside_the_browser_loop(deal, table=table)
    _, state = current(table)
    expect(limits).to_be_hidden()
    outside_the_browser_loop(play.hand_act, table_id=table.id, user=users[state.actor], kind="fold")
    outside_the_browser_loop(deal, table=table)
    _, state = current(table)
    assert state.kill is not None and state.limits.multiplier == "2"
    expect(limits).to_be_visible()
    expect(limits).to_have_text(" · this hand $4/$8 · kill \u00d72")


def test_an_admins_pause_reaches_the_open_table_page_at_once(open_player):
    """Issue #16: the status in the header, a line in the log, and no seat to take while
    the table is paused; all back when it opens again."""
    from tables.models import TableStatus
    from tables.services.admin import table_status_set

    table = holdem_table()
    a = open_player(player("alice"), PASSWORD)
    a.goto(f"/tables/{table.id}/")
    expect(a.locator("#conn")).to_have_text("Connected")
    take = a.get_by_role("button", name="Take seat 1")
    expect(take).to_be_visible()
    outside_the_browser_loop(table_status_set, table_id=table.id, status=TableStatus.PAUSED)
    expect(a.locator("#table-status")).to_have_text("Paused")
    expect(a.locator("#hand-log")).to_contain_text("The table is paused")
    expect(take).to_have_count(0)
    outside_the_browser_loop(table_status_set, table_id=table.id, status=TableStatus.OPEN)
    expect(a.locator("#table-status")).to_have_text("Open")
    expect(take).to_be_visible()


def test_sit_out_next_hand_clicked_during_a_hand_shows_the_way_back_at_once(open_player):
    """Issue #16: the click changed nothing on screen until a reload; now the bar says
    when you sit out and offers "Keep playing" at once, and that takes it back."""
    from datetime import timedelta

    from django.utils import timezone

    from tests.kit import deal

    table = holdem_table(next_hand_at=timezone.now() + timedelta(hours=1))
    alice, bob = player("alice"), player("bob")
    for number, user in ((1, alice), (2, bob)):
        outside_the_browser_loop(
            seat_take, table_id=table.id, user=user, seat_number=number, buy_in=10_000,
            idempotency_key=f"sitout-{number}",
        )  # fmt: skip
    outside_the_browser_loop(deal, table=table)
    a = open_player(alice, PASSWORD)
    a.goto(f"/tables/{table.id}/")
    expect(a.locator("#conn")).to_have_text("Connected")
    sit_out, back = a.locator("#btn-sitout"), a.locator("#btn-sitin")
    sit_out.click()
    expect(back).to_be_visible()
    expect(back).to_have_text("Keep playing")
    expect(sit_out).to_be_hidden()
    expect(a.locator("#table-app")).to_contain_text("You sit out when this hand ends.")
    back.click()
    expect(sit_out).to_be_visible()
    expect(back).to_be_hidden()
