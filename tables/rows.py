"""The statements every table command runs, written out once instead of compiled each time.

Every command on a table (an action, a timeout, a deal) reads the table under its lock,
its seats with their players and the hand in progress, and writes back what it changed:
the hand (a deal's new hand and its players), the seats, the hand's events and the
table's stream version. Through the QuerySet API each of these statements was built
again by the ORM's compiler on every call: under load the ORM took about a quarter of a
web process's CPU, its compiler alone a tenth (py-spy), more than PostgreSQL spent
running the statements.

Here the SQL of each statement is made once per model and field list, from the models'
own metadata, and cached. Rows become model instances after the fields' own database
converters, as the ORM's reads do: the instance `Model.from_db` makes, its fields set
straight into its __dict__ (`_Columns.instance`); writes prepare each value with
its field (`pre_save`, `get_db_prep_save`), as `Model.save` does, and a command's writes
go in one query (`Writes`). The instances are
ordinary ones: the rest of the code saves them, follows their relations and compares
them as before. The timer loop's selection of what is due (`timers_due`), run at every
one of its passes, lives here too. Only these few hot statements live here; everything
else uses the ORM.

Each statement is also prepared on the server, once per connection, and run by name
(poker_room/postgres/prepared.py): planning them again at every command was about half
of PostgreSQL's CPU for the lock's read (bench/prepared.py).
"""

import datetime
import functools
import inspect
from collections.abc import Callable, Collection, Sequence
from typing import Any, NamedTuple

import psycopg.errors
from django.db import (
    DEFAULT_DB_ALIAS,
    DatabaseError,
    DataError,
    connection,
    models,
)
from django.db.models.base import ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.signals import post_init, pre_init

from poker_room.postgres import prepared
from tables.models import (
    AutoTopUp,
    Hand,
    HandPlayer,
    HandStatus,
    PlayerSettings,
    Seat,
    Table,
    TableStatus,
)

Converter = Callable[[Any, Any, Any], Any]

# The SQL below is put together from the models' table and column names, quoted, never
# from a value: every value is a parameter (hence the `noqa: S608`).

# The range of a bigint key: PostgreSQL refuses a parameter outside it (the ORM answers
# "no such row" for one), and an id comes from a URL or a client.
_ID_MIN, _ID_MAX = -(2**63), 2**63 - 1


class _Columns:
    """How one model's rows are read: its columns (all, or those named in `only`, the
    others deferred as `QuerySet.only` defers them) and the converters of each."""

    def __init__(self, model: type[models.Model], only: tuple[str, ...] = ()) -> None:
        quote = connection.ops.quote_name
        table = quote(model._meta.db_table)
        fields = [f for f in model._meta.concrete_fields if not only or f.attname in only]
        if only and len(fields) != len(only):
            raise ValueError(f"{model.__name__} has no column for some of {only}")
        self.model = model
        self.attnames = [f.attname for f in fields]
        # Whether an instance can be made by setting its fields' entries (`instance`):
        # Django's own __init__ (none of a mixin's either), from_db and __setattr__, and
        # every field set as an entry of the instance's __dict__, not through a
        # descriptor of its own (a file field's, say; a foreign key's id only clears a
        # cached object, which a new instance has not).
        self.plain = (
            all(c in (models.Model, object) or "__init__" not in vars(c) for c in model.__mro__)
            and model.from_db.__func__ is models.Model.from_db.__func__
            and model.__setattr__ is object.__setattr__
            and all(_set_in_dict(model, name) for name in self.attnames)
        )
        self.select = ", ".join(f"{table}.{quote(f.column)}" for f in fields)
        self.converters: list[tuple[int, list[Converter], Any]] = []
        for index, f in enumerate(fields):
            column = f.get_col(model._meta.db_table)
            # The column's converters, as the ORM's compiler asks for them.
            found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
            if found:
                self.converters.append((index, found, column))

    def instance(self, row: Sequence[Any], start: int = 0) -> models.Model:
        """The instance of the row's columns from `start` (as `select` lists them)."""
        values = list(row[start : start + len(self.attnames)])
        for index, converters, column in self.converters:
            for convert in converters:
                values[index] = convert(values[index], column, connection)
        if not self.plain or pre_init.receivers or post_init.receivers:
            return self.model.from_db(DEFAULT_DB_ALIAS, self.attnames, values)
        # What `Model.from_db` makes, without `Model.__init__`'s walk over every field,
        # its signals (none connected) and, for a deferred field, its DEFERRED marker: a
        # field is an entry of the instance's __dict__, a deferred one none.
        instance = self.model.__new__(self.model)
        instance._state = state = ModelState()
        state.adding, state.db = False, DEFAULT_DB_ALIAS
        instance.__dict__.update(zip(self.attnames, values, strict=True))
        return instance


