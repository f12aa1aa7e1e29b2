"""A table socket acts for its player only while their session lives and their account
may play.

A socket reads its session once, when it connects (poker_room/socket_auth.py). Left at
that, it went on acting for its player after they logged out (in this tab or another:
a browser has one session for all its tabs), logged out everywhere (a password change
ends every other session), were banned (deactivated) or made staff or an auditor:
`sit` with a buy-in, `chat`, `leave` and `act` were carried out (issue #46, finding 5).

Each web process (each event loop: daphne's one, a test's own) keeps a `SessionWatch`
of its signed-in table sockets, each with its `SocketSession`. A socket whose session
has ended is closed with `CLOSE_SIGNED_OUT` (4401; the page says the player is signed
out, docs/protocol.md); a socket whose account may no longer play (staff, an auditor)
stays open, showing the table, and its commands that play are refused `cannot_play`
(`snapshot`, and `leave` and `sit_out`, which only take a player out of play, are not:
tables/commands.py `withdraws`). The watch learns of it

* at once, from the notices the accounts publish when a user's sessions may have
  changed (accounts/signals.py, `socket_sessions_notice`: a log-out names the session it
  ends, which ends that session's sockets unchecked; a change of the user's row or
  roles asks for a check of the user's sockets), read on the process's table-feed
  connection (tables/feed.py `listen`);
* and every `CHECK_SECONDS` in any case, since a notice travels at most once (Redis
  pub/sub: one published while Redis is away is lost): one check, on the database
  thread, of every socket of the process at once (two indexed queries whatever their
  number), and one as soon as the feed's connection was replaced (notices may have been
  lost meanwhile).

Before each command the socket asks `confirm`: attributes read, no query. Should the
last check of its session be older than `STALE_SECONDS` (the watch's check kept off the
database thread, or failing), it is checked on the way. So a command is carried out
for a player only while their session was seen alive and their account allowed to play
within `STALE_SECONDS`; normally within `CHECK_SECONDS`, or at once.

A player signed out with a seat keeps it: their socket's close is a drop like any other
(tables/consumers.py), and the table's rules take over (RULES §5: their turns time
out, and two in a row sit them out). Their chips stay on their seat, in the table's
ledger account, until they come back and leave; an account that may no longer play
(banned, made staff) gives its seat up when its hand ends or at the next deal, the
stack back to its wallet (tables/services/hands.py).

Cost: one hop to the database thread per process every `CHECK_SECONDS` (ahead of the
decisions, or it could wait for ever behind a busy room's); nothing per command; a
notice costs each process one check of that user's sockets (none if it has none).
"""

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import Iterable
from typing import Any

import msgpack

from poker_room.channel_layer import raise_if_cancelling
from poker_room.pubsub import room_channel
from poker_room.socket_auth import (
    NOTICES,
    SocketSession,
    socket_sessions_check,
)
from tables.capacity import on_database_thread
from tables.commands import CommandError
from tables.feed import Inbox, table_feed
from tables.hop_order import Urgency

logger = logging.getLogger(__name__)

# The close code of a socket whose session ended: sign in again (docs/protocol.md).
CLOSE_SIGNED_OUT = 4401
# Seconds between the checks of every socket of a process (the most a lost notice
# delays an end), and the age past which a command checks its socket's session itself.
CHECK_SECONDS = 3.0
STALE_SECONDS = 10.0

# What the watch puts in the inbox of a socket whose session ended (its consumer closes it).
SESSION_ENDED: dict[str, Any] = {"type": "session.ended"}

# The refusals of a command from such a socket (a player reads them).
SIGNED_OUT_TEXT = (
    "You are signed out (you logged out, your password changed, or your account was "
    "closed): sign in again to play."
)
CANNOT_PLAY_TEXT = "Auditors and staff accounts do not play."


