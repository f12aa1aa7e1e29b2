"""The commands a client can send a table: one dataclass each, the one description of
their fields.

The WebSocket consumer parses frames with `command_parse`, the REST seating endpoints
build their serializers from the same classes (tables/api/seating.py), the bots send
`to_wire()` of them, and docs/protocol.md lists them (a test checks the doc against
`COMMANDS`). A command's fields are its dataclass fields: a field without a default is
required; `argument` in a field's metadata names the service argument it fills when that
differs; `cents` marks an amount of money in cents; `text` the `TextRule` of a string.

On the wire a command is `{"cmd": name, "seq": n, ...fields}`; a field sent as null
counts as absent, unknown fields are ignored, a field of the wrong JSON type (`true` is
not a number), a string longer than its rule allows or a whole number outside ±`MAX_INT`
is `malformed`. Every string is then held to its field's rule before any service runs
(issue #46, finding 1: a lone surrogate in a mute's player name reached PostgreSQL, and
two of them paused the table): a short ASCII word (`action`, `mode`), an idempotency
key, a screen name (`player`), a line of chat (`text`). None lets through a surrogate,
a control or format character (NUL, a bidi override) or a line separator: each would
fail in the database or disguise what the text says. Checks of meaning (is it your
turn, is the seat free, is there such a player) are the services'.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from accounts.models import User
from accounts.names import SCREEN_NAME_MAX, screen_name_possible
from cashier.idempotency import CLIENT_KEY_MAX
from tables.services import advance, blind_options, chat, play, seating, top_up

# Whole numbers a command may carry (PostgreSQL bigint; cents, seats, turns all fit).
MAX_INT = 2**63 - 1
# How a refusal names the JSON type a field takes.
JSON_TYPE_NAMES = {int: "a whole number", str: "a string", bool: "true or false"}


class CommandError(Exception):
    """A frame that is not a well-formed command (it changed nothing)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class TextRule:
    """What a string field may hold: at most `longest` characters (longer is refused
    with `too_long`), and whatever `refusal` (the field's value -> why not, or None)
    lets through. Every rule refuses surrogates, controls, format characters and
    separators."""

    longest: int
    refusal: Callable[[str], CommandError | None]
    too_long: str = "malformed"

    def check(self, field_name: str, value: str) -> None:
        """Raise `CommandError` unless `value` is a string this field takes."""
        if len(value) > self.longest:
            raise CommandError(
                self.too_long, f'"{field_name}" is at most {self.longest} characters.'
            )
        refused = self.refusal(value)
        if refused is not None:
            raise refused


def _word_refusal(value: str) -> CommandError | None:
    if WORD_PATTERN.fullmatch(value):
        return None
    return CommandError("malformed", "Send a word of lower-case letters and underscores.")


def _key_refusal(value: str) -> CommandError | None:
    # As the cashier checks every client's key (cashier/idempotency.py), here before
    # anything runs.
    if value and value.isascii() and value.isprintable():
        return None
    return CommandError(
        "idempotency_key_invalid",
        f"The idempotency key must be printable ASCII, 1 to {CLIENT_KEY_MAX} characters.",
    )


def _screen_name_refusal(value: str) -> CommandError | None:
    if screen_name_possible(value):
        return None
    return CommandError("no_such_player", "No player has that screen name.")


def _chat_line_refusal(value: str) -> CommandError | None:
    refused = chat.chat_text_refusal(value)
    return None if refused is None else CommandError(refused.code, refused.message)


WORD_PATTERN = re.compile(r"[a-z_]{1,32}")
# `action` and `mode`: the service says which words it takes.
WORD = TextRule(32, _word_refusal)
# A client's idempotency key (cashier/idempotency.py namespaces it).
KEY = TextRule(CLIENT_KEY_MAX, _key_refusal, too_long="idempotency_key_invalid")
# Someone's screen name, as sign-up takes them (accounts/names.py).
SCREEN_NAME = TextRule(SCREEN_NAME_MAX, _screen_name_refusal)
# A line of chat (tables/services/chat.py says what it holds).
CHAT_LINE = TextRule(chat.CHAT_MAX_CHARS, _chat_line_refusal)


def argument(
    name: str,
    *,
    cents: bool = False,
    text: TextRule | None = None,
    default: Any = dataclasses.MISSING,
) -> Any:
    """A field that fills the service argument `name` (`cents`: an amount of money;
    `text`: the rule of a string)."""
    return field(default=default, metadata={"argument": name, "cents": cents, "text": text})


