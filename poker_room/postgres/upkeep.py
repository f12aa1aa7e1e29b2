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
vacuum and insert counterparts: 50 rows + 10 % and so on by default, a table's own
storage parameters first, none for a table whose autovacuum is turned off), it analyzes
the tables changed enough since their last analyze and vacuums those with enough dead or
newly inserted rows. Beat runs it every settings.DATABASE_UPKEEP_SECONDS (60, as often as
autovacuum visits a database by default): the statistics follow a table as it grows, and
each analyze makes the statements on the table plan afresh at their next run. With
autovacuum on it does nothing: the server does it better.

It runs on a connection of its own, opened for the run and closed after it: nothing it
sets (its timeouts, autovacuum's cost-based delay) reaches a pooled connection, whatever
interrupts it, and the caller's transaction is not its. One run at a time: a run that
finds another under way (a slow one still going when beat sends the next, or a second
worker) leaves it the work. The commands take only a lock that excludes another vacuum
or analyze of the same table, or a change of its schema (`migrate`); one that waits for
its lock longer than `LOCK_TIMEOUT_MS`, or runs longer than `STATEMENT_TIMEOUT_MS`, is
given up until the next run, as is a table that fails (logged): the others are still
done. A vacuum does not shorten the table's file: that step's lock would stop the room's
commands on the table for a moment.
"""

import logging
from dataclasses import dataclass, replace
from typing import Any, Literal

import psycopg
from psycopg import sql

from poker_room.postgres.sessions import session_of_its_own

logger = logging.getLogger(__name__)

LOCK_TIMEOUT_MS = 1000
STATEMENT_TIMEOUT_MS = 300_000
# The session advisory lock held by the run under way ("upkeep" in ASCII): it ends with
# the run's connection, however the run ends.
RUN_LOCK_KEY = 0x75706B656570
UPKEEP_SESSION = "poker_room upkeep"

Action = Literal["vacuum", "analyze"]


@dataclass(frozen=True)
class Thresholds:
    """The server's autovacuum thresholds: rows, and a share of the table's rows. An
    insert threshold of -1 turns vacuums for inserted rows off, as for autovacuum."""

    vacuum: int = 50
    vacuum_scale: float = 0.2
    insert: int = 1000
    insert_scale: float = 0.2
    analyze: int = 50
    analyze_scale: float = 0.1

    def for_table(self, options: list[str] | None) -> "Thresholds | None":
        """These, with the table's own storage parameters (`ALTER TABLE ... SET
        (autovacuum_...)`) first; None when its autovacuum is turned off."""
        given = dict(option.split("=", 1) for option in options or ())
        if not _true(given.get("autovacuum_enabled", "true")):
            return None
        own = {
            field: kind(given[f"autovacuum_{name}"])
            for field, name, kind in _OPTIONS
            if f"autovacuum_{name}" in given
        }
        return replace(self, **own)


_OPTIONS = (
    ("vacuum", "vacuum_threshold", int),
    ("vacuum_scale", "vacuum_scale_factor", float),
    ("insert", "vacuum_insert_threshold", int),
    ("insert_scale", "vacuum_insert_scale_factor", float),
    ("analyze", "analyze_threshold", int),
    ("analyze_scale", "analyze_scale_factor", float),
)


def _true(word: str) -> bool:
    """A boolean storage parameter as PostgreSQL reads it (parse_bool: on, 1, and any
    prefix of true or yes)."""
    word = word.strip().lower()
    if word in ("on", "1"):
        return True
    return bool(word) and ("true".startswith(word) or "yes".startswith(word))


@dataclass(frozen=True)
class TableCounts:
    """One table's counts, as pg_stat_user_tables and pg_class hold them."""

    schema: str
    name: str
    rows: float  # pg_class.reltuples: -1 (or 0) before its first vacuum or analyze
    dead: int
    inserted_since_vacuum: int
    changed_since_analyze: int
    options: list[str] | None = None  # pg_class.reloptions: its storage parameters


def upkeep_due(table: TableCounts, limits: Thresholds) -> Action | None:
    """What autovacuum would do to the table now: "vacuum" (a `VACUUM (ANALYZE)`, which
    analyzes it too), "analyze", or None."""
    own = limits.for_table(table.options)
    if own is None:
        return None
    rows = max(table.rows, 0.0)
    vacuum = table.dead > own.vacuum + own.vacuum_scale * rows or (
        own.insert >= 0 and table.inserted_since_vacuum > own.insert + own.insert_scale * rows
    )
    if vacuum:
        return "vacuum"
    analyze = table.changed_since_analyze > own.analyze + own.analyze_scale * rows
    return "analyze" if analyze else None


@dataclass(frozen=True)
class UpkeepReport:
    autovacuum: bool  # the server's on: nothing was done
    vacuumed: tuple[str, ...] = ()
    analyzed: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()  # failed or waited too long: next run
    busy: bool = False  # another run was under way: nothing was done


def upkeep_run() -> UpkeepReport:
    """Vacuum and analyze the database's tables that autovacuum would have by now, when the
    server's autovacuum is off, on a connection of the run's own (VACUUM cannot run in a
    transaction: the caller's, if any, is not the run's)."""
    with session_of_its_own(UPKEEP_SESSION) as own, own.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('autovacuum') = 'on' AND current_setting('track_counts') = 'on'"
        )
        if cursor.fetchone()[0]:
            return UpkeepReport(autovacuum=True)
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [RUN_LOCK_KEY])
        if not cursor.fetchone()[0]:
            logger.info("upkeep: another run is under way")
            return UpkeepReport(autovacuum=False, busy=True)
        _session_settings(cursor)
        limits = _thresholds(cursor)
        done: dict[Action, list[str]] = {"vacuum": [], "analyze": []}
        skipped = []
        for table in _counts(cursor):
            action = upkeep_due(table, limits)
            if action is None:
                continue
            name = f"{table.schema}.{table.name}"
            if own.broken:
                skipped.append(name)
                continue
            try:
                _run(cursor, action, table)
            except psycopg.Error as exc:
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


def _session_settings(cursor: Any) -> None:
    """The run's timeouts, and autovacuum's cost-based delay (a vacuum paces its reads and
    writes as autovacuum's would, rather than taking the disk whole)."""
    cursor.execute(
        "SELECT set_config('lock_timeout', %s, false),"
        " set_config('statement_timeout', %s, false),"
        " set_config('vacuum_cost_delay', CASE current_setting('autovacuum_vacuum_cost_delay')"
        "  WHEN '-1' THEN current_setting('vacuum_cost_delay')"
        "  ELSE current_setting('autovacuum_vacuum_cost_delay') END, false),"
        " set_config('vacuum_cost_limit', CASE current_setting('autovacuum_vacuum_cost_limit')"
        "  WHEN '-1' THEN current_setting('vacuum_cost_limit')"
        "  ELSE current_setting('autovacuum_vacuum_cost_limit') END, false)",
        [f"{LOCK_TIMEOUT_MS}ms", f"{STATEMENT_TIMEOUT_MS}ms"],
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
    # The server's counts: each backend flushes its own as it goes idle, at least every
    # ten seconds, so a run sees what the room did until some seconds ago.
    cursor.execute(
        "SELECT s.schemaname, s.relname, c.reltuples, s.n_dead_tup, s.n_ins_since_vacuum,"
        " s.n_mod_since_analyze, c.reloptions FROM pg_stat_user_tables AS s"
        " JOIN pg_class AS c ON c.oid = s.relid ORDER BY s.schemaname, s.relname"
    )
    return [TableCounts(*row) for row in cursor.fetchall()]


def _run(cursor: Any, action: Action, table: TableCounts) -> None:
    command = "VACUUM (ANALYZE, TRUNCATE false) {}" if action == "vacuum" else "ANALYZE {}"
    cursor.execute(sql.SQL(command).format(sql.Identifier(table.schema, table.name)))