class SessionWatch:
    """The signed-in table sockets of one event loop, and what keeps them current."""

    def __init__(self) -> None:
        # Weakly: a consumer that ends takes its inbox, and its entry, with it.
        self._sockets: weakref.WeakKeyDictionary[Inbox, SocketSession] = weakref.WeakKeyDictionary()
        self._task: asyncio.Task[None] | None = None
        # Set once the notices are heard (tables/feed.py `listen`).
        self.listening = asyncio.Event()
        # Users whose sockets a notice asked to check; every socket's, after a loss.
        self._due: set[int] = set()
        self._due_all = False
        self._wake = asyncio.Event()
        self._failing = False  # the last check failed (warned once, not at every try)

    def add(self, scope: dict[str, Any], inbox: Inbox) -> None:
        """Watch a connected socket (its `scope["socket_session"]`; none: a spectator)."""
        session = scope.get("socket_session")
        if session is None:
            return
        self._sockets[inbox] = session
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._watch_forever())

    async def confirm(self, scope: dict[str, Any], *, playing: bool) -> None:
        """Before a command of the socket (`playing`: one only a player may send): refused
        (`CommandError`) once its session has ended, or its account may not play; checked
        on the way when the last check is older than `STALE_SECONDS`."""
        session: SocketSession | None = scope.get("socket_session")
        if session is None:
            return
        if not session.ended and time.monotonic() - session.checked_at > STALE_SECONDS:
            await on_database_thread(socket_sessions_check, [session], urgency=Urgency.CLOCK)
            self._tell()
        if session.ended:
            raise CommandError("signed_out", SIGNED_OUT_TEXT)
        if playing and not session.may_play:
            raise CommandError("cannot_play", CANNOT_PLAY_TEXT)

    def notice(self, payload: bytes | None) -> None:
        """A notice of the accounts (poker_room/socket_auth.py `socket_sessions_notice`),
        or None when some may have been lost (the feed's connection was replaced)."""
        if payload is None:
            self._check_soon(None)
            return
        try:
            body = msgpack.unpackb(payload, raw=False)
            user, digest = body["user"], body["session"]
        except Exception as exc:  # not ours: the periodic check goes on regardless
            logger.error("socket sessions: dropped a notice that is not one (%r)", exc)
            return
        if digest is not None:
            for session in self._sockets.values():
                if session.session_digest == digest:
                    session.ended = True
            self._tell()
        else:
            self._check_soon(user)

    def _check_soon(self, user: int | None) -> None:
        if user is None:
            self._due_all = True
        else:
            self._due.add(user)
        self._wake.set()

    async def _watch_forever(self) -> None:
        loop = asyncio.get_running_loop()
        next_check = loop.time() + CHECK_SECONDS
        while True:
            # redis-py can turn a cancel into its own error, which the handlers below
            # would swallow: the loop's shutdown then waited for this task for ever.
            raise_if_cancelling()
            await self._listen()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(next_check):
                    await self._wake.wait()
            self._wake.clear()
            users: set[int] | None
            users, self._due = self._due, set()
            if self._due_all or loop.time() >= next_check:
                self._due_all = False
                next_check = loop.time() + CHECK_SECONDS
                users = None
            sockets = list(self._sockets.values())
            try:
                await self._check(s for s in sockets if users is None or s.user_id in users)
            except Exception:  # a bug: the watch must go on (commands check on their way)
                raise_if_cancelling()
                logger.exception("socket sessions: the check went wrong")

    async def _listen(self) -> None:
        if self.listening.is_set():
            return
        try:
            await table_feed().listen(room_channel(NOTICES), self.notice)
        except Exception as exc:  # Redis away: the checks go on, and the next tries again
            raise_if_cancelling()
            logger.info("socket sessions: notices not heard yet (%r)", exc)
            return
        self.listening.set()

    async def _check(self, sessions: Iterable[SocketSession]) -> None:
        chosen = [session for session in sessions if not session.ended]
        if not chosen:
            return
        try:
            await on_database_thread(socket_sessions_check, chosen, urgency=Urgency.CLOCK)
        except Exception as exc:  # the database away: a command checks on its way
            raise_if_cancelling()
            if not self._failing:
                logger.warning("socket sessions: the check failed (%r); trying again", exc)
            self._failing = True
            return
        if self._failing:
            logger.info("socket sessions: checked again")
            self._failing = False
        self._tell()

    def _tell(self) -> None:
        """Close the sockets whose session ended (their consumers do, when they read the
        message), and forget them; one whose inbox is full is told at the next check
        (its commands are refused meanwhile)."""
        for inbox, session in list(self._sockets.items()):
            if session.ended:
                try:
                    inbox.put_nowait(SESSION_ENDED)
                except asyncio.QueueFull:
                    continue
                del self._sockets[inbox]


_watches: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, SessionWatch]" = (
    weakref.WeakKeyDictionary()
)


def session_watch() -> SessionWatch:
    """The watch of the running event loop (daphne has one; a test may run several)."""
    loop = asyncio.get_running_loop()
    watch = _watches.get(loop)
    if watch is None:
        watch = _watches[loop] = SessionWatch()
    return watch
