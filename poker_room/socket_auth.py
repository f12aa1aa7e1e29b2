"""Who a WebSocket belongs to: the room's session cookie, read once at the handshake.

Channels' `AuthMiddlewareStack` wraps every socket's `send` in its `SessionMiddleware`'s
`InstanceSessionWrapper`, which saves a changed session, but only on an HTTP response
(`save_message_types`), never on a WebSocket frame: for a socket the wrapper only asks
the lazy session whether it changed, for every frame sent (about 3 % of a web process's
CPU at 50 tables, py-spy). A socket reads its session (AuthMiddleware finds the user in
it) and never writes it, so `socket_auth` loads the session store as channels does and
passes `send` on untouched. (A session that fails its hash check is flushed by
AuthMiddleware's `get_user`, which deletes it from the store itself.)
"""

from importlib import import_module
from typing import Any

from channels.auth import AuthMiddleware
from channels.sessions import CookieMiddleware
from django.conf import settings

ASGIApp = Any


class SocketSessionMiddleware:
    """`scope["session"]`: the session of the cookie (an empty one without it)."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if "cookies" not in scope:
            raise ValueError("SocketSessionMiddleware must run inside CookieMiddleware.")
        store = import_module(settings.SESSION_ENGINE).SessionStore
        session = store(scope["cookies"].get(settings.SESSION_COOKIE_NAME))
        return await self.inner({**scope, "session": session}, receive, send)


def socket_auth(inner: ASGIApp) -> ASGIApp:
    """`scope["user"]` from the session cookie, as channels' AuthMiddlewareStack."""
    return CookieMiddleware(SocketSessionMiddleware(AuthMiddleware(inner)))
