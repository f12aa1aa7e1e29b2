"""Content-Security-Policy in a real Chromium (finding 13): the table page, the Swagger UI
page and Django admin work under the room's strict policy and trigger no violation.

Each page records `securitypolicyviolation` events (an init script, which CSP does not
govern) and the console's "Refused to ..." errors. A last check injects an inline script
on purpose, to show the policy is enforced and the recorder sees a violation.
"""

import pytest
from playwright.sync_api import Page, expect

from accounts.services import auditor_create
from tests.browser.conftest import VIEWPORT
from tests.browser.test_table_ui import holdem_table, player, sit
from tests.kit import PASSWORD, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"}`);
});
"""


def watched(page: Page) -> list[str]:
    """Console errors of this page from now on (CSP reports "Refused to ...")."""
    errors: list[str] = []
    page.context.add_init_script(RECORD_VIOLATIONS)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors


def violations(page: Page) -> list[str]:
    return page.evaluate("() => window.__csp")


def assert_no_csp_violation(page: Page, console: list[str]) -> None:
    assert violations(page) == []
    assert not [m for m in console if "Content Security Policy" in m or "Refused" in m]


def test_the_table_page_runs_with_no_csp_violation(open_player):
    table = holdem_table(name="Strict")
    alice = player("alice-csp")
    page = open_player(alice, PASSWORD)
    console = watched(page)
    page.goto(f"/tables/{table.id}/")
    # The WebSocket (connect-src ws://host) is open, the seats are placed (CSSOM styles).
    expect(page.locator("#conn")).to_have_text("Connected")
    sit(page, 2, "100")
    page.wait_for_timeout(300)  # late reports (the socket's frames) are in
    assert_no_csp_violation(page, console)

    # The policy is enforced: an injected inline script does not run and is reported.
    page.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = 'window.__ran = 1'; document.body.append(s); }"
    )
    page.wait_for_function("() => window.__csp.length > 0")
    assert page.evaluate("() => window.__ran") is None
    assert violations(page) == ["script-src-elem blocked inline"]


def test_the_player_pages_run_with_no_csp_violation(open_player):
    holdem_table(name="Lobby table")
    bea = player("bea-csp")
    page = open_player(bea, PASSWORD)
    console = watched(page)
    page.goto("/")
    expect(page.locator("#lobby-status")).to_contain_text("Updated")
    for path in ("/cashier/", "/hands/", "/accounts/profile/"):
        page.goto(path)
        expect(page.locator("main")).to_be_visible()
        page.wait_for_load_state("networkidle")
        assert_no_csp_violation(page, console)


def test_the_auditor_pages_and_the_browsable_api_run_with_no_csp_violation(open_player):
    auditor, _password, _token = auditor_create(username="cara-csp", password=PASSWORD)
    page = open_player(auditor, PASSWORD)
    console = watched(page)
    page.goto("/accounts/tokens/")
    page.click("main form button[type=submit]")
    expect(page.locator("#new-token")).to_be_visible()
    assert_no_csp_violation(page, console)
    # DRF's HTML page of the API: its style attributes and Pygments block are allowed.
    page.goto("/api/ledger/")
    expect(page.locator(".response-info")).to_contain_text("count")
    page.wait_for_load_state("networkidle")
    assert_no_csp_violation(page, console)


def test_the_api_docs_page_runs_with_no_csp_violation(open_player):
    # The docs are for staff and auditors (issue 46, finding 13).
    auditor, _password, _token = auditor_create(username="dora-csp", password=PASSWORD)
    page = open_player(auditor, PASSWORD)
    console = watched(page)
    page.goto("/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Poker room API")
    expect(page.locator(".opblock-summary-path").first).to_be_visible()
    page.locator(".opblock-summary-path", has_text="/api/ledger/").first.click()
    expect(page.locator(".opblock-body").first).to_be_visible()
    page.wait_for_timeout(300)
    assert_no_csp_violation(page, console)


def test_django_admin_runs_with_no_csp_violation(browser, room):
    admin = UserFactory(username="csp-admin", is_staff=True, is_superuser=True)
    other = UserFactory(username="csp-player")
    context = browser.new_context(viewport=VIEWPORT, base_url=room)
    try:
        page = context.new_page()
        console = watched(page)
        page.goto("/admin/login/")
        page.fill("#id_username", admin.username)
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        expect(page.locator("#site-name")).to_be_visible()
        page.goto(f"/admin/accounts/user/{other.id}/change/")
        expect(page.locator("#id_username")).to_have_value("csp-player")
        page.goto("/admin/accounts/user/?q=csp")
        expect(page.locator("#result_list")).to_contain_text("csp-player")
        page.wait_for_timeout(300)
        assert_no_csp_violation(page, console)
    finally:
        context.close()
