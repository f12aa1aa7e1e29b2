"""The one envelope every table command runs in (STYLE §4, after Zulip's `do_*` actions).

`@table_command` turns a function `f(cmd: TableCommand, **fields)` into the service
`f(table_id=..., **fields)`. Each call:

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

A web process that ran the last command on a table keeps a copy of the rows it left
(tables/row_cache.py), and its next command on the table starts from that copy instead
of reading (step 2 without its round trip). The copy is checked under the table's lock
before anything it decided is written: its writes' query first locks the table row and
fails unless every row read has the version copied (`rows.check_statements`); a body
that needs the database before then (a chip movement) has the check run first, on its
own. If the check fails, or the body failed on the copy before it was checked (a
refusal included: the copy may be what refused), nothing was written, and the command
runs again on the rows read. A copy is left only by a command whose instances hold what
it wrote (`TableCommand.rows_copy`), and whose rows were written only if still as read
(`rows.Writes.update`'s version: a row written meanwhile by someone who did not lock the
table, an operator in psql, would otherwise be merged with the command's writes, and the
copy miss what they wrote; the command then runs again, and at last as without copies).

The envelope also keeps one broken table from hurting the room:

* A refusal (`TableError`, `CashierError`) is the command working as designed: it
  changes nothing, and neither counts as a failure nor clears one.
* A lock not free within `TABLE_LOCK_TIMEOUT_MS` (the table's row held by a stuck
  transaction, say) is a refusal too, `TableBusy`: the command gives up rather than wait
  for ever, and with it the thread it runs on, which serves the commands of every table
  on its web process (or a timer pass, which serves every table's timeouts).
* A database, Redis or broker outage is not the table's fault either: pausing every
  table during a restart of Redis would stop the room for no reason. It is re-raised
  untouched.
* Nor is a value the database refuses (`DataError`: a NUL in a string, say) that the
  checks let through: it came with the command, and counting it would let any viewer
  pause a table by sending it twice. It is re-raised untouched (the consumer answers
  `malformed`).
* Any other exception is a bug that the same command will most likely hit again (a
  hand the engine cannot move on, say). It is logged with the table id and counted on
  the table, in a fresh transaction once the failing one rolled back; at
  `FAILURES_BEFORE_PAUSE` in a row the table is paused with a reason that the admin and
  /healthz show. A command that moves the table on (it published something) clears the
  count (not the reason: an admin re-opens the table, see `table_failures_clear`). Chat
  and a connection dropped or back publish without moving it on (`moves_on` off): the
  players asking why a table is stuck must not keep it from being paused.

Commands never nest: the transaction is durable, so calling one inside another
transaction is an error (except inside a test's own transaction, which Django allows).
"""

import contextlib
import functools
import logging
from collections.abc import Callable, Collection
from typing import Concatenate, ParamSpec, TypeVar

import psycopg.errors
import redis.exceptions
from django.conf import settings
from django.db import (
    DatabaseError,
    DataError,
    InterfaceError,
    OperationalError,
    models,
    transaction,
)
from kombu.exceptions import OperationalError as BrokerError

