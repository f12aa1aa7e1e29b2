"""The one envelope every table command runs in (STYLE §4, after Zulip's `do_*` actions).

`@table_command` (and `@room_command`, below) turns a function `f(cmd: TableCommand,
**fields)` into the service `f(table_id=..., **fields)`. Each call:

1. opens one durable transaction and locks the table row (the one writer per table);
2. hands the body a `TableCommand`: the locked table, its seats and the hand in progress
   (read with the lock, in one query), and that hand's engine state, parsed once and only
   when asked for;
3. lets the body check (raise a `TableError` and nothing happened) and then apply: engine
   actions (`apply`), saves (`save_seat`, `save_table`, `save_hand`, `insert`), messages
   (`emit`) and notes for one player (`note`);
4. writes it all at the end, in one query: the hand and its state once (a deal's new hand
   with its players), the changed seats, the hand's event log, the rows inserted (a
   settled hand's rake shares), the table row with its new stream version, and the
   transaction's COMMIT; and after the commit publishes the command's messages,
   numbered, in one message of the table's feed.

Adding a command is one short function: check, then apply and emit.

The envelope also keeps one broken table from hurting the room, and no player from
stopping a table:

* A refusal (`TableError`, `CashierError`) is the command working as designed: it
  changes nothing, and neither counts as a failure nor clears one.
* A lock not free within `TABLE_LOCK_TIMEOUT_MS` (the table's row held by a stuck
  transaction, say) is a refusal too, `TableBusy`: the command gives up rather than wait
  for ever, and with it the thread it runs on, which serves the commands of every table
  on its web process (or a timer pass, which serves every table's timeouts).
* A database, Redis or broker outage is not the table's fault either: pausing every
  table during a restart of Redis would stop the room for no reason. It is re-raised
  untouched.
* Any other exception is a bug, or an input the checks of tables/commands.py missed
  (a lone surrogate psycopg cannot encode: issue #46, finding 1). Whose it is decides
  what happens:

  - Only a failure of **the room's own work** counts toward pausing the table. The
    room's work is what moves a table on whoever is watching: the whole of the timer
    loop's commands (`@room_command`: a turn's timeout, the deal it makes when one is
    due), and, inside any command, the deal (`hand_start_if_ready`) and the settling of
    a hand (`hands._hand_settle`), each marked with `cmd.room_work(...)`; and then the
    writes and the COMMIT of a command that did such work. A player's last action can
    settle the hand inside their own command: a failure there is the room's, since the
    same hand would fail to settle whoever acted, and the timeout would meet it next.
    It is logged with the table id and counted on the table, in a fresh transaction
    once the failing one rolled back; at `FAILURES_BEFORE_PAUSE` in a row the table is
    paused with a reason that the admin and the room's health report show. A command that
    moves the table on (it published something) clears the count (not the reason: an
    admin re-opens the table, see `table_failures_clear`). Chat and a connection
    dropped or back publish without moving it on (`moves_on` off): the players asking
    why a table is stuck must not keep it from being paused.
  - A failure anywhere else, while a player's (or an admin's) command runs, is that
    command's: it is logged with the table id and re-raised (the socket answers
    `server_error`, or `malformed` for a value the database refused), and it is never
    counted. Whatever a viewer sends, however often, no table pauses for it. A table
    that is truly broken is still found: its next timeout or deal is the room's work,
    and fails there.

Commands that would change nothing (a straddle cancelled that nobody asked for, `sit_in`
while in, a reconnect with no drop recorded) change nothing and publish nothing: no
version is used and no viewer hears of them. Where a read before the lock can already
tell (`unchanged_before_lock`), they do not even take the table's lock; the body still
checks again under the lock, the read before it being only a shortcut.

Commands never nest: the transaction is durable, so calling one inside another
transaction is an error (except inside a test's own transaction, which Django allows).
"""

import contextlib
import functools
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Concatenate, Generic, ParamSpec, TypeVar

