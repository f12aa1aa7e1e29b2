"""The table WebSocket: `/ws/tables/<id>/`. Thin: parse, validate, call a service, send.

Protocol (docs/protocol.md has the whole of it, with an example session):

* On connect the viewer (a player or a spectator; the session authenticates them) gets a
  `snapshot` of the table as they may see it, carrying the stream version `v`. Then every
  table event arrives as a message with the next `v`, in the form the viewer may see
  (their own hole cards only). A gap in `v` means a message was lost (channel layers
  deliver at most once): the client sends `{"cmd": "snapshot"}` and starts again from it.
* Commands: `{"cmd": ..., "seq": n, ...}` with `seq` increasing on each connection. The
  answer is `{"type": "ack", "seq": n}` or `{"type": "error", "seq": n, "code": ...,
  "message": ...}`; an error changes nothing. What the command changed arrives as events.
* A player whose turn it is when they connect gets the reconnect bonus (RULES §5).

Ordering: commands on a table are serialised by its row lock, so versions follow commit
order; but each process publishes after its own commit, so two messages can reach the
group in the wrong order. The consumer puts them back in order, waiting up to
`REORDER_WAIT` seconds for a missing one before passing on what it has (the client
then sees the gap and asks for a snapshot). Messages the snapshot already covers are
dropped.
"""

import asyncio
import json
import uuid
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from cashier.exceptions import IdempotencyKeyInvalid
from cashier.idempotency import client_idempotency_key
from tables.events import table_group
from tables.exceptions import TableError
from tables.models import Table
from tables.selectors import table_snapshot
from tables.services import advance, play, seating

# cmd -> (service, {message field: (service argument, type)})
COMMANDS: dict[str, tuple[Any, dict[str, tuple[str, type]]]] = {
    "act": (
        play.hand_act,
        {"action": ("kind", str), "amount": ("amount", int), "turn": ("turn", int)},
    ),
    "sit": (
        seating.seat_take,
        {
            "seat": ("seat_number", int),
            "buy_in": ("buy_in", int),
            "post_big_blind": ("post_big_blind", bool),
            "key": ("idempotency_key", str),
        },
    ),
    "top_up": (seating.seat_top_up, {"amount": ("amount", int), "key": ("idempotency_key", str)}),
    "sit_out": (seating.seat_sit_out, {}),
    "sit_in": (seating.seat_sit_in, {"post_big_blind": ("post_big_blind", bool)}),
    "leave": (seating.seat_leave, {}),
    "advance": (advance.seat_advance_set, {"action": ("kind", str), "amount": ("amount", int)}),
}
REORDER_WAIT = 0.5
# Fields a command cannot go without.
REQUIRED = {"act": {"action"}, "sit": {"seat", "buy_in"}, "top_up": {"amount"}}
# Money-moving commands: a missing idempotency key gets one unique to this command.
KEYED = {"sit", "top_up"}


