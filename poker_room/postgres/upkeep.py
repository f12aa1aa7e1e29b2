"""The room's own vacuum and analyze, for a PostgreSQL whose autovacuum is off.

PostgreSQL keeps its tables in shape by itself: autovacuum analyzes a table once enough
of its rows changed (the planner's statistics) and vacuums it once enough are dead or
new. With autovacuum off (the development machine's server, where CI and the load tests
run), none of that happens, and the room pays for it on every command:

* The statistics stay those of an empty table. Every table command runs prepared
  statements (tables/rows.py), and PostgreSQL's foreign-key checks keep plans of their
  own; a plan made while a table was small reads it whole (a sequential scan), and with
  nothing to invalidate it that plan stays for the connection's life. In a 200-table load
  test, every hand event inserted checked its hand by reading every hand the room had
  dealt, and the hand in progress, the timer loop's turns due and the hand's own update
  did the same: PostgreSQL's CPU a decision grew with the room's age.
* Dead row versions are never removed (only pruned within a page when one is read), so
  the tables every command updates (tables, seats) keep growing on disk.

`upkeep_run` does for the room's database what autovacuum would have done by now: with
the server's own thresholds (`autovacuum_analyze_threshold`, `..._scale_factor` and their
vacuum and insert counterparts: 50 rows + 10 % and so on by default), it analyzes the
tables changed enough since their last analyze and vacuums those with enough dead or
newly inserted rows. Beat runs it every settings.DATABASE_UPKEEP_SECONDS (60, as often as
autovacuum visits a database by default): the statistics follow a table as it grows, and
each analyze makes the statements on the table plan afresh at their next run. With
autovacuum on it does nothing: the server does it better (on its own workers, with cost
limits). Neither command blocks the room's reads or writes (their lock excludes only
another vacuum or analyze of the same table); one that would wait for such a lock longer
than `LOCK_TIMEOUT_MS` is skipped until the next run, and a table that fails is logged
and skipped: the others are still done.
"""

import logging
from dataclasses import dataclass
from typing import Any, Literal

from django.db import DatabaseError, connection
from psycopg import sql

logger = logging.getLogger(__name__)

LOCK_TIMEOUT_MS = 1000

Action = Literal["vacuum", "analyze"]


@dataclass(frozen=True)
class Thresholds:
    """The server's autovacuum thresholds: rows, and a share of the table's rows."""

    vacuum: int = 50
    vacuum_scale: float = 0.2
    insert: int = 1000
    insert_scale: float = 0.2
    analyze: int = 50
    analyze_scale: float = 0.1


@dataclass(frozen=True)
class TableCounts:
    """One table's counts, as pg_stat_user_tables and pg_class hold them."""

    schema: str
    name: str
    rows: float  # pg_class.reltuples: -1 (or 0) before its first vacuum or analyze
    dead: int
    inserted_since_vacuum: int
    changed_since_analyze: int


def upkeep_due(table: TableCounts, limits: Thresholds) -> Action | None:
    """What autovacuum would do to the table now: "vacuum" (which analyzes too when that
    is due as well), "analyze", or None."""
    rows = max(table.rows, 0.0)
    vacuum = table.dead > limits.vacuum + limits.vacuum_scale * rows or (
        table.inserted_since_vacuum > limits.insert + limits.insert_scale * rows
    )
    analyze = table.changed_since_analyze > limits.analyze + limits.analyze_scale * rows
    if vacuum:
        return "vacuum"
    return "analyze" if analyze else None


@dataclass(frozen=True)
class UpkeepReport:
    autovacuum: bool  # the server's on: nothing was done
    vacuumed: tuple[str, ...] = ()
    analyzed: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # failed or waited too long: next run


def upkeep_run() -> UpkeepReport:
    """Vacuum and analyze the database's tables that autovacuum would have by now, when the
    server's autovacuum is off. Outside any transaction (VACUUM cannot run in one)."""
    if connection.in_atomic_block:
        raise RuntimeError("upkeep_run runs outside a transaction (VACUUM cannot run in one)")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('autovacuum') = 'on' AND current_setting('track_counts') = 'on'"
        )
        if cursor.fetchone()[0]:
            return UpkeepReport(autovacuum=True)
        limits = _thresholds(cursor)
        tables = _counts(cursor)
    done: dict[Action, list[str]] = {"vacuum": [], "analyze": []}
    skipped = []
    for table in tables:
        action = upkeep_due(table, limits)
        if action is None:
            continue
        name = f"{table.schema}.{table.name}"
        try:
            _run(action, table)
        except DatabaseError as exc:
            logger.warning("upkeep: %s of %s skipped (%s)", action, name, exc)
            skipped.append(name)
        else:
            done[action].append(name)
    if done["vacuum"] or done["analyze"]:
        logger.info("upkeep: vacuumed %s; analyzed %s", done["vacuum"], done["analyze"])
    return UpkeepReport(
        autovacuum=False,
        vacuumed=tuple(done["vacuum"]),
        analyzed=tuple(done["analyze"]),
        skipped=tuple(skipped),
    )


def _thresholds(cursor: Any) -> Thresholds:
    cursor.execute(
        "SELECT current_setting('autovacuum_vacuum_threshold')::int,"
        " current_setting('autovacuum_vacuum_scale_factor')::float8,"
        " current_setting('autovacuum_vacuum_insert_threshold')::int,"
        " current_setting('autovacuum_vacuum_insert_scale_factor')::float8,"
        " current_setting('autovacuum_analyze_threshold')::int,"
        " current_setting('autovacuum_analyze_scale_factor')::float8"
    )
    return Thresholds(*cursor.fetchone())


def _counts(cursor: Any) -> list[TableCounts]:
    # The counts are the server's, kept as statements end (and flushed at most a second
    # later): a run sees what the room did until a moment ago.
    cursor.execute(
        "SELECT s.schemaname, s.relname, c.reltuples, s.n_dead_tup, s.n_ins_since_vacuum,"
        " s.n_mod_since_analyze FROM pg_stat_user_tables AS s"
        " JOIN pg_class AS c ON c.oid = s.relid ORDER BY s.schemaname, s.relname"
    )
    return [TableCounts(*row) for row in cursor.fetchall()]


def _run(action: Action, table: TableCounts) -> None:
    command = "VACUUM (ANALYZE) {}" if action == "vacuum" else "ANALYZE {}"
    statement = sql.SQL(command).format(sql.Identifier(table.schema, table.name))
    with connection.cursor() as cursor:
        # For the session (VACUUM runs outside a transaction), and set back after: the
        # connection may go back to a pool.
        cursor.execute("SELECT set_config('lock_timeout', %s, false)", [f"{LOCK_TIMEOUT_MS}ms"])
        try:
            cursor.execute(statement.as_string(cursor.connection))
        finally:
            cursor.execute("RESET lock_timeout")