import psycopg.errors
import redis.exceptions
from django.conf import settings
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    models,
    transaction,
)
from kombu.exceptions import OperationalError as BrokerError

from accounts.models import User
from cashier.exceptions import CashierError
from tables import rows
from tables.engine.actions import Action
from tables.engine.events import DealtBoard, Event
from tables.engine.state import HandState, apply_in_place
from tables.events import TableMessage, publish_on_commit
from tables.exceptions import TableBusy, TableError, TableNotFound
from tables.hand_helper import best_hands_after
from tables.messages import (
    BestHandNote,
    Body,
    HandEventMessage,
    Note,
    TableEvent,
    TableStatusChanged,
)
from tables.models import Hand, HandEvent, HandPlayer, HandStatus, Seat, Table, TableStatus
from tables.selectors import hand_players_by_seat

logger = logging.getLogger(__name__)

FAILURES_BEFORE_PAUSE = 2
REFUSALS: tuple[type[Exception], ...] = (TableError, CashierError)
# Outages of what the room runs on (they end by themselves; the table is not broken).
OUTAGES: tuple[type[Exception], ...] = (
    OperationalError,
    InterfaceError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    BrokerError,
    OSError,
)

# What an action may change on a hand. No index covers any of them (tests/foundation/
# test_schema.py), so that PostgreSQL updates the row in place (HOT) at every action.
HAND_FIELDS_OF_PLAY = (
    "state",
    "turn_version",
    "turn_deadline",
    "turn_bonus_used",
    "events_logged",
    "rake",
)
# What a command may change on a hand: those, and its status and end once it is over. The
# rest (table, number, button, deck commitment, salt, start) is fixed when the hand is
# dealt, and not written again at every action.
HAND_FIELDS_CHANGING = ("status", *HAND_FIELDS_OF_PLAY, "ended_at")

P = ParamSpec("P")
R = TypeVar("R")


def table_lock(*, table_id: int) -> rows.Locked:
    """Lock the table row and read its seats and hand in progress; the caller must be
    inside a transaction."""
    locked = rows.table_locked(table_id, lock_timeout_ms=settings.TABLE_LOCK_TIMEOUT_MS)
    if locked is None:
        raise TableNotFound(f"There is no table {table_id}.")
    return locked


