"""Who a WebSocket belongs to: the room's session cookie, read after the handshake, and
whether it still does.

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

Whether it still does (issue #46): a signed-in socket gets a `SocketSession`, what it
acts for (the user, the session, the password hash the session was verified against,
whether the account may play), and tables/session_watch.py keeps it current with
`socket_sessions_check`, a check of many sockets at once in two queries. A session has
ended when its row is gone or expired (a log-out flushes it; a log-in elsewhere never
reuses its key), when the user is gone or inactive (a ban: Django's backend then finds
no user), or when the user's password hash is no longer the one it was verified
against: the session's auth hash is an HMAC of it, so a password changed anywhere ends
every other session ("log out everywhere"; the tab that changed it gets a new session
key). Whether the account may play is `accounts.selectors.user_can_play`'s rule.

The accounts publish a notice when a user's sessions may have changed
(`socket_sessions_notice`, from accounts/signals.py), so that every web process checks
them at once rather than at its next periodic check.
"""

import hashlib
import logging
import time
from collections.abc import Collection
from dataclasses import dataclass
from importlib import import_module
from types import SimpleNamespace
from typing import Any

import msgpack
from channels.auth import get_user
from channels.db import database_sync_to_async
from channels.sessions import CookieMiddleware
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from accounts.models import AUDITOR_GROUP, User
from accounts.selectors import user_can_play, user_flags_allow_play
from poker_room.pubsub import publisher, room_channel

logger = logging.getLogger(__name__)

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


@dataclass(eq=False)
class SocketSession:
    """What a signed-in socket acts for, as last checked (`socket_sessions_check`)."""

    user_id: int
    # The session's key (None: a user a test put in the scope, without a session) and
    # its digest, the form a notice names it in (`socket_sessions_notice`).
    session_key: str | None
    session_digest: str | None
    # The user's password hash when the session was verified: another ends the session.
    password: str
    may_play: bool
    checked_at: float  # time.monotonic()
    ended: bool = False


async def socket_user(scope: dict[str, Any]) -> User | None:
    """The socket's player, or None for a spectator (no session, an unknown or ended one,
    or one whose password changed since it logged in). A `user` already in the scope (a
    test's, or an outer `AuthMiddleware`'s) is taken as it is; a scope with neither a
    user nor a session (a consumer a test runs bare) is a spectator's. A player's socket
    gets its `scope["socket_session"]`, read in the same hop to the database thread."""
    user = scope.get("user")
    if user is None:
        if "session" not in scope:
            return None
        user = await database_sync_to_async(_session_user)(scope)
    elif user.is_authenticated and "socket_session" not in scope:
        scope["socket_session"] = await database_sync_to_async(_socket_session)(user, None)
    return user if user.is_authenticated else None


def _session_user(scope: dict[str, Any]) -> Any:
    # channels' `get_user`, in this thread (it flushes a session that fails its check).
    user = scope["user"] = get_user.func(scope)
    if user.is_authenticated:
        scope["socket_session"] = _socket_session(user, scope["session"].session_key)
    return user


def _socket_session(user: User, session_key: str | None) -> SocketSession:
    return SocketSession(
        user_id=user.pk,
        session_key=session_key,
        session_digest=None if session_key is None else session_digest(session_key),
        password=user.password,
        may_play=user_can_play(user=user),
        checked_at=time.monotonic(),
    )


def session_digest(session_key: str) -> str:
    """How a notice names a session: a session key is a secret, never published."""
    return hashlib.sha256(session_key.encode()).hexdigest()


def socket_sessions_check(sessions: Collection[SocketSession]) -> list[SocketSession]:
    """Bring the sessions up to date from the database, in two queries whatever their
    number; returns those found ended now (`ended` set). The others get `may_play` as
    the account stands. Runs on the database thread; the sessions are the database's
    (the `db` or `cached_db` engine, as the room is set up)."""
    sessions = [session for session in sessions if not session.ended]
    if not sessions:
        return []
    keys = {session.session_key for session in sessions if session.session_key is not None}
    alive: set[str] = set()
    if keys:
        model = import_module(settings.SESSION_ENGINE).SessionStore.get_model_class()
        live = model.objects.filter(session_key__in=keys, expire_date__gt=timezone.now())
        alive = set(live.values_list("session_key", flat=True))
    auditor = User.groups.through.objects.filter(user_id=OuterRef("pk"), group__name=AUDITOR_GROUP)
    rows = User.objects.filter(pk__in={session.user_id for session in sessions}).values_list(
        "pk", "password", "is_active", "is_staff", "is_superuser", Exists(auditor)
    )
    users = {row[0]: row[1:] for row in rows}
    now = time.monotonic()
    ended = []
    for session in sessions:
        row = users.get(session.user_id)
        if (
            row is None
            or not row[1]  # inactive: Django's backend no longer finds the user
            or row[0] != session.password
            or (session.session_key is not None and session.session_key not in alive)
        ):
            session.ended = True
            ended.append(session)
            continue
        _password, is_active, is_staff, is_superuser, is_auditor = row
        flags = SimpleNamespace(
            is_authenticated=True,
            is_active=is_active,
            is_staff=is_staff,
            is_superuser=is_superuser,
        )
        # `user_can_play`'s rule, on the row's columns (no model instance per socket).
        session.may_play = user_flags_allow_play(user=flags) and not is_auditor  # type: ignore[arg-type]
        session.checked_at = now
    return ended


# The room's pub/sub channel of the notices (poker_room/pubsub.py).
NOTICES = "sessions"


def socket_sessions_notice(*, user_id: int | None, session_key: str | None = None) -> None:
    """Tell every web process, once the current transaction commits, that this user's
    sessions may have changed (their sockets are checked at once; `user_id` None: every
    socket), or that the session `session_key` has ended (its sockets end at once,
    unchecked: a log-out names its session before flushing it). At most once: a notice
    lost (Redis away) is made up for by the periodic check (tables/session_watch.py)."""
    body = {
        "user": user_id,
        "session": None if session_key is None else session_digest(session_key),
    }
    payload = msgpack.packb(body, use_bin_type=True)

    def publish() -> None:
        try:
            publisher().publish(room_channel(NOTICES), payload)
        except Exception as exc:  # never the account change's failure
            logger.warning(
                "socket sessions: the notice for user %s was not sent (%r); their sockets "
                "are checked within seconds all the same",
                user_id,
                exc,
            )

    transaction.on_commit(publish)


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
