"""Issue #16 in a real Chromium: what a regular expects of the table page.

- On a phone (390x844 and 360x640) Fold/Call/Raise are inside the viewport on your turn,
  without scrolling (element boxes against the viewport).
- Fold when checking is free asks "check instead?" and never sends a fold.
- Coming back from sitting out: wait for the big blind, or post one now.
- A page reopened mid-hand keeps the hand's log; the reconnect bonus is named as such;
  everyone sees a "Disconnected" badge and the actor's clock.
- The replayer shows four backs for an Omaha hand not shown; the profile and the history
  number a hand the same way.
- Sounds (Web Audio) with a remembered switch; motion (deal, chips, a runout street by
  street), skippable, and none at all under `prefers-reduced-motion`.

Hands are dealt by the tests (`deal`, the tables' next hand an hour away) so that the
room's own timer loop deals none under them.
"""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from tables.engine.state import HandState
from tables.models import Game, Hand, Seat, SeatStatus, Structure
from tables.services import play
from tables.services.seating import seat_take
from tests.browser.conftest import PHONE, SCREENSHOTS
from tests.browser.test_csp_browser import assert_no_csp_violation, watched
from tests.browser.test_table_ui import holdem_table, outside_the_browser_loop, player, sit
from tests.kit import PASSWORD, StakeLevelFactory, TableFactory, current, deal

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SMALL_PHONE = {"width": 360, "height": 640}


def quiet_table(**fields):
    """A six-seat NL Hold'em table whose next hand the test deals itself."""
    return holdem_table(next_hand_at=timezone.now() + timedelta(hours=1), **fields)


def seated(table, names=("alice", "bob")):
    """Funded players seated in seats 1, 2, … (outside the browser's loop)."""
    users = {}
    for number, name in enumerate(names, start=1):
        users[number] = player(name)
        outside_the_browser_loop(
            seat_take, table_id=table.id, user=users[number], seat_number=number,
            buy_in=10_000, idempotency_key=f"ux-{table.id}-{number}",
        )  # fmt: skip
    return users


def dealt(table) -> HandState:
    outside_the_browser_loop(deal, table=table)
    return current(table)[1]


def act(table, user, kind: str, amount: int | None = None) -> None:
    outside_the_browser_loop(play.hand_act, table_id=table.id, user=user, kind=kind, amount=amount)


def eventually(page: Page, expression: str) -> None:
    """Wait until a JavaScript expression is true (Playwright's `wait_for_function` polls
    with `eval`, which the room's CSP refuses)."""
    for _ in range(150):
        if page.evaluate(expression):
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"never true: {expression}")


def inside_viewport(page: Page, selector: str) -> None:
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    assert box is not None, selector
    assert box["x"] >= 0 and box["y"] >= 0, (selector, box)
    assert box["x"] + box["width"] <= size["width"], (selector, box, size)
    assert box["y"] + box["height"] <= size["height"], (selector, box, size)


@pytest.mark.parametrize("viewport", [PHONE, SMALL_PHONE], ids=["390x844", "360x640"])
def test_on_a_phone_the_action_buttons_are_on_screen_on_your_turn(open_player, viewport):
    table = quiet_table()
    users = seated(table, ("alice", "bob", "carol"))
    state = dealt(table)
    page = open_player(
        users[state.actor], PASSWORD, viewport=viewport, is_mobile=True, has_touch=True
    )
    page.goto(f"/tables/{table.id}/")
    expect(page.locator("#act-now")).to_be_visible()
    assert page.evaluate("window.scrollY") == 0
    for button in ("#btn-fold", "#btn-call", "#btn-raise"):
        inside_viewport(page, button)
    # Scrolled down to the hand log, the buttons are still there.
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.wait_for_timeout(100)
    assert page.evaluate("window.scrollY") > 0
    for button in ("#btn-fold", "#btn-call", "#btn-raise"):
        inside_viewport(page, button)
    page.evaluate("window.scrollTo(0, 0)")
    if viewport == PHONE:
        page.screenshot(path=str(SCREENSHOTS / "table-turn-phone.png"))
    # Not your turn any more: the bar goes back to its place under the table.
    page.click("#btn-call")
    expect(page.locator("#act-now")).to_be_hidden()
    expect(page.locator("#table-app[data-my-turn]")).to_have_count(0)