class TableCommand:
    """What one command works on and what it changed, under the table's lock."""

    def __init__(self, locked: rows.Locked) -> None:
        self.table = locked.table
        self._seats = locked.seats
        self._hand = locked.hand
        # The seated players' auto top-up orders, by user id, as read with the lock.
        self.top_up_orders = locked.top_up_orders
        self._state: HandState | None = None
        self._dealt: dict[int, int] | None = None
        # Who this command dealt in, when it deals (none of a hand it found).
        self._hand_players: list[HandPlayer] = []
        self._hand_changed = False
        self._state_changed = False
        self._seat_fields: dict[int, tuple[Seat, set[str]]] = {}
        self._table_fields: set[str] = set()
        self._log: list[HandEvent] = []
        self._inserts: list[list[models.Model]] = []
        self._messages: list[tuple[Body, dict[int, Body]]] = []
        # Whether what this command publishes shows the table working (see above).
        self.moves_on = True
        # The room's own work this command did (its first), and the exception that
        # escaped such work, with what it was (see above).
        self.room_work_done: str | None = None
        self._room_failure: tuple[str, BaseException] | None = None

    # Whose work fails: the room's counts toward pausing the table (see above).

    @contextlib.contextmanager
    def room_work(self, what: str) -> Iterator[None]:
        """Mark the block as the room's own work (`what`: "the deal", "settling the
        hand"): an exception escaping it counts toward pausing the table, and so does
        one in the command's writes afterwards."""
        if self.room_work_done is None:
            self.room_work_done = what
        try:
            yield
        except BaseException as exc:
            if self._room_failure is None:  # the innermost work says most
                self._room_failure = (what, exc)
            raise

    def room_failure(self, error: BaseException) -> str | None:
        """The room's work that `error` (what the command raised) escaped from; None
        when it came from anywhere else (the player's part of the command)."""
        if self._room_failure is None:
            return None
        what, escaped = self._room_failure
        seen: set[int] = set()
        cause: BaseException | None = error
        while cause is not None and id(cause) not in seen:
            if cause is escaped:
                return what
            seen.add(id(cause))
            cause = cause.__cause__ or cause.__context__
        return None

    # What the command reads: read with the lock; the hand's state parsed once, if asked.

    @property
    def seats(self) -> list[Seat]:
        """The table's seats by number, with their players."""
        return self._seats

    def seat_of(self, user: User) -> Seat | None:
        return next((s for s in self.seats if s.player_id == user.id), None)

    def seat_at(self, number: int | None) -> Seat | None:
        return next((s for s in self.seats if s.number == number), None)

    @property
    def hand(self) -> Hand | None:
        """The hand in progress (None once this command has finished it)."""
        hand = self._hand
        return hand if hand is not None and hand.status == HandStatus.IN_PROGRESS else None

    @property
    def state(self) -> HandState:
        """The engine state of the hand this command works on, parsed once."""
        if self._state is None:
            if self.hand is None:
                raise ValueError("no hand is in progress")
            self._state = HandState.from_dict(self.hand.state)
        return self._state

    @property
    def finished(self) -> tuple[HandState, dict[int, int]] | None:
        """The state and players of the hand this command finished (None: it finished
        none); the database has them only once the command ends."""
        hand = self._hand
        if hand is None or hand.status != HandStatus.FINISHED or self._state is None:
            return None
        return self._state, self.dealt

    @property
    def dealt(self) -> dict[int, int]:
        """Seat -> the user id dealt in there, for the hand (by id, never by name)."""
        if self._dealt is None:
            hand = self._hand
            if hand is None:
                self._dealt = {}
            elif self._state is not None and None not in (ids := self._state.player_ids):
                # The state, parsed already, names every player by id (HandPlayer holds the
                # same, from the same deal): no query. Not parsed for this alone: a command
                # that needs no state (an admin pausing a table whose state cannot be
                # read) must not depend on it.
                pairs = zip(self._state.seats, ids, strict=True)
                self._dealt = {seat: id_ for seat, id_ in pairs if id_ is not None}
            else:  # not parsed, or stored before it kept the ids
                self._dealt = hand_players_by_seat(hand=hand)
        return self._dealt

    def dealt_in(self, seat: Seat) -> bool:
        """Whether this seat's player is dealt into the hand in progress."""
        return self.hand is not None and self.dealt.get(seat.number) == seat.player_id

    # What the command changes, written by `finish`.

    def seat_added(self, seat: Seat) -> None:
        self.seats.append(seat)
        self.seats.sort(key=lambda s: s.number)

    def seat_deleted(self, seat: Seat) -> None:
        self.seats.remove(seat)
        self._seat_fields.pop(id(seat), None)
        seat.delete()

    def save_seat(self, seat: Seat, *fields: str) -> None:
        _, pending = self._seat_fields.setdefault(id(seat), (seat, set()))
        pending.update(fields)

    def save_table(self, *fields: str) -> None:
        self._table_fields.update(fields)

    def hand_begin(self, *, hand: Hand, state: HandState, players: list[HandPlayer]) -> None:
        """The hand this command deals becomes the one it works on; it and who was dealt
        in are written with the command's other writes, at its end (the hand's id is
        taken beforehand: rows.hand_numbers_next)."""
        self._hand, self._state = hand, state
        self._dealt = {player.seat: player.user_id for player in players}
        self._hand_players = players
        self._hand_changed = self._state_changed = True

    def save_hand(self) -> None:
        """Save the hand (its state included) at the end of the command."""
        self._hand_changed = True

    def insert(self, instances: list[models.Model]) -> None:
        """Rows of one model to insert with the command's other writes, at its end (this
        command does not read them back)."""
        if instances:
            self._inserts.append(instances)

    def apply(self, action: Action) -> list[Event]:
        """Apply an action to the hand (the engine may refuse it: `IllegalAction`)."""
        events = apply_in_place(self.state, action)
        self.hand_events(events)
        return events

    def hand_events(self, events: list[Event]) -> None:
        """Log the engine's events in the hand's record and emit each."""
        hand = self._hand
        if hand is None:
            raise ValueError("hand events need a hand")
        self._hand_changed = self._state_changed = True
        for event in events:
            hand.events_logged += 1
            self._log.append(
                HandEvent(hand=hand, seq=hand.events_logged, type=event.type, data=event.to_dict())
            )
            self.emit(HandEventMessage(hand=hand.id, event=event))
            if isinstance(event, DealtBoard) and event.run == 1:
                # The hand helper: each player still in learns what they hold now (on
                # the first run's board, the one the state keeps, when run twice).
                for seat, best in best_hands_after(self.state, event.street).items():
                    if seat in self.dealt:
                        self.note(user_id=self.dealt[seat], note=BestHandNote(best_hand=best))

    def emit(self, message: TableEvent) -> None:
        """Send `message` to the table, each viewer seeing the form its rule allows."""
        self._messages.append((message.public(), message.private(self.dealt)))

    def note(self, *, user_id: int, note: Note) -> None:
        """Add `note` to what one player sees of the latest message (nobody else learns
        of it, not even that there was a note)."""
        if not self._messages:
            return
        public, private = self._messages[-1]
        private[user_id] = {**private.get(user_id, public), **note.fields()}

    def finish(self) -> None:
        """Write what the command changed, as the last thing of its transaction: the
        writes carry the COMMIT when the transaction is its own (`rows.Writes.send`,
        not inside a test's); its messages go out after the commit."""
        writes = rows.Writes()
        hand = self._hand
        if self._hand_changed and hand is not None:
            if self._state_changed and self._state is not None:
                hand.state = self._state.to_dict()
            if self._hand_players:  # dealt by this command
                writes.insert([hand], with_pk=True)
                writes.insert(self._hand_players)
            else:
                writes.update(hand, HAND_FIELDS_CHANGING)
        for seat, fields in self._seat_fields.values():
            writes.update(seat, sorted(fields))
        writes.insert(self._log)
        for instances in self._inserts:
            writes.insert(instances)
        if self._messages:
            first = self.table.event_seq + 1
            messages = [
                TableMessage(version=first + k, public=public, private=private)
                for k, (public, private) in enumerate(self._messages)
            ]
            self.table.event_seq += len(messages)
            self.save_table("event_seq")
            if self.table.failure_count and self.moves_on:
                # The table moved on: its run of failures is over.
                self.table.failure_count = 0
                self.save_table("failure_count")
            publish_on_commit(table_id=self.table.id, messages=messages)
        if self._table_fields:
            writes.update(self.table, sorted(self._table_fields))
        writes.send(commit=True)


