"""The WebSocket handshake's Origin check: scheme, host and port, as Django's CSRF check.

Channels' `AllowedHostsOriginValidator` compares the Origin's host with ALLOWED_HOSTS
only, so `https://localhost:9999` or any port of an allowed host passes. A browser sends
the page's origin with every WebSocket handshake, and the cookies of the room with it: a
page served from anywhere else must not open a socket in the player's name.

A handshake is let through when its `Origin` is

* the site's own origin: `http` for `ws` and `https` for `wss` (or for a request the
  proxy marks as TLS with `SECURE_PROXY_SSL_HEADER`), and the `Host` header, whose host
  must be in ALLOWED_HOSTS (default ports made explicit: `http://localhost` is
  `http://localhost:80`); or
* one of CSRF_TRUSTED_ORIGINS (`https://poker.example.com`, `https://*.example.com`),
  the origins the site is published under when a proxy rewrites `Host`.

Anything else (no Origin, `null`, another scheme, host or port) is refused before the
consumer runs: the handshake is rejected (HTTP 403), exactly as channels denies one.
"""

from typing import Any
from urllib.parse import SplitResult, urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host

DEFAULT_PORTS = {"http": 80, "https": 443}


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            try:
                return value.decode("latin1")
            except (AttributeError, UnicodeDecodeError):
                return None
    return None


def _allowed_hosts() -> list[str]:
    """ALLOWED_HOSTS as Django's request.get_host() reads it (DEBUG's local defaults)."""
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return allowed


def _is_secure(scope: dict[str, Any]) -> bool:
    if scope.get("scheme") == "wss":
        return True
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy:
        name, expected = proxy
        header = name.removeprefix("HTTP_").lower().replace("_", "-").encode("latin1")
        value = _header(scope, header)
        # A proxy chain may list several protocols: the first is the client's (as Django).
        return value is not None and value.split(",")[0].strip() == expected
    return False


def _origin_tuple(parts: SplitResult) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a parsed origin, the port made explicit; None if invalid."""
    try:
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host or parts.path or parts.query or parts.username:
        return None
    return scheme, host, port if port is not None else DEFAULT_PORTS[scheme]


def _own_origin(scope: dict[str, Any]) -> tuple[str, str, int] | None:
    """The origin the site answers this request under: scheme + the Host header, if the
    host is one of ALLOWED_HOSTS."""
    host_header = _header(scope, b"host")
    if not host_header:
        return None
    domain, _port = split_domain_port(host_header)
    if not domain or not validate_host(domain, _allowed_hosts()):
        return None
    scheme = "https" if _is_secure(scope) else "http"
    return _origin_tuple(urlsplit(f"{scheme}://{host_header}"))


def _trusted(parsed: tuple[str, str, int]) -> bool:
    """Is the origin one of CSRF_TRUSTED_ORIGINS (wildcard subdomains as Django's)?"""
    scheme, host, port = parsed
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        parts = urlsplit(trusted.lower())
        if "*" in parts.netloc:
            # `https://*.example.com[:port]`: any subdomain, same scheme and port.
            netloc = parts.netloc.replace("*", "", 1)
            pattern_host, pattern_port = split_domain_port(netloc)
            wanted_port = int(pattern_port) if pattern_port else DEFAULT_PORTS.get(parts.scheme)
            if (
                parts.scheme == scheme
                and wanted_port == port
                and is_same_domain(host, pattern_host)
            ):
                return True
        elif _origin_tuple(parts) == parsed:
            return True
    return False


def origin_allowed(scope: dict[str, Any]) -> bool:
    """Does this WebSocket handshake come from a page of the site?"""
    origin = _header(scope, b"origin")
    if not origin:
        return False
    parsed = _origin_tuple(urlsplit(origin))
    if parsed is None:
        return False  # "null", a file:// page, a malformed header
    return parsed == _own_origin(scope) or _trusted(parsed)


class SameOriginValidator:
    """ASGI middleware: refuse a WebSocket handshake from another origin (see above)."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator is for WebSocket connections only")
        if origin_allowed(scope):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