from accounts.models import User
from cashier.exceptions import CashierError
from poker_room.postgres import prepared
from tables import row_cache, rows
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

    def __init__(
        self,
        locked: rows.Locked,
        *,
        before: rows.RowsCopy | None = None,
        check: rows.Check | None = None,
    ) -> None:
        """`before`: the rows as read (a copy is wanted of them after: `rows_copy`).
        `check`: the rows are a copy (tables/row_cache.py), to be checked before anything
        else reaches the database (`queries`)."""
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
        self._before = before
        self._check = check
        # Queries sent by the command's body (not its read or its writes): what they
        # wrote, the instances may not hold.
        self._queries = 0
        self._own_query = False
        self._xid: str | None = None  # the transaction's, once its writes are sent

    # The copy of the rows (tables/row_cache.py): checked before any query of the body.

    @property
    def checked(self) -> bool:
        """Whether what the command read is known to be the database's (not a copy, or
        a copy checked)."""
        return self._check is None

    def queries(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        """Django's execute wrapper for the command (`connection.execute_wrapper`): counts
        the body's queries, and checks a copy of the rows before the first."""
        if not self._own_query:
            self._queries += 1
            self.check_first()
        return execute(sql, params, many, context)

    def check_first(self) -> None:
        """Check the copy of the rows, if not yet, before the query about to be sent (run
        by `queries`, and by `prepared.execute` before it makes up its query)."""
        if self._check is None:
            return
        check, self._check = self._check, None
        self._own_query = True
        try:
            rows.check_run(check)
        finally:
            self._own_query = False

    def _version_of(self, instance: models.Model) -> str | None:
        """The version a row is written only if still at, when a copy of the rows is to be
        made after (none else: a body's own queries may have written it since)."""
        if self._before is None or self._queries:
            return None
        versions = self._before.versions
        if isinstance(instance, Table):
            return versions.table
        if isinstance(instance, Hand):
            return versions.hand[1] if versions.hand and versions.hand[0] == instance.pk else None
        return next((v[1] for v in versions.seats if v[0] == instance.pk), None)

    def rows_copy(self) -> rows.RowsCopy | None:
        """The rows as this command left them (once committed), for the next command on
        the table; None unless the instances hold them: the body sent no query of its own
        (whose writes they would not hold), dealt no hand, and changed no field it did
        not write. What it wrote has the version of its transaction (`_xid`)."""
        before, hand, xid = self._before, self.hand, self._xid
        if before is None or self._queries or self._hand_players:
            return None
        after = rows.rows_copy(self.table, self.seats, hand, self.top_up_orders, before.versions)
        if after is None or len(after.seats) != len(before.seats):
            return None
        if xid is None and (self._table_fields or self._seat_fields or self._hand_changed):
            return None  # (written in a test's transaction)
        written = _attnames(Table, self._table_fields)
        if rows.changed_unwritten(before.table, after.table, Table, written):
            return None
        if after.stake_level != before.stake_level:
            return None
        seat_fields = {seat.pk: fields for seat, fields in self._seat_fields.values()}
        seat_versions = []
        for seat, (values, *player), (old_values, *old_player), versions in zip(
            self.seats, after.seats, before.seats, before.versions.seats, strict=True
        ):
            fields = seat_fields.get(seat.pk)
            if seat.pk != versions[0] or player != old_player:  # (its player, their order)
                return None
            if rows.changed_unwritten(old_values, values, Seat, _attnames(Seat, fields or ())):
                return None
            seat_versions.append(versions if fields is None else (seat.pk, xid, *versions[2:]))
        hand_version = None
        if hand is not None:
            if before.hand is None or before.versions.hand is None:
                return None
            written = _attnames(Hand, HAND_FIELDS_CHANGING) if self._hand_changed else set()
            if rows.changed_unwritten(before.hand, after.hand, Hand, written):
                return None
            hand_version = (hand.pk, xid) if self._hand_changed else before.versions.hand
        return after._replace(
            versions=rows.RowVersions(
                table=xid if self._table_fields else before.versions.table,
                stake_level=before.versions.stake_level,
                seats=tuple(seat_versions),
                hand=hand_version,
            )
        )

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
                writes.update(hand, HAND_FIELDS_CHANGING, version=self._version_of(hand))
        for seat, fields in self._seat_fields.values():
            writes.update(seat, sorted(fields), version=self._version_of(seat))
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
            writes.update(
                self.table, sorted(self._table_fields), version=self._version_of(self.table)
            )
        check, self._check = self._check, None
        self._own_query = True
        try:
            copying = self._before is not None and not self._queries
            self._xid = writes.send(commit=True, check=check, xid=copying)
        finally:
            self._own_query = False


def table_command(func: Callable[Concatenate[TableCommand, P], R]) -> Callable[P, R]:
    """Run `func` as a table command on the table of keyword `table_id` (see above)."""

    @functools.wraps(func)
    def command(*args: P.args, **kwargs: P.kwargs) -> R:
        table_id = kwargs.pop("table_id")
        outermost = not transaction.get_connection().in_atomic_block
        # A copy of the rows is worth making, and trying, only for a transaction of the
        # command's own (not a test's) on a table whose feed this process reads.
        copying = outermost and row_cache.following(table_id)
        copy = row_cache.take(table_id) if copying else None  # type: ignore[arg-type]
        try:
            if copy is not None:
                with contextlib.suppress(_Again):
                    return _command_run(func, table_id, args, kwargs, copy=copy)
            if copying:
                with contextlib.suppress(_Again):
                    return _command_run(func, table_id, args, kwargs, copying=True)
            # Last: as without copies (a row written meanwhile by someone who did not lock
            # the table, at every try: its writes are merged with this command's).
            return _command_run(func, table_id, args, kwargs)
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
        except DataError:
            raise
        except Exception as exc:
            logger.exception("table %s: %s failed", table_id, func.__qualname__)
            if outermost and isinstance(table_id, int):
                table_failure_record(table_id=table_id, command=func.__qualname__, error=exc)
            raise

    return command


class _Again(Exception):
    """A command that worked on a copy of the rows failed before the copy was checked, or
    the check failed; or a row it wrote had changed since it was read (`RowsChanged`).
    Nothing was written: it runs again, on the rows read."""


def _command_run(
    func: Callable[..., R],
    table_id: int,
    args: tuple,  # type: ignore[type-arg]
    kwargs: dict,  # type: ignore[type-arg]
    *,
    copy: rows.RowsCopy | None = None,
    copying: bool = False,
) -> R:
    """One run of the command: on the `copy` of the rows, or on the rows read (`copying`:
    and a copy of them is wanted). Keeps the copy of the rows it leaves, once committed.
    `_Again` when it is to run again (see there); a run without copies never is."""
    connection = transaction.get_connection()
    cmd: TableCommand | None = None
    try:
        with transaction.atomic(durable=True):
            if copy is not None:
                cmd = TableCommand(
                    rows.locked_of(copy),
                    before=copy,
                    check=rows.check_statements(
                        table_id, copy.versions, lock_timeout_ms=settings.TABLE_LOCK_TIMEOUT_MS
                    ),
                )
            else:
                locked = table_lock(table_id=table_id)
                before = rows.rows_copy(*locked) if copying else None
                cmd = TableCommand(locked, before=before)
            hook = prepared.before_query.set(cmd.check_first)
            try:
                with connection.execute_wrapper(cmd.queries):
                    result = func(cmd, *args, **kwargs)
                    cmd.finish()
            finally:
                prepared.before_query.reset(hook)
    except rows.RowsChanged as exc:
        raise _Again from exc
    except OUTAGES:
        raise  # the same again would wait as long again
    except Exception as exc:
        if copy is not None and (cmd is None or not cmd.checked):
            raise _Again from exc
        raise
    if (after := cmd.rows_copy()) is not None:
        row_cache.put(cmd.table.pk, after, event_seq=cmd.table.event_seq)
    return result


def _attnames(model: type[models.Model], names: Collection[str]) -> set[str]:
    return {model._meta.get_field(name).attname for name in names}


def lock_not_available(exc: BaseException) -> bool:
    """Whether `exc` is a lock waited for past the command's lock timeout (the statement
    and the savepoint or transaction it ran in are aborted; nothing else is)."""
    return isinstance(exc, OperationalError) and isinstance(
        exc.__cause__, psycopg.errors.LockNotAvailable
    )


def table_failure_record(*, table_id: int, command: str, error: Exception) -> None:
    """Count a failed command on the table; pause the table at the second in a row.

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