def _set_in_dict(model: type[models.Model], attname: str) -> bool:
    descriptor = inspect.getattr_static(model, attname, None)
    return type(descriptor) is ForeignKeyDeferredAttribute or not hasattr(
        type(descriptor), "__set__"
    )


@functools.cache
def _columns(model: type[models.Model], only: tuple[str, ...] = ()) -> _Columns:
    return _Columns(model, only)


# What the commands read of a seated player: who they are, whether they may play
# (accounts.selectors.user_can_play) and the settings a deal takes. Not their password,
# names, e-mail or dates: a command reads every seat's player, and each column more was
# converted (a timestamp parsed) and set on an instance at every command. A field left
# out still reads as before, with a query of its own (`QuerySet.only`).
SEAT_PLAYER_FIELDS = (
    "id",
    "username",
    "is_active",
    "is_staff",
    "is_superuser",
    "auto_muck",
    "chop_blinds",
    "four_color_deck",
)


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


class Locked(NamedTuple):
    """A table under its command's lock, with what (nearly) every command reads of it."""

    table: Table
    seats: list[Seat]
    hand: Hand | None
    # The seated players' auto top-up orders (`PlayerSettings`, those not off), by user
    # id: a settled hand carries them out.
    top_up_orders: dict[int, PlayerSettings]


def table_locked(table_id: Any, *, lock_timeout_ms: int) -> Locked | None:
    """The table row, locked against other commands (FOR NO KEY UPDATE), with its stake
    level, its seats with their players and its hand in progress; None when there is no
    such table. The caller must be inside a transaction.

    Every lock the transaction waits for from here on, this one first, is waited for at
    most `lock_timeout_ms` (PostgreSQL's `lock_timeout`, for the rest of the
    transaction); past it the statement fails with `LockNotAvailable` (an
    `OperationalError`) and the transaction is aborted.

    One query of four statements, run in order: the seats and the hand are read once
    the lock is held (each statement sees what was committed before it started), as
    separate queries would, for one round trip instead of four."""
    try:
        pk = Table._meta.pk.get_prep_value(table_id)
    except (ValueError, TypeError):
        return None
    if not isinstance(pk, int) or not _ID_MIN <= pk <= _ID_MAX:
        return None
    with connection.cursor() as cursor:
        prepared.execute(cursor, _locked_sql(pk), first=(_LOCK_TIMEOUT_SQL, [str(lock_timeout_ms)]))
        row = cursor.fetchone()
        cursor.nextset()
        seat_rows = cursor.fetchall()
        cursor.nextset()
        hand_row = cursor.fetchone()
    if row is None:
        return None
    tables, stakes = _columns(Table), _columns(Table.stake_level.field.related_model)
    table = tables.instance(row)
    Table.stake_level.field.set_cached_value(table, stakes.instance(row, len(tables.attnames)))
    seats, orders = _seats_of(seat_rows, table)
    return Locked(
        table=table,
        seats=seats,
        hand=None if hand_row is None else _hand_of(hand_row, table),
        top_up_orders=orders,
    )


# set_config(..., true) is SET LOCAL as a function: it takes a parameter, as SET does not.
_LOCK_TIMEOUT_SQL = "SELECT set_config('lock_timeout', %s, true)"


def _locked_sql(pk: int) -> list[tuple[str, list[Any]]]:
    return [(_table_locked_sql(), [pk]), (_seats_sql(), [pk]), (_hand_sql(), [pk])]