def test_fold_when_checking_is_free_offers_a_check_and_sends_no_fold(open_player):
    table = quiet_table()
    users = seated(table)
    state = dealt(table)
    button = users[state.actor]
    big_blind = next(u for u in users.values() if u != button)
    page = open_player(big_blind, PASSWORD)
    page.goto(f"/tables/{table.id}/")
    expect(page.locator("#conn")).to_have_text("Connected")
    act(table, button, "call")  # heads-up: the button completes, the big blind may check
    expect(page.locator("#act-now")).to_be_visible()
    fold, prompt = page.locator("#btn-fold"), page.locator("#fold-check")
    expect(fold).to_be_enabled()
    fold.click()
    expect(prompt).to_be_visible()
    expect(prompt).to_contain_text("Checking is free")
    page.click("#btn-fold-cancel")
    expect(prompt).to_be_hidden()
    page.keyboard.press("f")  # the shortcut asks too
    expect(prompt).to_be_visible()
    page.click("#btn-fold-check")
    expect(page.locator("#board .card")).to_have_count(3)
    expect(page.locator("#hand-log")).to_contain_text(f"{big_blind.username} checks")
    expect(page.locator("#action-error")).to_be_hidden()
    hand = Hand.objects.get(table=table)
    assert not [e for e in hand.events.all() if e.data.get("action") == "fold"]


def test_back_from_sitting_out_wait_for_the_big_blind_or_post_one_now(open_player):
    table = quiet_table()
    users = seated(table)
    state = dealt(table)
    alice = users[1]
    page = open_player(alice, PASSWORD)
    page.goto(f"/tables/{table.id}/")
    expect(page.locator("#conn")).to_have_text("Connected")
    page.click("#btn-sitout")
    expect(page.locator("#btn-sitin")).to_have_text("Keep playing")
    expect(page.locator("#btn-sitin-post")).to_be_hidden()
    act(table, users[state.actor], "fold")  # the hand ends: alice sits out
    wait, post = page.locator("#btn-sitin"), page.locator("#btn-sitin-post")
    expect(wait).to_have_text("I'm back: wait for the big blind")
    expect(post).to_have_text("I'm back: post a big blind now")
    expect(page.locator("#seat-hint")).to_have_text("You are sitting out.")
    post.click()
    expect(post).to_be_hidden()
    expect(page.locator("#btn-sitout")).to_be_visible()
    seat = Seat.objects.get(table=table, player=alice)
    assert (seat.status, seat.post_big_blind) == (SeatStatus.WAITING, True)


def test_a_page_reopened_mid_hand_keeps_the_log_and_everyone_sees_the_drop(open_player):
    table = quiet_table()
    users = seated(table)
    state = dealt(table)
    first = users[state.actor]
    act(table, first, "call")
    _, state = current(table)
    dropper = users[state.actor]  # their turn now
    watcher = first
    w = open_player(watcher, PASSWORD)
    d = open_player(dropper, PASSWORD)
    url = f"/tables/{table.id}/"
    for page in (w, d):
        page.goto(url)
        expect(page.locator("#conn")).to_have_text("Connected")
        # Opened mid-hand: the log has the hand so far.
        expect(page.locator("#hand-log")).to_contain_text(f"{first.username} calls $1")
        expect(page.locator("#hand-log")).to_contain_text("posts the big blind")
    expect(d.locator("#hand-log")).to_contain_text("Dealt to you")
    expect(w.locator("#hand-log li", has_text="Dealt to you")).to_have_count(1)  # their own only
    # Everyone sees the actor's clock.
    seat = f'.seat[data-seat="{state.actor}"]'
    expect(w.locator(f"{seat} [data-role=seat-time]")).to_have_text(
        re.compile(r"^(Time bank )?\d+ s$")
    )

    context = d.context
    d.close()  # the tab is closed during their own turn
    badge = w.locator(f"{seat} [data-role=disconnected]")
    expect(badge).to_have_text("Disconnected")
    expect(w.locator(f"{seat} [data-role=seat-time]")).to_be_visible()
    expect(w.locator("#hand-log")).to_contain_text(f"{dropper.username} is disconnected.")
    w.screenshot(path=str(SCREENSHOTS / "table-disconnected.png"))

    back = context.new_page()
    back.goto(url)
    log = back.locator("#hand-log")
    expect(log).to_contain_text(f"{first.username} calls $1")
    expect(log).to_contain_text("Dealt to you")
    bonus = f"+{table.reconnect_bonus_seconds} s reconnect bonus"
    expect(log).to_contain_text(f"{dropper.username} is back: {bonus}")
    expect(back.locator("#clock-text")).to_contain_text(bonus)
    expect(w.locator(f"{seat} [data-role=seat-time]")).to_contain_text(bonus)
    expect(badge).to_have_count(0)
    expect(w.locator("#hand-log")).to_contain_text(f"{dropper.username} is connected again.")
    # One line per event, not the log twice over.
    expect(log.locator("li", has_text=f"{first.username} calls $1")).to_have_count(1)
    # A dropped socket (resync in place) and a reload keep the hand's log as well.
    w.evaluate("window.tableClient.socket.drop()")
    expect(w.locator("#hand-log")).to_contain_text("Reconnected")
    expect(w.locator("#hand-log li", has_text=f"{first.username} calls $1")).to_have_count(1)
    w.reload()
    expect(w.locator("#hand-log")).to_contain_text(f"{first.username} calls $1")
    expect(w.locator("#hand-log")).to_contain_text("posts the big blind")


