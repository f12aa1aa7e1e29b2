"""The table WebSocket: `/ws/tables/<id>/`. Thin: parse, validate, call a service, send.

Protocol (docs/protocol.md has the whole of it, with an example session):

* On connect the viewer (a player or a spectator; the session authenticates them) gets a
  `snapshot` of the table as they may see it, carrying the stream version `v`. Then every
  table event arrives as a message with the next `v`, in the form the viewer may see
  (their own hole cards only); what one command produced goes in one frame (a JSON array
  when there are several: a frame costs the server far more than its bytes). A gap in
  `v` means a message was lost (the table's
  feed delivers at most once, tables/feed.py): the client sends `{"cmd": "snapshot"}`
  and starts again from it.
* Commands (`tables/commands.py`, one dataclass each, which also parses and checks
  their fields): `{"cmd": ..., "seq": n, ...}` with `seq` increasing on each connection. The
  answer is `{"type": "ack", "seq": n}` or `{"type": "error", "seq": n, "code": ...,
  "message": ...}`; an error changes nothing. What the command changed arrives as events.
* A player whose connection dropped during their own turn and who comes back before it
  ends gets the reconnect bonus (RULES §5): closing a player's last socket to the table
  records the drop (`seat_disconnected`), the next connect grants the bonus for that turn
  (`seat_reconnected`). A second tab opened while the first is connected earns nothing.
  A player's sockets are counted in a channel-layer group of their own
  (`player_presence_group`), so a tab served by another web process counts too.

Robustness: no frame closes the socket. A frame over `MAX_FRAME_CHARS`, one that is not
JSON (too deeply nested included), a field out of range, or a string its field's rule
refuses (tables/commands.py) each get an `error` with a code; more than `RATE_BURST`
commands at once (refilled at `RATE_PER_SECOND`) get `rate_limited` and do not run. A
command that meets a database or Redis fault (or any bug) is answered `server_error` and
logged with the table id: it may or may not have been carried out, so the client
resynchronises and decides again (an `act` carrying its `turn` is then refused as
`stale` if it had been applied). The handshake is accepted at once; an unknown table is
then closed with 4404, and a fault while connecting with 1013 (try again later), never
1011.

Limits per viewer (tables/viewer_limits.py: a user, or a spectator's address, over all
the room's web processes): a socket over its viewer's cap, or a connect when the
viewer's shared token bucket is empty, is closed with 4429 (too many sockets or too
fast: try again later) and does nothing more; a frame when that bucket is empty gets
`rate_limited`, as over this socket's own. A player's socket acts for them only while
their session lives and their account may play (tables/session_watch.py): closed with
4401 once the session ends, its commands refused `cannot_play` while the account may not
play. After the server closes a socket (4401, 4404, 4429, 1013) nothing the client sends
is read.

Seated play first (issue #46): the socket knows whether its viewer holds a seat at the
table (`seated`, from its last snapshot and the stream's `seats` messages, whichever
socket or process took or freed the seat). A seated player's decisions and table
commands go to the database thread before what viewers without a seat send, and are
what the room's seating measures (tables/hop_order.py, tables/capacity.py); a player's
own settings (`mute`, `auto_top_up`, `PLAYER_SETTINGS`) never are. A viewer without a
seat's snapshot comes from the table's cached public form (tables/snapshot_cache.py);
a seated player's is read whole.

A socket's commands run in order, one at a time, in a task of their own beside the
socket's loop (a lane, `_lane`): the table's stream keeps reaching the socket while one
of its commands waits for the database thread. Run in the loop, a `sit_out` queued
behind a burst of other sockets' commands held back the player's turn notice with it,
and the turn's clock ran out before the player saw it (the load test's wind-down, issue
#15). A decision (`act`, `run_twice`: `on_clock`) has a lane of its own, so that it
reaches the database thread, where decisions go first (tables/hop_order.py), ahead of
the socket's own `sit_out` still waiting there; but not ahead of a `leave` or an
`advance` (`DECISIONS_WAIT_FOR`: a leave on your turn folds at once, an advance is the
decision made beforehand), behind which it takes the other lane. Commands are
numbered (`seq`) as they come. At most `LANE_SIZE` wait in a lane; a frame finding its
lane full is answered `rate_limited` (its `seq` still unused), and the loop never waits
for a lane. A `snapshot` holds the stream back while it is read, so that the stream
goes on from the version it shows.

Ordering: commands on a table are serialised by its row lock, so versions follow commit
order; but each process publishes after its own commit, so two messages can reach the
table's feed in the wrong order. The consumer puts them back in order, waiting up to
`REORDER_WAIT` seconds for a missing one, counted from when that version became the one
missing, before passing on what it has (the client then sees the gap and asks for a
snapshot). Messages the snapshot already covers are dropped.
"""

