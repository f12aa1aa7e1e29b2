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
"""

import json
import uuid
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

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
        await self.channel_layer.group_discard(table_group(self.table_id), self.channel_name)

    async def send_snapshot(self) -> None:
        await self.send_json(await database_sync_to_async(self._snapshot)())

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
            kwargs.setdefault("idempotency_key", f"ws:{self.connection_id}:{seq}")
        await database_sync_to_async(service)(**kwargs)

    async def table_message(self, message: dict[str, Any]) -> None:
        """A table event from the group: send the form this viewer may see."""
        private = message["private"]
        body = private.get(str(self.user.id), message["public"]) if self.user else message["public"]
        await self.send_json({"v": message["version"], **body})