@functools.cache
def _table_locked_sql() -> str:
    where = f"{_quote(Table._meta.pk.column)} = %s"
    lock = f"FOR NO KEY UPDATE OF {_quote(Table._meta.db_table)}"
    return _select_with_related(Table.stake_level.field, where, lock)


def _select_with_related(
    foreign_key: models.ForeignKey,
    where: str,
    rest: str,
    only: tuple[str, ...] = (),
    *,
    also: tuple[str, str] = ("", ""),
) -> str:
    """SELECT a model's columns and those of the row its `foreign_key` names (`only`
    these, if given), `where` (on the model's columns) holds, then `rest` (ORDER BY,
    FOR UPDATE). `also`: more columns, and the join they come from."""
    model, related = foreign_key.model, foreign_key.related_model
    table, other = _quote(model._meta.db_table), _quote(related._meta.db_table)
    columns, join = also
    return (
        f"SELECT {_columns(model).select}, {_columns(related, only).select}{columns} "  # noqa: S608
        f"FROM {table} INNER JOIN {other} ON {other}.{_quote(related._meta.pk.column)}"
        f" = {table}.{_quote(foreign_key.column)}{join} WHERE {table}.{where} {rest}"
    )


def seats_with_players(table: Table) -> list[Seat]:
    """The table's seats by number, each with its player loaded."""
    with connection.cursor() as cursor:
        prepared.execute(cursor, [(_seats_sql(), [table.pk])])
        return _seats_of(cursor.fetchall(), table)[0]


def _seats_of(
    rows: Sequence[Sequence[Any]], table: Table
) -> tuple[list[Seat], dict[int, PlayerSettings]]:
    seats, users = _columns(Seat), _columns(Seat.player.field.related_model, SEAT_PLAYER_FIELDS)
    orders = _columns(PlayerSettings)
    after_user = len(seats.attnames) + len(users.attnames)
    result, ordered = [], {}
    for row in rows:
        seat = seats.instance(row)
        Seat.player.field.set_cached_value(seat, users.instance(row, len(seats.attnames)))
        Seat.table.field.set_cached_value(seat, table)
        result.append(seat)
        if row[after_user] is not None:  # the LEFT JOIN found the player's order
            order = orders.instance(row, after_user)
            ordered[order.user_id] = order  # type: ignore[attr-defined]
    return result, ordered  # type: ignore[return-value]


@functools.cache
def _seats_sql() -> str:
    """The seats by number, with their players and those players' auto top-up orders
    (none where it is off: `PlayerSettings` columns all NULL)."""
    seat, orders = _quote(Seat._meta.db_table), _quote(PlayerSettings._meta.db_table)
    where = f"{_quote(Seat.table.field.column)} = %s"
    order = f"ORDER BY {seat}.{_quote(Seat._meta.get_field('number').column)}"
    # The player's settings row only for an order to carry out: most players have none.
    ordered = (
        f" LEFT JOIN {orders} ON {orders}.{_column(PlayerSettings, 'user')}"
        f" = {seat}.{_column(Seat, 'player')}"
        f" AND {orders}.{_column(PlayerSettings, 'auto_top_up')} <> '{_plain(AutoTopUp.OFF)}'"
    )
    also = (f", {_columns(PlayerSettings).select}", ordered)
    return _select_with_related(Seat.player.field, where, order, SEAT_PLAYER_FIELDS, also=also)


def hand_in_progress(table: Table) -> Hand | None:
    """The table's hand in progress (its first, were there ever two), or None."""
    with connection.cursor() as cursor:
        prepared.execute(cursor, [(_hand_sql(), [table.pk])])
        row = cursor.fetchone()
    return None if row is None else _hand_of(row, table)


def _hand_of(row: Sequence[Any], table: Table) -> Hand:
    hand = _columns(Hand).instance(row)
    Hand.table.field.set_cached_value(hand, table)
    return hand  # type: ignore[return-value]