def test_the_replayer_shows_four_backs_for_an_omaha_hand_and_numbers_hands_as_the_profile(
    open_player,
):
    omaha = StakeLevelFactory(
        name="PL Omaha $1/$2", game=Game.OMAHA, structure=Structure.POT_LIMIT,
        small_blind=100, big_blind=200, small_bet=200, big_bet=400,
        buy_in_min=4_000, buy_in_max=20_000,
    )  # fmt: skip
    later = timezone.now() + timedelta(hours=1)
    # A hand at another table first: the Omaha table's hand #1 is not hand id 1.
    other = quiet_table(name="Elsewhere")
    other_users = seated(other, ("carol", "dave"))
    state = dealt(other)
    act(other, other_users[state.actor], "fold")
    table = TableFactory(name="Bellagio", stake_level=omaha, seats=6, next_hand_at=later)
    users = seated(table)
    state = dealt(table)
    act(table, users[state.actor], "fold")
    hand = Hand.objects.get(table=table)
    assert hand.id != hand.number
    winner = next(u for u in users.values() if u != users[state.actor])
    page = open_player(winner, PASSWORD)
    page.goto("/accounts/profile/")
    link = page.locator(f'a[href$="#hand-{hand.id}"]')
    expect(link).to_have_text(f"#{hand.number}")
    link.click()
    expect(page.locator("#replay-title")).to_have_text(f"Hand #{hand.number} at Bellagio")
    expect(page.locator(f'#hands-list button[data-id="{hand.id}"]')).to_contain_text(
        f"#{hand.number} · Bellagio"
    )
    rows = page.locator("#replay-seats tbody tr")
    expect(rows).to_have_count(2)
    folded = rows.filter(has_text=users[state.actor].username)
    expect(folded.locator(".card.back")).to_have_count(4)
    mine = rows.filter(has_text=winner.username)
    expect(mine.locator(".card:not(.back)")).to_have_count(4)


def test_sounds_play_on_table_events_and_the_switch_is_remembered(open_player):
    table = quiet_table()
    users = seated(table)
    page = open_player(users[1], PASSWORD)
    console = watched(page)
    page.goto(f"/tables/{table.id}/")
    switch = page.locator("#sound-on")
    expect(switch).not_to_be_checked()  # off in the tests (conftest)
    switch.check()
    page.reload()
    expect(page.locator("#conn")).to_have_text("Connected")
    expect(switch).to_be_checked()
    page.click("#felt")  # a gesture: the browser lets the page's AudioContext start
    state = dealt(table)
    assert state.actor == 1  # alice, seated first, has the button and acts first
    played = "window.tableClient.sounds.played"
    eventually(page, f"{played}.includes('deal') && {played}.includes('chips')")
    eventually(page, f"{played}.includes('turn')")
    assert page.evaluate("window.tableClient.sounds.context.state") == "running"
    act(table, users[1], "call")
    act(table, users[2], "check")
    eventually(page, f"{played}.includes('check')")
    act(table, users[2], "bet_raise", 200)  # on the flop
    act(table, users[1], "fold")
    eventually(page, f"{played}.includes('win')")
    assert_no_csp_violation(page, console)

    switch.uncheck()
    page.reload()
    expect(page.locator("#conn")).to_have_text("Connected")
    expect(switch).not_to_be_checked()
    dealt(table)
    expect(page.locator("#hand-log")).to_contain_text("Hand #2")
    assert page.evaluate(played) == []


def test_a_sound_says_your_time_is_running_out(open_player):
    table = quiet_table(action_seconds=1, time_bank_seconds=3)
    users = seated(table)
    page = open_player(users[1], PASSWORD)
    page.goto(f"/tables/{table.id}/")
    page.locator("#sound-on").check()
    # Dealt only once the page is on the stream: a turn read from the snapshot makes no
    # sound, and with one second to act the turn would be over before a late page saw it.
    expect(page.locator("#conn")).to_have_text("Connected")
    state = dealt(table)
    assert state.actor == 1
    played = "window.tableClient.sounds.played"
    eventually(page, f"{played}.includes('turn')")
    # One second of action time, then the time bank: the warning sounds once.
    eventually(page, f"{played}.includes('hurry')")
    assert page.evaluate(f"{played}.filter(s => s === 'hurry').length") == 1


