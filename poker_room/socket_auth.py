"""Who a WebSocket belongs to: the room's session cookie, read once, after the handshake.

Channels' `AuthMiddlewareStack` wraps every socket's `send` in its `SessionMiddleware`'s
`InstanceSessionWrapper`, which saves a changed session, but only on an HTTP response
(`save_message_types`), never on a WebSocket frame: for a socket the wrapper only asks
the lazy session whether it changed, for every frame sent (about 3 % of a web process's
CPU at 50 tables, py-spy). A socket reads its session and never writes it, so
`socket_auth` loads the session store as channels does and passes `send` on untouched.

Nor does it look the user up before the socket is accepted, as channels' `AuthMiddleware`
does: that query waits its turn on the process's database thread, behind every table
command queued there, and under load the wait outlasted daphne's handshake timeout (5 s).
Each handshake cut came back as another, with another query queued for nobody: at 500
tables about 13,000 in a 90 s run (issue #15). The consumer accepts first and then asks
`socket_user`, which finds the user in the session as `AuthMiddleware` does (a session
that fails its hash check is flushed by channels' `get_user`, which deletes it from the
store itself).
"""

from importlib import import_module
from typing import Any

from channels.auth import get_user
from channels.sessions import CookieMiddleware
from django.conf import settings

from accounts.models import User

ASGIApp = Any


class SocketSessionMiddleware:
    """`scope["session"]`: the session of the cookie (an empty one without it), lazy: the
    store is read when first asked (by `socket_user`)."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if "cookies" not in scope:
            raise ValueError("SocketSessionMiddleware must run inside CookieMiddleware.")
        store = import_module(settings.SESSION_ENGINE).SessionStore
        session = store(scope["cookies"].get(settings.SESSION_COOKIE_NAME))
        return await self.inner({**scope, "session": session}, receive, send)


def socket_auth(inner: ASGIApp) -> ASGIApp:
    """`scope["session"]` from the session cookie; the user is `socket_user`'s to find."""
    return CookieMiddleware(SocketSessionMiddleware(inner))


async def socket_user(scope: dict[str, Any]) -> User | None:
    """The socket's player, or None for a spectator (no session, an unknown or ended one,
    or one whose password changed since it logged in). A `user` already in the scope (a
    test's, or an outer `AuthMiddleware`'s) is taken as it is; a scope with neither a
    user nor a session (a consumer a test runs bare) is a spectator's."""
    user = scope.get("user")
    if user is None:
        if "session" not in scope:
            return None
        user = scope["user"] = await get_user(scope)
    return user if user.is_authenticated else None


def socket_may_have_user(scope: dict[str, Any]) -> bool:
    """Whether `socket_user` may find a player for this socket, asked without the
    database: a user already in the scope is taken as it is; else only a session cookie
    can name one (whether it does is known once the session is read). False: a spectator
    for sure."""
    user = scope.get("user")
    if user is not None:
        return bool(user.is_authenticated)
    session = scope.get("session")
    return session is not None and session.session_key is not None