import asyncio
import contextlib
import functools
import json
import logging
import time
import uuid
from typing import Any, ClassVar

from autobahn.exception import Disconnected
from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import DataError

from accounts.models import User
from cashier.exceptions import IdempotencyKeyInvalid
from cashier.idempotency import client_idempotency_key
from poker_room.socket_auth import socket_may_have_user, socket_user
from poker_room.socket_loop import dispatch_from_queue
from tables import viewer_limits
from tables.capacity import (
    in_turn,
    on_database_thread,
    play_urgency,
    refuse_new_seat_when_busy,
)
from tables.commands import COMMANDS, Command, CommandError, Sit, Snapshot, command_parse
from tables.events import messages_from_group, player_presence_group
from tables.exceptions import TableError
from tables.feed import new_inbox, table_feed
from tables.hop_order import Urgency
from tables.models import Seat, Table
from tables.selectors import snapshot_for_viewer, table_snapshot
from tables.services import play
from tables.session_watch import CLOSE_SIGNED_OUT, session_watch
from tables.snapshot_cache import public_snapshot_read, snapshot_cache, table_read
from tables.viewer_limits import SocketPlace, TokenBucket, client_address

logger = logging.getLogger(__name__)

REORDER_WAIT = 0.5
# A command is a few hundred characters; anything much larger is refused unparsed.
MAX_FRAME_CHARS = 4096
# Per-connection token bucket: a burst of RATE_BURST commands, refilled at RATE_PER_SECOND.
RATE_BURST = 20
RATE_PER_SECOND = 10.0
# A socket's commands waiting in one of its lanes, at most (then `rate_limited`): its
# token bucket's burst.
LANE_SIZE = RATE_BURST
# The commands a decision of the same socket does not go ahead of (see above).
DECISIONS_WAIT_FOR = frozenset({"leave", "advance"})
# A socket over its viewer's cap, or a connect with no token left (tables/viewer_limits.py):
# too many sockets or too fast, try again later.
CLOSE_TOO_MANY = 4429
# A player's own settings, no table's: never seated play (tables/hop_order.py).
PLAYER_SETTINGS = frozenset({"mute", "auto_top_up"})