@functools.cache
def _hand_sql() -> str:
    hand = _quote(Hand._meta.db_table)
    # The status is written in, not a parameter: a prepared statement's plan for any
    # status could not use the index of the hands in progress (one row a table), and
    # would read every hand the table has dealt.
    in_progress = _plain(HandStatus.IN_PROGRESS.value)
    return (
        f"SELECT {_columns(Hand).select} FROM {hand} "  # noqa: S608
        f"WHERE {hand}.{_quote(Hand.table.field.column)} = %s "
        f"AND {hand}.{_quote(Hand._meta.get_field('status').column)} = '{in_progress}' "
        f"ORDER BY {hand}.{_quote(Hand._meta.pk.column)} LIMIT 1"
    )


class HandNumbers(NamedTuple):
    """What a deal numbers its hand with: the row's id (taken from the hands' sequence
    beforehand, so that the row can be written with the command's other writes), the
    hand's number at its table and the turn number its turns go on from."""

    id: int
    number: int
    last_turn: int


def hand_numbers_next(table_id: int) -> HandNumbers:
    """The id, number and turns of the table's next hand, in one statement.

    The number and turns go on from the last hand alone, read through
    `hand_unique_number` (one row however many hands the table has dealt): turns are
    numbered on from hand to hand and only grow within one, so the last hand holds the
    highest. (The maximum over all the table's hands read every one of them at each deal:
    a table's deals grew slower with its age.) The id is the sequence's next: one that
    is not used (the command fails) is a gap in the ids, as a failed insert leaves.
    """
    with connection.cursor() as cursor:
        prepared.execute(cursor, [(_hand_numbers_next_sql(), [table_id])])
        id_, number, turn = cursor.fetchone()
    return HandNumbers(id=id_, number=(number or 0) + 1, last_turn=turn or 0)


@functools.cache
def _hand_numbers_next_sql() -> str:
    table, number = _quote(Hand._meta.db_table), _column(Hand, "number")
    sequence = f"pg_get_serial_sequence('{table}', '{Hand._meta.pk.column}')"
    return (
        f"SELECT nextval({sequence}), last.{number}, last.{_column(Hand, 'turn_version')} "  # noqa: S608
        f"FROM (SELECT 1) AS one LEFT JOIN LATERAL (SELECT {number}, "
        f"{_column(Hand, 'turn_version')} FROM {table} WHERE {_column(Hand, 'table')} = %s "
        f"ORDER BY {number} DESC LIMIT 1) AS last ON TRUE"
    )


def hand_players_by_seat(hand: Hand) -> dict[int, int]:
    """Seat -> the user id dealt in there (the hand's `HandPlayer` rows)."""
    with connection.cursor() as cursor:
        prepared.execute(cursor, [(_hand_players_sql(), [hand.pk])])
        return dict(cursor.fetchall())


@functools.cache
def _hand_players_sql() -> str:
    seat, user = HandPlayer._meta.get_field("seat"), HandPlayer.user.field
    return (
        f"SELECT {_quote(seat.column)}, {_quote(user.column)} "  # noqa: S608
        f"FROM {_quote(HandPlayer._meta.db_table)} "
        f"WHERE {_quote(HandPlayer.hand.field.column)} = %s"
    )


# The timer loop's selection (tables/timers.py), run at every pass: several a second,
# and back to back while tables keep falling due. Through the QuerySet API each pass
# compiled its statements again (and PostgreSQL planned them again); prepared here, they
# run by name, both in one query.


class DueTurn(NamedTuple):
    table_id: int
    hand_id: int
    turn: int
    deadline: datetime.datetime


class DueDeal(NamedTuple):
    table_id: int
    due: datetime.datetime


def timers_due(until: datetime.datetime) -> tuple[list[DueTurn], list[DueDeal]]:
    """The turns whose deadline is at most `until` (of the hands in progress, by
    deadline), and the deals due by then (of the open tables not paused by failures, by
    when): what a pass of the timer loop may run, or wait for."""
    with connection.cursor() as cursor:
        prepared.execute(cursor, [(_due_turns_sql(), [until]), (_due_deals_sql(), [until])])
        turns = [DueTurn(*row) for row in cursor.fetchall()]
        cursor.nextset()
        deals = [DueDeal(*row) for row in cursor.fetchall()]
    return turns, deals