def cents(*, default: Any = dataclasses.MISSING) -> Any:
    return field(default=default, metadata={"cents": True})


def text_field(rule: TextRule, *, default: Any = dataclasses.MISSING) -> Any:
    """A string field held to `rule`."""
    return field(default=default, metadata={"text": rule})


@dataclass(frozen=True)
class Command:
    """Base of the commands. `name` is the `cmd` on the wire; `service` the table service
    it runs (called with `table_id`, `user` and the fields); `keyed` commands move money
    and carry an idempotency `key`; `on_clock` commands are decisions a turn's clock waits
    for, carried out before the others when the room is busy (tables/hop_order.py);
    `withdraws` commands only take a player out of play (leave, sit out), which an account
    that may no longer play (made staff while seated) may still do."""

    name: ClassVar[str] = "command"
    service: ClassVar[Callable[..., Any] | None] = None
    keyed: ClassVar[bool] = False
    on_clock: ClassVar[bool] = False
    withdraws: ClassVar[bool] = False

    def to_wire(self) -> dict[str, Any]:
        """The frame's body (the sender adds `seq`); absent fields are left out."""
        body = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {"cmd": self.name, **{k: v for k, v in body.items() if v is not None}}

    def arguments(self) -> dict[str, Any]:
        """The service's keyword arguments for this command (the key excepted)."""
        out = {}
        for f in dataclasses.fields(self):
            if f.name == "key":
                continue
            value = getattr(self, f.name)
            if value is not None:
                out[f.metadata.get("argument", f.name)] = value
        return out

    def run(self, *, table_id: int, user: User, idempotency_key: str | None = None) -> Any:
        """Carry the command out at the table (`idempotency_key`: the ledger's key)."""
        if self.service is None:
            raise TypeError(f"{self.name!r} is answered by the connection, not a service")
        kwargs = self.arguments()
        if self.keyed:
            kwargs["idempotency_key"] = idempotency_key
        return self.service(table_id=table_id, user=user, **kwargs)


@dataclass(frozen=True)
class Snapshot(Command):
    """A fresh snapshot of the table (spectators may ask too)."""

    name: ClassVar[str] = "snapshot"


@dataclass(frozen=True)
class Sit(Command):
    """Sit down at a free seat, the buy-in moving from the wallet to the table."""

    name: ClassVar[str] = "sit"
    service = staticmethod(seating.seat_take_unless_busy)
    keyed: ClassVar[bool] = True
    seat: int = argument("seat_number")
    buy_in: int = cents()
    post_big_blind: bool = False
    key: str | None = text_field(KEY, default=None)


@dataclass(frozen=True)
class TopUp(Command):
    """Add chips between hands, up to the maximum buy-in."""

    name: ClassVar[str] = "top_up"
    service = staticmethod(seating.seat_top_up)
    keyed: ClassVar[bool] = True
    amount: int = cents()
    key: str | None = text_field(KEY, default=None)


@dataclass(frozen=True)
class Act(Command):
    """The decision on your turn (`amount`: for bet_raise, the street total)."""

    name: ClassVar[str] = "act"
    service = staticmethod(play.hand_act)
    on_clock: ClassVar[bool] = True
    action: str = argument("kind", text=WORD)
    amount: int | None = None
    turn: int | None = None


@dataclass(frozen=True)
class RunTwice(Command):
    """Agree (`agree`) or refuse to run the rest of the board twice, when asked (`turn`,
    when given, must be the question's turn: an answer delayed past its hand is stale)."""

    name: ClassVar[str] = "run_twice"
    service = staticmethod(play.hand_run_twice)
    on_clock: ClassVar[bool] = True
    agree: bool
    turn: int | None = None


@dataclass(frozen=True)
class SitOut(Command):
    name: ClassVar[str] = "sit_out"
    withdraws: ClassVar[bool] = True
    service = staticmethod(seating.seat_sit_out)


@dataclass(frozen=True)
class SitIn(Command):
    name: ClassVar[str] = "sit_in"
    service = staticmethod(seating.seat_sit_in)
    post_big_blind: bool = False


@dataclass(frozen=True)
class Leave(Command):
    name: ClassVar[str] = "leave"
    withdraws: ClassVar[bool] = True
    service = staticmethod(seating.seat_leave)