class CommandError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class TableConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        user = self.scope.get("user")
        self.user = user if user is not None and user.is_authenticated else None
        self.last_seq = 0
        self.connection_id = uuid.uuid4().hex
        # The last version this client has (None until the snapshot), and messages
        # that arrived ahead of a missing one, by version.
        self.version: int | None = None
        self.early: dict[int, dict[str, Any]] = {}
        self.reorder_timer: asyncio.TimerHandle | None = None
        if not await database_sync_to_async(Table.objects.filter(pk=self.table_id).exists)():
            await self.close(code=4404)
            return
        await self.channel_layer.group_add(table_group(self.table_id), self.channel_name)
        await self.accept()
        await self.send_snapshot()
        if self.user is not None:
            await database_sync_to_async(play.seat_reconnected)(
                table_id=self.table_id, user=self.user
            )

    async def disconnect(self, code: int) -> None:
        if getattr(self, "reorder_timer", None) is not None:
            self.reorder_timer.cancel()
        await self.channel_layer.group_discard(table_group(self.table_id), self.channel_name)

    async def send_snapshot(self) -> None:
        snapshot = await database_sync_to_async(self._snapshot)()
        await self.send_json(snapshot)
        self.version = snapshot["v"]
        self.early = {v: body for v, body in self.early.items() if v > self.version}
        await self._send_in_order()

    def _snapshot(self) -> dict[str, Any]:
        table = Table.objects.select_related("stake_level").get(pk=self.table_id)
        return table_snapshot(table=table, user=self.user)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            content = json.loads(text_data or "")
        except ValueError:
            await self.send_json(
                {"type": "error", "seq": None, "code": "malformed", "message": "Send JSON."}
            )
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        seq = content.get("seq") if isinstance(content, dict) else None
        try:
            await self._command(content)
        except CommandError as exc:
            await self.send_json(
                {"type": "error", "seq": seq, "code": exc.code, "message": exc.message}
            )
        except TableError as exc:
            await self.send_json(
                {"type": "error", "seq": seq, "code": exc.code, "message": exc.message}
            )
        else:
            await self.send_json({"type": "ack", "seq": seq})

    async def _command(self, content: Any) -> None:
        if not isinstance(content, dict) or not isinstance(content.get("cmd"), str):
            raise CommandError("malformed", 'A command is a JSON object with "cmd" and "seq".')
        seq = content.get("seq")
        if type(seq) is not int:
            raise CommandError("malformed", '"seq" must be a whole number.')
        if seq <= self.last_seq:
            raise CommandError("stale", f"Command {seq} is not newer than {self.last_seq}.")
        self.last_seq = seq
        cmd = content["cmd"]
        if cmd == "snapshot":
            await self.send_snapshot()
            return
        if cmd not in COMMANDS:
            raise CommandError("unknown_command", f"Unknown command {cmd!r}.")
        if self.user is None:
            raise CommandError("login_required", "Log in to play.")
        service, fields = COMMANDS[cmd]
        missing = sorted(name for name in REQUIRED.get(cmd, ()) if content.get(name) is None)
        if missing:
            raise CommandError("malformed", f"{cmd!r} needs {', '.join(missing)}.")
        kwargs: dict[str, Any] = {"table_id": self.table_id, "user": self.user}
        for name, (argument, kind) in fields.items():
            if name not in content or content[name] is None:
                continue
            value = content[name]
            if type(value) is not kind:
                raise CommandError("malformed", f'"{name}" must be a {kind.__name__}.')
            kwargs[argument] = value
        if cmd in KEYED:
            # Namespaced by channel, user and command, so a client's key can never be one
            # of the room's own (cashier/idempotency.py); no key: a fresh random one.
            try:
                kwargs["idempotency_key"] = client_idempotency_key(
                    channel="ws",
                    user_id=self.user.pk,
                    command=cmd,
                    key=kwargs.get("idempotency_key", uuid.uuid4().hex),
                )
            except IdempotencyKeyInvalid as exc:
                raise CommandError("idempotency_key_invalid", exc.message) from exc
        await database_sync_to_async(service)(**kwargs)

    async def table_message(self, message: dict[str, Any]) -> None:
        """A table event from the group: send the form this viewer may see, in order."""
        private = message["private"]
        body = private.get(str(self.user.id), message["public"]) if self.user else message["public"]
        version = message["version"]
        if self.version is not None and version <= self.version:
            return  # the snapshot (or an earlier send) already has it
        self.early[version] = {"v": version, **body}
        await self._send_in_order()

    async def _send_in_order(self) -> None:
        if self.version is None:
            return  # the snapshot is on its way; it decides where the stream starts
        while self.version + 1 in self.early:
            self.version += 1
            await self.send_json(self.early.pop(self.version))
        if self.early and self.reorder_timer is None:
            loop = asyncio.get_running_loop()
            self.reorder_timer = loop.call_later(
                REORDER_WAIT, lambda: asyncio.ensure_future(self._give_up_waiting())
            )

    async def _give_up_waiting(self) -> None:
        """The missing message is lost: pass on the rest; the client will resync."""
        self.reorder_timer = None
        for version in sorted(self.early):
            self.version = version
            await self.send_json(self.early.pop(version))
