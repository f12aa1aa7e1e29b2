"""Content-Security-Policy (finding 13): every page sends a strict policy and holds nothing
that policy would block: no inline script, no `on*=` handler, no `javascript:` URL, no
inline style. A `json_script` data block (`type="application/json"`) is data, not script.
"""

import base64
import hashlib
import re
from html.parser import HTMLParser

import pytest
from django.test import Client

from accounts.services import auditor_create
from cashier.services import deposit_create
from tests.kit import PASSWORD, TableFactory, UserFactory

pytestmark = pytest.mark.django_db

DATA_SCRIPT_TYPES = {"application/json", "application/ld+json"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "xlink:href"}


class InlineCodeFinder(HTMLParser):
    """Collects what a page carries inline that `script-src`/`style-src 'self'` block."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self._open_script: dict[str, str | None] | None = None
        self._script_text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...> (inline handler)")
            elif name == "style":
                self.problems.append(f"<{tag} style={value!r}> (inline style)")
            elif name in URL_ATTRIBUTES and (value or "").strip().lower().startswith("javascript:"):
                self.problems.append(f"<{tag} {name}={value!r}> (javascript: URL)")
        if tag == "style":
            self.problems.append("<style> block (inline style)")
        if tag == "script":
            self._open_script, self._script_text = found, ""

    def handle_data(self, data: str) -> None:
        if self._open_script is not None:
            self._script_text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._open_script is not None:
            attrs, self._open_script = self._open_script, None
            if attrs.get("src"):
                return
            if (attrs.get("type") or "").lower() in DATA_SCRIPT_TYPES:
                return
            self.problems.append(f"inline <script>: {self._script_text.strip()[:80]!r}")


def inline_code(html: str) -> list[str]:
    finder = InlineCodeFinder()
    finder.feed(html)
    finder.close()
    return finder.problems


def policy_of(response) -> dict[str, list[str]]:
    header = response.headers.get("Content-Security-Policy")
    assert header, f"{response.request['PATH_INFO']} sends no Content-Security-Policy"
    directives = {}
    for part in header.split(";"):
        name, *sources = part.split()
        directives[name] = sources
    return directives


def assert_strict(response) -> None:
    policy = policy_of(response)
    assert policy["default-src"] == ["'self'"]
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["form-action"] == ["'self'"]
    assert set(policy["img-src"]) == {"'self'", "data:"}
    # The table's WebSocket: only this host, by both schemes, never any host.
    assert policy["connect-src"] == ["'self'", "ws://testserver", "wss://testserver"]
    assert not any("unsafe" in source for sources in policy.values() for source in sources)


def test_the_inline_code_finder_sees_what_csp_would_block():
    """The page check below must be able to fail."""
    page = """<html><body><script>alert(1)</script><a href="javascript:go()">x</a>
    <button onclick="go()">y</button><p style="color:red">z</p><style>p{}</style>
    <script src="/static/ok.js"></script><script type="application/json">{}</script>"""
    assert len(inline_code(page)) == 5


@pytest.fixture
def player_client() -> Client:
    player = UserFactory()
    deposit_create(user=player, amount=10_000, idempotency_key="csp")
    client = Client()
    assert client.login(username=player.username, password=PASSWORD)
    return client


@pytest.fixture
def staff_client() -> Client:
    admin = UserFactory(is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(admin)
    return client


@pytest.fixture
def auditor_client() -> Client:
    auditor, _password, _token = auditor_create(username="csp-auditor")
    client = Client()
    client.force_login(auditor)
    return client


ANONYMOUS_PAGES = [
    "/",
    "/accounts/login/",
    "/accounts/signup/",
    "/accounts/password_reset/",
    "/admin/login/",
    "/no-such-page/",
]
PLAYER_PAGES = ["/", "/cashier/", "/accounts/profile/", "/hands/", "/accounts/password_change/"]


@pytest.mark.parametrize("path", ANONYMOUS_PAGES)
def test_every_public_page_has_a_strict_csp_and_no_inline_code(client, path):
    response = client.get(path)
    assert response.status_code in {200, 404}, path
    assert_strict(response)
    assert inline_code(response.content.decode()) == []


@pytest.mark.parametrize("path", PLAYER_PAGES)
def test_every_player_page_has_a_strict_csp_and_no_inline_code(player_client, path):
    response = player_client.get(path)
    assert response.status_code == 200, path
    assert_strict(response)
    assert inline_code(response.content.decode()) == []


def test_the_table_page_has_a_strict_csp_and_no_inline_code(player_client):
    table = TableFactory()
    response = player_client.get(f"/tables/{table.id}/")
    assert response.status_code == 200
    assert_strict(response)
    html = response.content.decode()
    assert inline_code(html) == []
    assert 'id="table-config" type="application/json"' in html  # data, allowed


def test_the_auditor_token_page_has_a_strict_csp_and_no_inline_code(auditor_client):
    response = auditor_client.post("/accounts/tokens/")
    assert response.status_code == 200
    assert_strict(response)
    assert inline_code(response.content.decode()) == []


@pytest.mark.parametrize(
    "path", ["/admin/", "/admin/accounts/user/", "/admin/accounts/user/add/", "/admin/cashier/"]
)
def test_django_admin_keeps_the_strict_csp_and_has_no_inline_code(staff_client, path):
    response = staff_client.get(path)
    assert response.status_code == 200, path
    assert_strict(response)
    assert inline_code(response.content.decode()) == []


def test_an_admin_change_form_keeps_the_strict_csp_and_has_no_inline_code(staff_client):
    player = UserFactory()
    response = staff_client.get(f"/admin/accounts/user/{player.id}/change/")
    assert response.status_code == 200
    assert_strict(response)
    assert inline_code(response.content.decode()) == []


def test_the_api_docs_init_script_is_a_file_of_its_own(auditor_client):
    response = auditor_client.get("/api/docs/")  # for staff and auditors only
    assert_strict(response)
    page = response.content.decode()
    assert inline_code(page) == []
    assert 'src="/api/docs/?script="' in page
    script = auditor_client.get("/api/docs/?script=")
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert b"SwaggerUIBundle" in script.content


def test_the_browsable_api_relaxes_style_attributes_only(auditor_client):
    """DRF's HTML pages of the API use style attributes; they get those and nothing more."""
    response = auditor_client.get("/api/ledger/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    policy = policy_of(response)
    if response["Content-Type"].startswith("text/html"):
        assert policy["style-src-attr"] == ["'unsafe-inline'"]
        html = response.content.decode()
        problems = inline_code(html)
        assert problems and all(p.endswith("(inline style)") for p in problems)
        # A <style> block (Pygments' CSS, when installed) is allowed by its hash alone.
        blocks = re.findall(r"<style>(.*?)</style>", html, re.DOTALL)
        hashes = [
            "'sha256-" + base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() + "'"
            for b in blocks
        ]
        assert policy.get("style-src-elem", ["'self'"]) == ["'self'", *hashes]
    else:  # the API answers JSON only: no relaxation at all
        assert "style-src-attr" not in policy
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    json = auditor_client.get("/api/ledger/", HTTP_ACCEPT="application/json")
    assert "style-src-attr" not in policy_of(json)