@dataclass(frozen=True)
class Advance(Command):
    """Queue (or, with no `action`, clear) an advance action."""

    name: ClassVar[str] = "advance"
    service = staticmethod(advance.seat_advance_set)
    action: str | None = argument("kind", text=WORD, default=None)
    amount: int | None = None


@dataclass(frozen=True)
class Straddle(Command):
    """Ask for (`on`) or cancel a straddle for the next hand."""

    name: ClassVar[str] = "straddle"
    service = staticmethod(
        functools.partial(blind_options.seat_blind_option_set, kind=blind_options.STRADDLE)
    )
    on: bool = argument("wanted")


@dataclass(frozen=True)
class Overblind(Command):
    """Ask for (`on`) or cancel an overblind for the next hand."""

    name: ClassVar[str] = "overblind"
    service = staticmethod(
        functools.partial(blind_options.seat_blind_option_set, kind=blind_options.OVERBLIND)
    )
    on: bool = argument("wanted")


@dataclass(frozen=True)
class Chat(Command):
    """Write a line in the table's chat (seated players)."""

    name: ClassVar[str] = "chat"
    service = staticmethod(chat.chat_send)
    text: str = text_field(CHAT_LINE)


@dataclass(frozen=True)
class Mute(Command):
    """Stop (`on`) or start again reading a player's chat."""

    name: ClassVar[str] = "mute"
    service = staticmethod(chat.chat_mute_set)
    player: str = text_field(SCREEN_NAME)
    on: bool = argument("muted")


@dataclass(frozen=True)
class AutoTopUpSet(Command):
    """The auto top-up order: `off`, `max`, or `below` with `big_blinds`."""

    name: ClassVar[str] = "auto_top_up"
    service = staticmethod(top_up.auto_top_up_set)
    mode: str = text_field(WORD)
    big_blinds: int | None = None


COMMANDS: dict[str, type[Command]] = {
    cls.name: cls
    for cls in (
        Snapshot,
        Sit,
        TopUp,
        Act,
        RunTwice,
        SitOut,
        SitIn,
        Leave,
        Advance,
        Straddle,
        Overblind,
        Chat,
        Mute,
        AutoTopUpSet,
    )
}


@functools.cache
def _type_hints(cls: type[Command]) -> dict[str, Any]:
    # Resolved once per class: typing resolves every annotation again on each call, a
    # twentieth of a web process's CPU when done for every frame (py-spy).
    return typing.get_type_hints(cls)


def field_type(cls: type[Command], f: dataclasses.Field[Any]) -> type:
    """The JSON type of a command field: int, str or bool (None is always allowed for an
    optional field, and means absent)."""
    hint = _type_hints(cls)[f.name]
    if isinstance(hint, types.UnionType):
        (hint,) = (arg for arg in typing.get_args(hint) if arg is not type(None))
    return hint


def command_parse(content: dict[str, Any]) -> Command:
    """The command a frame's JSON object asks for, its fields checked for type and size."""
    name = content.get("cmd")
    cls = COMMANDS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise CommandError("unknown_command", f"Unknown command {name!r}.")
    fields = dataclasses.fields(cls)
    missing = sorted(
        f.name for f in fields if f.default is dataclasses.MISSING and content.get(f.name) is None
    )
    if missing:
        raise CommandError("malformed", f"{name!r} needs {', '.join(missing)}.")
    values = {}
    for f in fields:
        value = content.get(f.name)
        if value is not None:
            field_check(f, value, field_type(cls, f))
            values[f.name] = value
    return cls(**values)


def text_rule(f: dataclasses.Field[Any]) -> TextRule:
    """The rule a string field is held to (every string field has one)."""
    rule = f.metadata.get("text")
    if not isinstance(rule, TextRule):
        raise TypeError(f"the string field {f.name!r} has no TextRule")
    return rule


def field_check(f: dataclasses.Field[Any], value: Any, kind: type) -> None:
    """A command field of the right JSON type, and within what the room can store and
    show for what it is."""
    name = f.name
    if type(value) is not kind:
        raise CommandError("malformed", f'"{name}" must be {JSON_TYPE_NAMES[kind]}.')
    if kind is int and not -MAX_INT <= value <= MAX_INT:
        raise CommandError("malformed", f'"{name}" is out of range.')
    if kind is str:
        text_rule(f).check(name, value)
