"""The WebSocket Origin check compares scheme, host and port (issue #12, finding 13 part).

`AllowedHostsOriginValidator` let `https://localhost:9999` and any port of an allowed host
through; the handshake must now come from the site's own origin (the Host it was sent to,
`http` for `ws` and `https` for `wss` or a TLS proxy) or from CSRF_TRUSTED_ORIGINS.
Through the whole ASGI application, with the handshake's real headers.
"""

import pytest
from channels.testing import WebsocketCommunicator

from poker_room.asgi import application
from tests.kit import TableFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def table(settings):
    settings.ALLOWED_HOSTS = ["localhost", "127.0.0.1", ".example.net"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://poker.example.com", "https://*.tables.example.org"]
    settings.SECURE_PROXY_SSL_HEADER = None
    return TableFactory()


async def handshake(table, headers: dict[str, str], scheme: str | None = None) -> bool:
    ws = WebsocketCommunicator(
        application,
        f"/ws/tables/{table.id}/",
        headers=[(k.encode(), v.encode()) for k, v in headers.items()],
    )
    if scheme is not None:
        ws.scope["scheme"] = scheme
    connected, _ = await ws.connect(timeout=5)
    if connected:
        assert (await ws.receive_json_from(timeout=5))["type"] == "snapshot"
        await ws.disconnect()
    return connected


@pytest.mark.parametrize(
    ("origin", "host", "scheme"),
    [
        ("http://localhost", "localhost", None),
        ("http://localhost:8000", "localhost:8000", None),
        ("http://localhost:80", "localhost", None),  # the default port, spelled out
        ("https://localhost:8000", "localhost:8000", "wss"),
        ("http://127.0.0.1:8000", "127.0.0.1:8000", "ws"),
        ("http://eu.example.net", "eu.example.net", None),  # ALLOWED_HOSTS wildcard
        ("https://poker.example.com", "localhost:8000", None),  # trusted: proxy rewrote Host
        ("https://eu.tables.example.org", "localhost:8000", None),  # trusted wildcard
    ],
)
async def test_a_handshake_from_the_sites_own_origin_is_accepted(table, origin, host, scheme):
    assert await handshake(table, {"origin": origin, "host": host}, scheme)


@pytest.mark.parametrize(
    ("origin", "host", "scheme"),
    [
        ("http://localhost:9000", "localhost:8000", None),  # another port
        ("http://localhost", "localhost:8000", None),
        ("http://localhost:8000", "localhost", None),
        ("https://localhost:8000", "localhost:8000", None),  # https page, plain ws
        ("http://localhost:8000", "localhost:8000", "wss"),  # http page, wss
        ("http://evil.example", "localhost", None),
        ("http://localhost.evil.example", "localhost", None),
        ("http://evil.example", "evil.example", None),  # Host not in ALLOWED_HOSTS
        ("null", "localhost", None),
        ("file://localhost", "localhost", None),
        ("http://poker.example.com", "localhost", None),  # trusted only over https
        ("https://poker.example.com:8443", "localhost", None),  # ...and on its port
        ("https://tables.example.org.evil.example", "localhost", None),
        ("http://localhost:8000/path", "localhost:8000", None),
        ("http://localhost:99999", "localhost:99999", None),
    ],
)
async def test_a_handshake_from_another_origin_is_refused(table, origin, host, scheme):
    assert not await handshake(table, {"origin": origin, "host": host}, scheme)


async def test_a_handshake_without_origin_or_host_is_refused(table):
    assert not await handshake(table, {"host": "localhost"})
    assert not await handshake(table, {"origin": "http://localhost"})


async def test_behind_a_tls_proxy_the_forwarded_protocol_decides_the_scheme(table, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    https = {"origin": "https://localhost", "host": "localhost"}
    assert await handshake(table, {**https, "x-forwarded-proto": "https"})
    assert not await handshake(table, https)  # no header: plain ws, an https page is foreign
    assert not await handshake(
        table, {"origin": "http://localhost", "host": "localhost", "x-forwarded-proto": "https"}
    )
