"""The bots' HTTP side, as a browser does it: log in with the form, then use the cashier API.

Log-in: GET the login page (Django sets the `csrftoken` cookie), POST the form with the
token; success sets the `sessionid` cookie, which then authenticates the API calls and
the table WebSockets. API POSTs carry the CSRF token in `X-CSRFToken`, as the room's own
pages do. Calls block (urllib); the async bots run them in a worker thread. The load
test skips the form (a password hash per player would cost more than the play):
`use_session` puts a session the set-up made (tables.bots.setup) in the cookie jar, with
a CSRF secret of our own, which Django accepts as any browser's first cookie.

Deposits go through the sandbox cashier (`POST /api/cashier/deposits/`) with an
`Idempotency-Key`: a retry after a network failure reuses the key, so a deposit is never
made twice.

A room that restarts refuses connections for a few seconds (or answers 502/503 behind a
proxy, or 503 when busy): once the room has answered this session, every call is retried
with backoff for up to `RETRY_SECONDS`, as safe for the reads as for the keyed deposit.
A room that never answered fails at once (a wrong URL is not a restart).
"""

import json
import random
import secrets
import string
import time
import uuid
from http.cookiejar import Cookie, CookieJar
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode, urlsplit
from urllib.request import HTTPCookieProcessor, Request, build_opener

HTTP_TIMEOUT = 30
# Backoff between attempts (seconds, with +-20 % jitter) and how long to keep trying.
BACKOFF_SECONDS = (0.5, 1, 2, 4, 8)
RETRY_SECONDS = 60.0
RETRY_STATUSES = frozenset({502, 503, 504})


class WebError(Exception):
    """An HTTP call that failed; `code` is the API's error code when it sent one."""

    def __init__(self, message: str, *, code: str = "http_error") -> None:
        super().__init__(message)
        self.code = code


def base_urls(url: str) -> tuple[str, str]:
    """The HTTP and WebSocket base URLs of a room given either (`http://h:p`, `ws://h:p`)."""
    parts = urlsplit(url.rstrip("/"))
    secure = parts.scheme in ("https", "wss")
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.netloc:
        raise ValueError(f"Not a room URL: {url!r} (use ws://host:port or http://host:port).")
    http = f"{'https' if secure else 'http'}://{parts.netloc}"
    ws = f"{'wss' if secure else 'ws'}://{parts.netloc}"
    return http, ws


class RoomSession:
    """One player's browser-like session with the room: cookies, log-in, cashier."""

    def __init__(self, http_base: str) -> None:
        self.base = http_base
        self.cookies = CookieJar()
        self.opener = build_opener(HTTPCookieProcessor(self.cookies))
        self.reached = False  # the room answered once: a failure now is a restart

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.cookies if c.name == name), None)

    def use_session(self, session_key: str) -> None:
        """Be logged in with this session (made by the set-up), as the form would have."""
        csrf = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))
        host = urlsplit(self.base).hostname or ""
        for name, value in (("sessionid", session_key), ("csrftoken", csrf)):
            self.cookies.set_cookie(_cookie(host=host, name=name, value=value))

    def cookie_header(self) -> str:
        """The `Cookie` header a browser would send to the room (for the WebSocket)."""
        return "; ".join(f"{c.name}={c.value}" for c in self.cookies)

    def _request(self, path: str, **kwargs: Any) -> Request:
        # `base` is http(s) only (see `base_urls`): no file: or custom scheme gets here.
        return Request(f"{self.base}{path}", **kwargs)  # noqa: S310

    def _open_once(self, request: Request) -> tuple[int, bytes]:
        try:
            with self.opener.open(request, timeout=HTTP_TIMEOUT) as response:
                status, body = response.status, response.read()
        except HTTPError as exc:
            status, body = exc.code, exc.read()
        self.reached = True
        return status, body

    def _open(self, request: Request) -> tuple[int, bytes]:
        """Open the request, retrying with backoff while the room is away or busy."""
        deadline = time.monotonic() + RETRY_SECONDS
        attempt = 0
        while True:
            try:
                status, body = self._open_once(request)
                if status not in RETRY_STATUSES:
                    return status, body
                failure: Exception | None = None
            except (URLError, TimeoutError, ConnectionError) as exc:
                if not self.reached:
                    raise
                status, body, failure = 0, b"", exc
            delay = backoff_delay(attempt)
            if time.monotonic() + delay > deadline:
                if failure is not None:
                    raise failure
                return status, body
            attempt += 1
            time.sleep(delay)

    def login(self, *, username: str, password: str) -> None:
        """Log in through the form; raise `WebError` when the room refuses."""
        status, _ = self._open(self._request("/accounts/login/"))
        token = self.cookie("csrftoken")
        if status != 200 or token is None:
            raise WebError(f"GET /accounts/login/ answered {status} without a CSRF cookie.")
        form = urlencode(
            {"username": username, "password": password, "csrfmiddlewaretoken": token}
        ).encode()
        request = self._request(
            "/accounts/login/",
            data=form,
            headers={"Referer": f"{self.base}/accounts/login/", "Origin": self.base},
        )
        status, _ = self._open(request)
        if self.cookie("sessionid") is None:
            raise WebError(f"{username} could not log in (status {status}).", code="login_failed")

    def _api(self, method: str, path: str, body: Any = None, **headers: str) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = self._request(path, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
            request.add_header("X-CSRFToken", self.cookie("csrftoken") or "")
            request.add_header("Referer", f"{self.base}/")
        for name, value in headers.items():
            request.add_header(name.replace("_", "-"), value)
        status, raw = self._open(request)
        try:
            payload = json.loads(raw or b"null")
        except ValueError:
            payload = None
        if status >= 400:
            detail = payload if isinstance(payload, dict) else {}
            raise WebError(
                f"{method} {path}: {status} {detail.get('detail', raw[:200])!r}",
                code=str(detail.get("code", f"http_{status}")),
            )
        return payload

    def wallet_balance(self) -> int:
        """The player's wallet balance in cents (`GET /api/wallet/`)."""
        return int(self._api("GET", "/api/wallet/")["balance"])

    def deposit(self, *, amount: int) -> None:
        """Deposit `amount` cents through the sandbox cashier, once whatever the retries
        (`_open` retries a failed attempt: it may or may not have happened, and the same
        key makes it once)."""
        key = f"bots-{uuid.uuid4()}"
        self._api("POST", "/api/cashier/deposits/", {"amount": amount}, Idempotency_Key=key)

    def fund(self, *, low: int, target: int) -> tuple[int, int]:
        """Top the wallet up to `target` when it holds less than `low`.

        Returns the balance afterwards and the amount deposited.
        """
        balance = self.wallet_balance()
        if balance >= low:
            return balance, 0
        self.deposit(amount=target - balance)
        return self.wallet_balance(), target - balance


def _cookie(*, host: str, name: str, value: str) -> Cookie:
    """A session cookie for `host`, as the room's Set-Cookie would have made it."""
    return Cookie(
        version=0,
        name=name,
        value=value,
        port=None,
        port_specified=False,
        domain=host,
        domain_specified=False,
        domain_initial_dot=False,
        path="/",
        path_specified=True,
        secure=False,
        expires=None,
        discard=True,
        comment=None,
        comment_url=None,
        rest={},
    )


def backoff_delay(attempt: int) -> float:
    """Seconds before retry number `attempt` (from 0), with jitter, as the browser does."""
    base = BACKOFF_SECONDS[min(attempt, len(BACKOFF_SECONDS) - 1)]
    return base * random.uniform(0.8, 1.2)  # noqa: S311 - spreading retries, not secrets