def tables_failing(table_ids: Collection[int]) -> set[int]:
    """Those of these tables that are paused by failures (`paused_reason` set)."""
    with connection.cursor() as cursor:
        prepared.execute(cursor, [(_tables_failing_sql(), [list(table_ids)])])
        return {row[0] for row in cursor.fetchall()}


@functools.cache
def _due_turns_sql() -> str:
    # Through `hand_one_in_progress_per_table` (the deadline has no index: an action's
    # update of its hand is then made in place).
    status = {"status": HandStatus.IN_PROGRESS.value}
    return _due_sql(Hand, ("table", "id", "turn_version"), status, "turn_deadline")


@functools.cache
def _due_deals_sql() -> str:
    # Through `table_next_hand_due`, whose condition this repeats.
    status = {"status": TableStatus.OPEN.value, "paused_reason": ""}
    return _due_sql(Table, ("id",), status, "next_hand_at")


def _due_sql(
    model: type[models.Model], fields: Sequence[str], equal: dict[str, str], deadline: str
) -> str:
    """SELECT the `fields` and the `deadline` of the model's rows whose fields are `equal`
    to these words and whose deadline is at most the parameter, by deadline. The words are
    written in, not parameters, for the prepared plan to use a partial index on them (see
    `_hand_sql`)."""
    due = _column(model, deadline)
    where = [f"{_column(model, name)} = '{_plain(word)}'" for name, word in equal.items()]
    return (
        f"SELECT {', '.join(_column(model, name) for name in fields)}, {due} "  # noqa: S608
        f"FROM {_quote(model._meta.db_table)} WHERE {' AND '.join(where)} "
        f"AND {due} <= %s ORDER BY {due}"
    )


@functools.cache
def _tables_failing_sql() -> str:
    table, pk = _quote(Table._meta.db_table), _column(Table, "id")
    return (
        f"SELECT {pk} FROM {table} WHERE {pk} = ANY(%s) "  # noqa: S608
        f"AND {_column(Table, 'paused_reason')} <> ''"
    )


def _column(model: type[models.Model], name: str) -> str:
    return _quote(model._meta.get_field(name).column)


def _plain(word: str) -> str:
    """A value written into SQL: a plain word (or none), with nothing to quote."""
    if word and not word.isidentifier():
        raise ValueError(f"cannot write {word!r} into SQL")
    return word


class Writes:
    """A command's writes, sent to PostgreSQL together in one `execute` when it ends.

    Each statement on its own paid the whole client path (Django's cursor wrapper,
    psycopg's cursor, a round trip) for a few microseconds of PostgreSQL's time: an
    action's hand, events and table row were three of an `act`'s eight. Client-side
    binding (Django's default with psycopg 3) sends several statements in one query.
    The statements run in the caller's transaction, in order: one that fails raises,
    and the transaction (with the statements before it) rolls back. An update checks in
    the SQL itself that it changed its row (`_update_sql`), so that the same query can
    end with the transaction's COMMIT (`send(commit=True)`): nothing is left to check
    once it has run.
    """

    def __init__(self) -> None:
        self._statements: list[tuple[str, list[Any]]] = []
        self._inserted: list[models.Model] = []

    def update(self, instance: models.Model, fields: Sequence[str]) -> None:
        """`instance.save(update_fields=fields)`, without signals (these models have no
        receivers): the values are read now, the row written at `send`."""
        sql, concrete = _update_sql(type(instance), tuple(fields))
        values = [f.get_db_prep_save(f.pre_save(instance, False), connection) for f in concrete]
        self._statements.append((sql, [*values, instance.pk]))

    def insert(self, instances: Sequence[models.Model], *, with_pk: bool = False) -> None:
        """`bulk_create(instances)` of one model as one statement (ids not read back):
        `with_pk`, the rows' ids as set on them (else the database's)."""
        if not instances:
            return
        model = type(instances[0])
        fields = _insert_fields(model, with_pk)
        values = [
            f.get_db_prep_save(f.pre_save(instance, True), connection)
            for instance in instances
            for f in fields
        ]
        self._statements.append((_insert_sql(model, len(instances), with_pk), values))
        self._inserted.extend(instances)

    def send(self, *, commit: bool = False) -> None:
        """Run the statements, in order, in one query (once: a `Writes` is one command's).

        `commit`: end the query with the transaction's COMMIT when that is what Django
        does next (the connection is in its outermost atomic block, which commits at its
        end); otherwise the block's end commits, as without it. That saves the commit's
        own round trip, a third of an action's queries and one of the waits of the
        thread that serves a web process's table commands; Django's commit at the
        block's end then finds the transaction over, and psycopg sends nothing. A COMMIT
        that fails (a deferred ledger check) fails the query, as it would have failed
        the block's end: the block rolls back and its on-commit hooks (the command's
        messages) are dropped. What it costs: the server commits as soon as it has run
        the query, so a process that dies, or loses its connection, while it waits for
        the answer may have committed work whose messages it never publishes (before,
        only while it waited for the COMMIT's own answer). Nothing is lost: the ledger
        and the table's stream are the database's, and viewers who see the gap in the
        stream's numbers ask for a snapshot.
        """
        if not self._statements:
            return
        last = "COMMIT" if commit and _commits_at_block_end(connection) else None
        with connection.cursor() as cursor:
            try:
                prepared.execute(cursor, self._statements, last=last)
            except DataError as exc:
                if _row_gone(exc):
                    # What Model.save says when update_fields matched no row.
                    raise DatabaseError("Save with update_fields did not affect any rows.") from exc
                raise
        for instance in self._inserted:
            instance._state.adding = False
            instance._state.db = connection.alias