RECORD_MOTION = """
window.__motion = {css: [], flights: 0, most: 0};
document.addEventListener("animationstart", (e) => {
  window.__motion.css.push({card: e.target.dataset.card || "", t: performance.now()});
});
document.addEventListener("transitionstart", () => window.__motion.css.push({card: "", t: 0}));
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes) {
    if (n.classList && n.classList.contains("chip-fly")) window.__motion.flights += 1;
  }
}).observe(document, {childList: true, subtree: true});
setInterval(() => {
  window.__motion.most = Math.max(window.__motion.most, document.getAnimations().length);
}, 10);
"""


def all_in_runout(page: Page, table, users) -> None:
    """Open the table, deal, then both players all-in preflop: the board is dealt to the
    river at once. Returns when the page has the whole board and the winner."""
    page.goto(f"/tables/{table.id}/")
    expect(page.locator("#conn")).to_have_text("Connected")
    state = dealt(table)
    act(table, users[state.actor], "bet_raise", state.legal_actions().all_in_to)
    _, state = current(table)
    act(table, users[state.actor], "call")
    expect(page.locator("#board .card")).to_have_count(5)
    expect(page.locator("#hand-log")).to_contain_text("wins")


def test_cards_and_chips_move_and_an_all_in_runout_comes_street_by_street(open_player):
    table = quiet_table()
    users = seated(table)
    page = open_player(users[1], PASSWORD)
    page.context.add_init_script(RECORD_MOTION)
    all_in_runout(page, table, users)
    page.wait_for_timeout(2_500)  # the runout has landed
    motion = page.evaluate("window.__motion")
    assert motion["flights"] >= 2  # bets to the pot, the pot to the winner
    board = page.eval_on_selector_all("#board .card", "els => els.map(e => e.dataset.card)")
    started = {}
    for entry in motion["css"]:
        if entry["card"] in board:
            started.setdefault(entry["card"], entry["t"])
    assert set(started) == set(board), (started, board)
    flop, turn, river = max(started[c] for c in board[:3]), started[board[3]], started[board[4]]
    # Each street waits for the one before to land, then a pause (motion.js: 320 + 550 ms).
    assert turn - flop > 700 and river - turn > 700, (flop, turn, river)


def test_a_click_on_the_felt_lands_a_runout_at_once(open_player):
    table = quiet_table()
    users = seated(table)
    page = open_player(users[1], PASSWORD)
    all_in_runout(page, table, users)
    running = "document.getAnimations().filter(a => a.playState === 'running').length"
    assert page.evaluate(running) > 0  # the turn and the river are still on their way
    page.click("#board")
    assert page.evaluate(running) == 0


def test_with_reduced_motion_nothing_moves(open_player):
    table = quiet_table()
    users = seated(table)
    page = open_player(users[1], PASSWORD, reduced_motion="reduce")
    page.context.add_init_script(RECORD_MOTION)
    all_in_runout(page, table, users)
    page.wait_for_timeout(500)
    motion = page.evaluate("window.__motion")
    assert motion == {"css": [], "flights": 0, "most": 0}
    expect(page.locator(".deal-in")).to_have_count(0)


def test_call_any_ticked_before_the_turn_calls_a_raise_and_a_waiting_player_posts_now(
    open_player,
):
    table = quiet_table()
    users = seated(table, ("alice", "bob", "carol"))
    state = dealt(table)
    assert state.actor == 1  # the button, first seated, acts first three-handed
    small_blind = open_player(users[2], PASSWORD)
    small_blind.goto(f"/tables/{table.id}/")
    advance = small_blind.locator("#act-advance")
    expect(advance).to_contain_text("Fold to any bet")
    call_any = advance.locator("input[data-advance=call_any]")
    call_any.check()
    small_blind.wait_for_timeout(300)  # the ack is in
    act(table, users[1], "bet_raise", 600)
    expect(small_blind.locator("#hand-log")).to_contain_text(f"{users[2].username} calls $5")
    expect(call_any).not_to_be_checked()

    # A newcomer waiting for the big blind asks to post one now.
    dave = player("dave")
    newcomer = open_player(dave, PASSWORD)
    newcomer.goto(f"/tables/{table.id}/")
    sit(newcomer, 5, "100")
    post = newcomer.locator("#btn-post-bb")
    expect(post).to_be_visible()
    expect(newcomer.locator("#seat-hint")).to_have_text("Waiting for the big blind to reach you.")
    post.click()
    expect(post).to_be_hidden()
    expect(newcomer.locator("#seat-hint")).to_have_text(
        "You come in with a big blind at the next deal."
    )
    assert Seat.objects.get(table=table, player=dave).post_big_blind