def table_command(func: Callable[Concatenate[TableCommand, P], R]) -> Callable[P, R]:
    """Run `func` as a table command on the table of keyword `table_id` (see above): a
    player's or an admin's, whose failures count only inside the room's work it does."""
    return _envelope(func, room=False)


def room_command(func: Callable[Concatenate[TableCommand, P], R]) -> Callable[P, R]:
    """Run `func` as a table command that is the room's own work from its lock to its
    COMMIT (the timer loop's): any failure of it counts toward pausing the table."""
    return _envelope(func, room=True)


def _envelope(func: Callable[Concatenate[TableCommand, P], R], *, room: bool) -> Callable[P, R]:
    name = func.__qualname__

    @functools.wraps(func)
    def command(*args: P.args, **kwargs: P.kwargs) -> R:
        table_id = kwargs.pop("table_id")
        outermost = not transaction.get_connection().in_atomic_block
        cmd: TableCommand | None = None
        try:
            with transaction.atomic(durable=True):
                cmd = TableCommand(table_lock(table_id=table_id))  # type: ignore[arg-type]
                result = func(cmd, *args, **kwargs)
                # The writes (and the COMMIT) of the room's work are the room's too.
                done = cmd.room_work_done
                with cmd.room_work(done) if done else contextlib.nullcontext():
                    cmd.finish()
        except REFUSALS:
            raise
        except OperationalError as exc:
            if lock_not_available(exc):
                raise TableBusy(
                    "The table is busy; nothing was done. Send the command again in a moment."
                ) from exc
            raise  # an outage, as below
        except OUTAGES:
            raise
        except Exception as exc:
            work = cmd.room_failure(exc) if cmd is not None else None
            if not room and work is None:
                # The player's part of a command: theirs alone, never the table's.
                logger.exception(
                    "table %s: %s failed (not counted: not the room's work)", table_id, name
                )
                raise
            what = name if work is None else f"{name} ({work})"
            logger.exception("table %s: %s failed", table_id, what)
            if outermost and isinstance(table_id, int):
                table_failure_record(table_id=table_id, command=what, error=exc)
            raise
        return result

    return command