def _commits_at_block_end(connection_: Any) -> bool:
    """Whether the connection is in its outermost atomic block (no savepoint open), one
    that commits at its end and may still: what Django would commit next."""
    return (
        connection_.in_atomic_block
        and connection_.commit_on_exit
        and not connection_.savepoint_ids
        and not connection_.needs_rollback
    )


def _row_gone(exc: DataError) -> bool:
    """Whether `exc` is an update's finding that its row is gone (`_update_sql`)."""
    cause = exc.__cause__
    return isinstance(cause, psycopg.errors.InvalidTextRepresentation) and _ROW_GONE in (
        cause.diag.message_primary or ""
    )


# An update that matched no row fails its query, with this in the error: the COMMIT after
# it must not run. The text is cast to an integer only then (the cast fails, naming it):
# a constant that fails, such as 1 / 0, would fail when the statement is planned.
_ROW_GONE = "the row to update is gone, rows matched:"


@functools.cache
def _update_sql(
    model: type[models.Model], fields: tuple[str, ...]
) -> tuple[str, list[models.Field]]:
    """The update of `fields` of one row by its key, which fails unless it changed that
    row (`_ROW_GONE`), and the fields."""
    concrete = [model._meta.get_field(name) for name in fields]
    assignments = ", ".join(f"{_quote(f.column)} = %s" for f in concrete)
    table, pk = _quote(model._meta.db_table), _quote(model._meta.pk.column)
    update = f"UPDATE {table} SET {assignments} WHERE {pk} = %s RETURNING 1"  # noqa: S608
    check = f"CASE count(*) WHEN 1 THEN 1 ELSE ('{_ROW_GONE} ' || count(*))::int END"
    return f"WITH changed AS ({update}) SELECT {check} FROM changed", concrete  # noqa: S608


def _insert_fields(model: type[models.Model], with_pk: bool) -> list[models.Field]:
    return [f for f in model._meta.concrete_fields if with_pk or not f.primary_key]


# One per model and number of rows: a command logs a few events, a deal a few players.
@functools.lru_cache(maxsize=64)
def _insert_sql(model: type[models.Model], rows: int, with_pk: bool) -> str:
    fields = _insert_fields(model, with_pk)
    columns = ", ".join(_quote(f.column) for f in fields)
    row = "(" + ", ".join(["%s"] * len(fields)) + ")"
    values = ", ".join([row] * rows)
    return f"INSERT INTO {_quote(model._meta.db_table)} ({columns}) VALUES {values}"  # noqa: S608