class TableConsumer(AsyncJsonWebsocketConsumer):
    rate_burst: ClassVar[float] = RATE_BURST
    rate_per_second: ClassVar[float] = RATE_PER_SECOND
    closing = False  # the server has closed the socket (`_close`)
    place: SocketPlace | None = None  # under its viewer's caps (tables/viewer_limits.py)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Channels' consumer loop (channels.consumer.AsyncConsumer.__call__), on one
        queue: the socket's frames and the table's feed arrive in the inbox and are
        dispatched from it one at a time, never beside a handler
        (poker_room/socket_loop.py says why, and how a burst of frames is taken).

        Nothing is sent to a table socket's channel: its name only counts the player's
        sockets in their presence group (`player_presence_group`), so the channel layer
        is not read here (`table_resync` puts the channel back in the group after a
        Redis restart, which Channels' receive did)."""
        self.scope = scope
        self.inbox = new_inbox()
        self.following = False  # the inbox is joined to the table's feed
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        self.channel_name = await self.channel_layer.new_channel()
        self.server_send = send
        # The socket's lanes (their queues and tasks): its commands, its decisions.
        self.commands: asyncio.Queue[Any] = asyncio.Queue(maxsize=LANE_SIZE)
        self.decisions: asyncio.Queue[Any] = asyncio.Queue(maxsize=LANE_SIZE)
        self.lanes: dict[asyncio.Queue[Any], asyncio.Task[None]] = {}
        self.holding = 0  # commands in the lane that decisions wait for, waiting or running
        self.snapshot_lock = asyncio.Lock()
        try:
            with contextlib.suppress(StopConsumer):
                await dispatch_from_queue(
                    receive=receive,
                    queue=self.inbox,
                    dispatch=self.dispatch,
                    frames_at_once=RATE_BURST,
                )
        finally:
            for task in self.lanes.values():
                task.cancel()
            self._give_back_place()  # a disconnect cut short holds no place either

    async def base_send(self, message: dict[str, Any]) -> None:
        """Send to the socket; a socket closed meanwhile takes nothing more.

        Daphne raises for a message to a connection the client has just closed (autobahn's
        `Disconnected`) rather than dropping it: the table's stream can be on its way to
        any socket at any moment. Raised, it ended the consumer before its disconnect,
        which then never ran: the player's drop went unrecorded and daphne logged a
        traceback. The disconnect follows in the receive queue and is handled there."""
        with contextlib.suppress(Disconnected):
            await self.server_send(message)

    async def connect(self) -> None:
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        self.user: User | None = None  # found once the socket is accepted (_connect)
        self.viewer_id: int | None = None
        self.last_seq = 0
        self.connection_id = uuid.uuid4().hex
        self.bucket = TokenBucket(capacity=self.rate_burst, rate=self.rate_per_second)
        self.present = False  # in the player's presence group
        # Seated at the table, as the last snapshot or `seats` message sent here said:
        # their commands are then seated play (tables/hop_order.py, tables/capacity.py).
        self.seated = False
        # The last version this client has (None until the snapshot), messages that
        # arrived ahead of a missing one, by version, and the version being waited for.
        self.version: int | None = None
        # (JSON texts: the forms are encoded once per process, tables/events.py)
        self.early: dict[int, str] = {}
        self.reorder_timer: asyncio.TimerHandle | None = None
        self.waiting_for: int | None = None
        opened = False
        try:
            opened = await self._connect()
        except Exception:
            logger.exception("table %s: connecting failed", self.table_id)
            await self._refuse(1013)  # try again later
        finally:
            # Refused, closed or failed halfway (cancelled too): it holds no place from now.
            if not opened:
                await self._release_place()

    async def _connect(self) -> bool:
        """Accept, then follow the table; False if the socket was closed instead."""
        # Accepted first: the handshake never waits behind the process's database thread.
        # Under load that thread's queue can outlast the server's handshake timeout (5 s),
        # and every handshake cut then came back as another, a storm of them (issue #15).
        # A client also learns why it is closed (4404, 4429, 1013): a handshake refused
        # instead shows a browser only 1006.
        await self.accept()
        # The address's cap (and a spectator's token) before the user's read: an address
        # over its cap, or reconnecting too fast, costs no database hop.
        self.place = await viewer_limits.limits.socket_opens(
            client_address(self.scope), maybe_signed_in=socket_may_have_user(self.scope)
        )
        if self.place is None:
            await self._refuse(CLOSE_TOO_MANY)
            return False
        # The user too, found only now (poker_room/socket_auth.py): the handshake never
        # waits for the database thread, the rest of the connect does.
        async with in_turn():  # the session's user, read on the database thread
            self.user = await socket_user(self.scope)
        self.viewer_id = self.user.id if self.user is not None else None
        # Closed (CLOSE_SIGNED_OUT) when the session ends (tables/session_watch.py).
        session_watch().add(self.scope, self.inbox)
        if not await self.place.identify(self.viewer_id):  # the user's cap and token
            await self._refuse(CLOSE_TOO_MANY)
            return False
        if not await on_database_thread(Table.objects.filter(pk=self.table_id).exists):
            await self._refuse(4404)
            return False
        await table_feed().join(self.table_id, self.inbox)
        self.following = True
        await snapshot_cache().follow(self.table_id, self.inbox)
        if self.user is not None:
            presence = player_presence_group(self.table_id, self.viewer_id)
            await self.channel_layer.group_add(presence, self.channel_name)
            self.present = True
        seated = await self.send_snapshot()
        # A viewer who is not seated has no bonus to get: no table command (and lock) for them.
        if self.user is not None and seated:
            try:
                await on_database_thread(
                    play.seat_reconnected,
                    table_id=self.table_id,
                    user=self.user,
                    urgency=play_urgency(user_id=self.user.pk, decision=False),
                )
            except Exception:  # the connection works without the bonus: keep it
                logger.exception("table %s: the reconnect bonus failed", self.table_id)
        return True

    async def _refuse(self, code: int) -> None:
        """Close a socket that did not open: its places given back first (in Redis too),
        so that a client told 4429 may open another at once elsewhere."""
        await self._release_place()
        await self._close(code)

    async def _close(self, code: int) -> None:
        """Close the socket from the server's side; nothing it sends is read after."""
        self.closing = True
        await self.close(code=code)

    def _give_back_place(self) -> None:
        if self.place is not None:
            self.place.give_back()  # once, however often asked (in Redis: its lease ends)

    async def _release_place(self) -> None:
        """Give the socket's places back, in Redis too before going on (but while this
        task is being cancelled, as its process stops: its lease ends them there)."""
        task = asyncio.current_task()
        if self.place is None or (task is not None and task.cancelling()):
            self._give_back_place()
        else:
            await self.place.release()

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels' own dispatch first runs close_old_connections in a worker thread: a
        # thread hop for every message to every socket, a tenth of a web process's CPU
        # under load (py-spy). Needless here: this consumer reaches the database only
        # through database_sync_to_async (tables.capacity.on_database_thread), which closes
        # them in its thread, before and after.
        if self.closing and message["type"] != "websocket.disconnect":
            # Closed by the server (4404, 4429, 1013): the frames the client sent before
            # it saw the close, and any feed message, are dropped unread. A client refused
            # for sending too much must not get its frames carried out meanwhile.
            return
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def disconnect(self, code: int) -> None:
        await self._release_place()
        # The commands sent before the close are carried out before it is handled (a
        # drop recorded after the `act` that came first), as when they ran in the loop.
        await self.decisions.join()
        await self.commands.join()
        self._stop_waiting()
        if not hasattr(self, "table_id"):
            return
        if getattr(self, "following", False):
            self.following = False
            try:
                await snapshot_cache().unfollow(self.table_id, self.inbox)
                await table_feed().leave(self.table_id, self.inbox)
            except Exception:
                logger.exception("table %s: leaving the feed failed", self.table_id)
        if not getattr(self, "present", False) or self.user is None:
            return
        self.present = False
        user_id = self.user.id
        presence = player_presence_group(self.table_id, user_id)
        try:
            await self.channel_layer.group_discard(presence, self.channel_name)
            if await self.channel_layer.group_live_size(presence) > 0:
                return  # another socket of theirs is open, here or on another process
        except Exception:  # Redis is down: take this one for their last socket
            logger.exception("table %s: counting the sockets of %s failed", self.table_id, user_id)
        seat = Seat.objects.filter(table_id=self.table_id, player_id=user_id)
        if not await on_database_thread(seat.exists):
            return  # a viewer who is not seated has no drop to record (and takes no lock)
        try:
            await on_database_thread(
                play.seat_disconnected,
                table_id=self.table_id,
                user=self.user,
                urgency=play_urgency(user_id=user_id, decision=False),
            )
        except Exception:
            logger.exception("table %s: recording the drop of %s failed", self.table_id, user_id)

    async def send_snapshot(self) -> bool:
        """Send the table as it is now; returns whether the viewer is seated in it.

        The stream's messages are held back meanwhile (kept in `early`), then passed on
        from the snapshot's version: one sent while the snapshot was read would reach the
        client before it, and be missing from the stream after it. One snapshot at a
        time (the lane's and a resync's)."""
        async with self.snapshot_lock:
            self._stop_waiting()
            self.version = None
            snapshot, text = await self._snapshot_now()
            await self.send(text_data=text)
            self.version = snapshot["v"]
            self.seated = snapshot["you"] is not None
            self.early = {v: body for v, body in self.early.items() if v > self.version}
            await self._send_in_order()
            return self.seated

    async def _snapshot_now(self) -> tuple[dict[str, Any], str]:
        """This viewer's snapshot, and its JSON text. A viewer without a seat's comes
        from the table's cached public form (tables/snapshot_cache.py: no database hop
        for a spectator, a few rows of their own for a signed-in viewer); a seated
        player's is read whole, as seated play (tables/capacity.py). The public form
        says whether the viewer holds a seat at its version."""
        if not self.seated:
            public = await snapshot_cache().public(
                self.table_id, lambda: on_database_thread(public_snapshot_read, self.table_id)
            )
            if self.user is None:
                return public.body, public.text
            if self.user.pk not in public.seated:
                snapshot = await on_database_thread(snapshot_for_viewer, public, user=self.user)
                return snapshot, json.dumps(snapshot)
        urgency = Urgency.OTHER
        if self.user is not None:
            urgency = play_urgency(user_id=self.user.pk, decision=False)
        snapshot = await on_database_thread(self._snapshot, urgency=urgency)
        return snapshot, json.dumps(snapshot)

    def _snapshot(self) -> dict[str, Any]:
        """This viewer's snapshot, read whole (on the database thread)."""
        return table_read(self.table_id, lambda table: table_snapshot(table=table, user=self.user))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """One frame: exactly one answer, whatever it holds; the socket stays open."""
        content: Any = None
        problem: CommandError | None = None
        if text_data is None:
            problem = CommandError("malformed", "Send commands as JSON text frames.")
        elif len(text_data) > MAX_FRAME_CHARS:
            problem = CommandError(
                "frame_too_large", f"A command is at most {MAX_FRAME_CHARS} characters."
            )
        else:
            try:
                content = json.loads(text_data)
            except (ValueError, RecursionError):  # RecursionError: "[" nested 100,000 deep
                problem = CommandError("malformed", "Send JSON.")
        seq = content.get("seq") if isinstance(content, dict) else None
        if type(seq) is not int:
            seq = None
        # This socket's bucket, then its viewer's, shared by all their sockets: a frame
        # refused by either is not carried out (a `sit` then never takes the seat a
        # filling room hands out each second, tables/capacity.py).
        own = self.bucket.take(time.monotonic())
        viewers: bool | None = True
        if own and self.place is not None:
            # Leased to this process already (no await), or asked of Redis for the next
            # few (tables/viewer_limits.py).
            viewers = self.place.take_here()
            if viewers is None:
                viewers = await self.place.take()
        if not own:
            await self._refuse_rate(seq, "", self.rate_burst, self.rate_per_second)
        elif not viewers:
            await self._refuse_rate(
                seq,
                " over all your connections",
                settings.TABLE_VIEWER_BURST,
                settings.TABLE_VIEWER_PER_SECOND,
            )
        elif problem is not None:
            await self._send_error(seq, problem.code, problem.message)
        else:
            await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """A command, numbered in the order it came, to one of the socket's lanes: a
        decision to its own unless a command it waits for is in the other."""
        seq = content.get("seq") if isinstance(content, dict) else None
        name = content.get("cmd") if isinstance(content, dict) else None
        command = COMMANDS.get(name) if isinstance(name, str) else None
        decision = command is not None and command.on_clock and not self.holding
        lane = self.decisions if decision else self.commands
        if lane.full():
            await self._refuse_rate(seq, " waiting", LANE_SIZE, self.rate_per_second)
            return
        try:
            self._sequence(content)
        except CommandError as exc:
            await self._send_error(seq, exc.code, exc.message)
            return
        if name in DECISIONS_WAIT_FOR:
            self.holding += 1
        if lane not in self.lanes:
            self.lanes[lane] = asyncio.get_running_loop().create_task(self._lane(lane))
        lane.put_nowait(content)

    def _sequence(self, content: Any) -> None:
        """Check the command's shape and `seq` (newer than the last), and take its number."""
        if not isinstance(content, dict) or not isinstance(content.get("cmd"), str):
            raise CommandError("malformed", 'A command is a JSON object with "cmd" and "seq".')
        seq = content.get("seq")
        if type(seq) is not int:
            raise CommandError("malformed", '"seq" must be a whole number.')
        if seq <= self.last_seq:
            raise CommandError("stale", f"Command {seq} is not newer than {self.last_seq}.")
        self.last_seq = seq

    async def _lane(self, lane: "asyncio.Queue[dict[str, Any]]") -> None:
        """Carry out a lane's commands, in the order they came, one at a time, whatever
        becomes of each (a lane that stopped would leave the socket's disconnect waiting
        for ever)."""
        while True:
            content = await lane.get()
            try:
                await self._command_answered(content)
            except Exception:  # its answer could not be sent (the socket is closing)
                logger.exception("table %s: answering a command failed", self.table_id)
            finally:
                if content["cmd"] in DECISIONS_WAIT_FOR:
                    self.holding -= 1
                lane.task_done()

    async def _command_answered(self, content: dict[str, Any]) -> None:
        """Carry out one command (numbered: `_sequence`) and answer it: an ack or an
        error, never an exception. Once the server has closed the socket, nothing more
        is carried out."""
        if self.closing:
            return
        seq = content["seq"]
        try:
            await self._command(content)
        except (CommandError, TableError) as exc:
            await self._send_error(seq, exc.code, exc.message)
        except DataError:
            # A value the database cannot hold that the checks here let through.
            logger.warning("table %s: the database refused a value in %r", self.table_id, content)
            await self._send_error(
                seq, "malformed", "A field's value cannot be stored (out of range, or a NUL)."
            )
        except Exception:
            # The database or Redis failed (or a bug): the command may have been carried
            # out, its events lost. Say so and keep the connection.
            logger.exception(
                "table %s: command %r of user %s failed",
                self.table_id,
                content["cmd"],
                self.user.id if self.user else None,
            )
            await self._send_error(
                seq,
                "server_error",
                "The table could not answer that command (a server fault); it may or may "
                "not have been carried out. Ask for a snapshot and decide again.",
            )
        else:
            await self.send_json({"type": "ack", "seq": seq})

    async def _refuse_rate(self, seq: Any, where: str, burst: float, rate: float) -> None:
        await self._send_error(
            seq,
            "rate_limited",
            f"Too many commands{where}: at most {burst:g} at once and {rate:g} a second. "
            "This one was not carried out; send it again in a moment.",
        )

    async def _send_error(self, seq: Any, code: str, message: str) -> None:
        await self.send_json({"type": "error", "seq": seq, "code": code, "message": message})

    async def _command(self, content: dict[str, Any]) -> None:
        cls = COMMANDS.get(content["cmd"])
        if cls is None:
            raise CommandError("unknown_command", f"Unknown command {content['cmd']!r}.")
        if self.user is not None:
            # Its session still alive and the account allowed to play, as the watch last
            # found (tables/session_watch.py): no query on the way, as a rule.
            await session_watch().confirm(
                self.scope, playing=cls is not Snapshot and not cls.withdraws
            )
        if cls is Snapshot:
            await self.send_snapshot()
            return
        if self.user is None:
            raise CommandError("login_required", "Log in to play.")
        command = command_parse(content)
        if isinstance(command, Sit) and command.key is None:
            # Refused here, before the database thread, when it cannot be a retry (the
            # service refuses the others after looking their key up). A seat a slowed room
            # lets in is this sit's, and the service's check lets it through.
            refuse_new_seat_when_busy(user_id=self.user.pk, table_id=self.table_id)
        key = None
        if command.keyed:
            # Namespaced by channel, user and command, so a client's key can never be one
            # of the room's own (cashier/idempotency.py); no key: a fresh random one.
            try:
                key = client_idempotency_key(
                    channel="ws",
                    user_id=self.user.pk,
                    command=command.name,
                    key=uuid.uuid4().hex if command.key is None else command.key,
                )
            except IdempotencyKeyInvalid as exc:
                raise CommandError("idempotency_key_invalid", exc.message) from exc
        await on_database_thread(
            command.run,
            table_id=self.table_id,
            user=self.user,
            idempotency_key=key,
            urgency=self._command_urgency(command),
        )
        if isinstance(command, Sit):
            self.seated = True  # as the `seats` message on its way will say

    def _command_urgency(self, command: Command) -> Urgency:
        """A seated player's decision first, their other table commands next (as seated
        play, at a player's pace: tables/capacity.py); what viewers without a seat send,
        and a player's own settings, after those."""
        if not self.seated or command.name in PLAYER_SETTINGS or self.user is None:
            return Urgency.OTHER
        return play_urgency(user_id=self.user.pk, decision=command.on_clock)

    async def session_ended(self, message: dict[str, Any]) -> None:
        """The socket's session ended (logged out, a password changed, the account
        closed: tables/session_watch.py): closed; a seated player's drop is recorded."""
        await self._close(CLOSE_SIGNED_OUT)

    async def table_resync(self, message: dict[str, Any]) -> None:
        """The table's feed may have lost messages (Redis was away): a fresh snapshot now,
        rather than at the next message, which may be long coming.

        A restarted Redis has lost the player's presence group too: this socket is put
        back in it now, not at the channel layer's next refresh (a minute away), or
        closing another tab of theirs meanwhile would find none open and record a drop."""
        if self.present and self.viewer_id is not None:
            presence = player_presence_group(self.table_id, self.viewer_id)
            try:
                await self.channel_layer.group_add(presence, self.channel_name)
            except Exception:  # Redis away again: the layer's refresher puts it back
                logger.exception("table %s: rejoining the presence group failed", self.table_id)
        await self.send_snapshot()

    async def table_messages(self, wire: dict[str, Any]) -> None:
        """A command's messages from the table's feed: send this viewer's form, in order."""
        for message in messages_from_group(wire):
            if self.version is not None and message.version <= self.version:
                continue  # the snapshot (or an earlier send) already has it
            self.early[message.version] = message.text_for(self.viewer_id)
        await self._send_in_order()

    async def _send_in_order(self) -> None:
        if self.version is None:
            return  # the snapshot is on its way; it decides where the stream starts
        ready = []
        while self.version + 1 in self.early:
            self.version += 1
            ready.append(self.early.pop(self.version))
        await self._send_messages(ready)
        if self.version is None:
            return  # a snapshot began while they were sent: it decides what comes next
        # The wait is for one missing version, from when it became the one missing:
        # when it arrives and a later one is missing instead, the clock starts again.
        missing = self.version + 1 if self.early else None
        if missing != self.waiting_for:
            self._stop_waiting()
            if missing is not None:
                self.waiting_for = missing
                loop = asyncio.get_running_loop()
                self.reorder_timer = loop.call_later(
                    REORDER_WAIT,
                    lambda: asyncio.ensure_future(self._give_up_waiting(missing)),
                )

    async def _send_messages(self, texts: list[str]) -> None:
        """Send stream messages (JSON texts, in order) in one frame: a command's messages
        (a deal's dozen included) cost each socket one frame, not one each. One message
        goes as itself, several as a JSON array of them (docs/protocol.md). A `seats`
        message among them says whether this viewer is seated now."""
        if self.viewer_id is not None:
            for text in texts:
                seated = seated_in(text)
                if seated is not None:
                    self.seated = self.viewer_id in seated
        if len(texts) == 1:
            await self.send(text_data=texts[0])
        elif texts:
            await self.send(text_data="[" + ",".join(texts) + "]")

    def _stop_waiting(self) -> None:
        timer = getattr(self, "reorder_timer", None)
        if timer is not None:
            timer.cancel()
        self.reorder_timer = None
        self.waiting_for = None

    async def _give_up_waiting(self, missing: int) -> None:
        """`missing` is lost: pass on the rest; the client sees the gap and resyncs."""
        if self.waiting_for != missing:
            return  # it arrived (or a snapshot came) after the timer had fired
        self.reorder_timer = None
        self.waiting_for = None
        try:
            versions = sorted(self.early)
            ready = [self.early.pop(version) for version in versions]
            if versions:
                self.version = versions[-1]
            await self._send_messages(ready)
        except Exception:  # a task of its own: nobody else would see it fail
            logger.exception("table %s: passing on held messages failed", self.table_id)


# How a `seats` message's text begins (tables.events.TableMessage.for_user: its version,
# then its type), within its first characters whatever the version.
SEATS_TYPE = '"type": "seats"'


def seated_in(text: str) -> frozenset[int] | None:
    """The user ids seated at the table, if `text` is a `seats` message (else None). The
    look costs a short search of the text's start; a `seats` message is parsed once in a
    process, whichever of its sockets asks (they share its text)."""
    if text.find(SEATS_TYPE, 0, 48) == -1:
        return None
    return _seated_in(text)


@functools.lru_cache(maxsize=64)
def _seated_in(text: str) -> frozenset[int] | None:
    message = json.loads(text)
    if message.get("type") != "seats":
        return None
    return frozenset(seat["user_id"] for seat in message["seats"])