@dataclass(frozen=True)
class Unchanged(Generic[R]):
    """What a command that would change nothing answers (see `unchanged_before_lock`)."""

    result: R


def unchanged_before_lock(
    unchanged: Callable[P, Unchanged[R] | None],
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Answer a table command that would change nothing without its lock, when a read
    before the lock can tell: `unchanged`, called with the command's own arguments,
    returns `Unchanged(answer)` then, and None to run the command. The command's body
    checks again under the lock (the table may have moved meanwhile): this is only a
    shortcut, for commands a client may repeat at will (see above)."""

    def decorate(command: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(command)
        def service(*args: P.args, **kwargs: P.kwargs) -> R:
            found = unchanged(*args, **kwargs)
            return command(*args, **kwargs) if found is None else found.result

        return service

    return decorate


def lock_not_available(exc: BaseException) -> bool:
    """Whether `exc` is a lock waited for past the command's lock timeout (the statement
    and the savepoint or transaction it ran in are aborted; nothing else is)."""
    return isinstance(exc, OperationalError) and isinstance(
        exc.__cause__, psycopg.errors.LockNotAvailable
    )


def table_failure_record(*, table_id: int, command: str, error: Exception) -> None:
    """Count a failure of the room's work on the table; pause the table at the second
    in a row.

    Runs in its own transaction (the failing one has rolled back). Never raises: the
    caller re-raises the original error, which is the one worth seeing.
    """
    try:
        with transaction.atomic():
            table = Table.objects.select_for_update(no_key=True).filter(pk=table_id).first()
            if table is None:
                return
            table.failure_count += 1
            fields = ["failure_count"]
            if table.failure_count >= FAILURES_BEFORE_PAUSE and not table.paused_reason:
                table.paused_reason = (
                    f"{command} failed {table.failure_count} times in a row, last with "
                    f"{type(error).__name__}: {error}"
                )[:500]
                fields.append("paused_reason")
                if table.status == TableStatus.OPEN:
                    # Not a TableCommand: its publishing would clear the count just raised.
                    table.status = TableStatus.PAUSED
                    table.event_seq += 1
                    fields += ["status", "event_seq"]
                    paused = TableStatusChanged(status=table.status).public()
                    publish_on_commit(
                        table_id=table.id,
                        messages=[TableMessage(version=table.event_seq, public=paused)],
                    )
                logger.error("table %s paused: %s", table_id, table.paused_reason)
            table.save(update_fields=fields)
    except (DatabaseError, *OUTAGES):
        logger.exception("table %s: the failure of %s could not be recorded", table_id, command)


def table_failures_clear(cmd: TableCommand) -> None:
    """Forget the table's failures (an admin re-opened it)."""
    table = cmd.table
    if table.failure_count or table.paused_reason:
        table.failure_count = 0
        table.paused_reason = ""
        cmd.save_table("failure_count", "paused_reason")
