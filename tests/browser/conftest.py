"""Browser fixtures: Debian's chromium driven by Playwright (sync API) against `live_room`.

The browser is missing: the tests are skipped with the reason, except under `CI=true`,
where a missing browser fails them (CI must run them). Each player gets their own browser
context (own cookies), logged in through the real log-in page.
"""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = Path(__file__).resolve().parent.parent.parent / "docs" / "screenshots"
# The table's sounds (static/js/table/sound.js) start off in the tests, unless a test
# turns them on: the switch it sets is then remembered as in any browser.
SOUND_OFF = """
const key = "poker-room.sound";
if (localStorage.getItem(key) === null) localStorage.setItem(key, "off");
"""


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    reason = f"{CHROMIUM} is missing: install Debian's chromium (make browser) to run these"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


# Package scope: Playwright's sync API runs an event loop in this thread while it is
# started, so it must be stopped before the suite's asyncio tests run.
@pytest.fixture(scope="package")
def browser(live_room) -> Iterator[object]:
    _require_chromium()
    from playwright.sync_api import expect, sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the tests' own ORM calls
    # (making users and tables, reading hands) are plain synchronous code all the same.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    expect.set_options(timeout=15_000)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
            # While Playwright's loop runs in this thread, Django keeps the tests' database
            # connection apart from the thread's own (asgiref's Local goes by context
            # there), and nothing closes it later: left open, the test database could not
            # be dropped at the end of the run ("being accessed by other users").
            connections.close_all()
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def room(live_room, browser) -> str:
    """The base URL of the running room (daphne, the timer loop and Celery on the test database)."""
    return live_room


@pytest.fixture
def open_player(browser, room):
    """`open_player(user, password, viewport=…, **options)` -> a logged-in page in a
    fresh browser context."""
    contexts = []

    def login(user, password: str, *, viewport: dict | None = None, **options):
        """`options`: more of the context's settings (is_mobile, reduced_motion, …)."""
        context = browser.new_context(viewport=viewport or VIEWPORT, base_url=room, **options)
        context.add_init_script(SOUND_OFF)
        contexts.append(context)
        page = context.new_page()
        page.goto("/accounts/login/")
        page.fill("#id_username", user.username)
        page.fill("#id_password", password)
        page.click("main form button[type=submit]")
        page.wait_for_url(f"{room}/")
        return page

    yield login
    for context in contexts:
        context.close()
