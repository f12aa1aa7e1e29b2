"""poker_room/postgres/upkeep.py: the room vacuums and analyzes its tables when the
server's autovacuum is off, as autovacuum would, and the plans made on a table while it
was small are made again once it is analyzed."""

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection, transaction

from poker_room.postgres import prepared
from poker_room.postgres.upkeep import (
    RUN_LOCK_KEY,
    TableCounts,
    Thresholds,
    UpkeepReport,
    upkeep_due,
    upkeep_run,
)
from poker_room.tasks import database_upkeep_task
from tables import rows
from tables.models import Hand, HandStatus
from tests.kit import TableFactory


def counts(*, rows: float = 1000, dead: int = 0, inserted: int = 0, changed: int = 0, options=None):
    return TableCounts("public", "t", rows, dead, inserted, changed, options)


DEFAULTS = Thresholds()  # PostgreSQL's defaults


def test_a_table_changed_less_than_autovacuum_waits_for_is_left_alone():
    # 1,000 rows: vacuum past 250 dead or 1,200 inserted, analyze past 150 changed.
    assert upkeep_due(counts(dead=250, inserted=1200, changed=150), DEFAULTS) is None


def test_dead_rows_past_the_threshold_are_vacuumed():
    assert upkeep_due(counts(dead=251), DEFAULTS) == "vacuum"


def test_rows_inserted_past_the_insert_threshold_are_vacuumed():
    # An append-only table (the hands' events, the ledger's entries) has no dead rows.
    assert upkeep_due(counts(inserted=1201), DEFAULTS) == "vacuum"


def test_rows_changed_past_the_analyze_threshold_are_analyzed():
    assert upkeep_due(counts(changed=151), DEFAULTS) == "analyze"


def test_a_vacuum_due_analyzes_too():
    assert upkeep_due(counts(dead=251, changed=151), DEFAULTS) == "vacuum"


def test_a_table_never_analyzed_counts_as_empty():
    # reltuples is -1 before a table's first vacuum or analyze.
    assert upkeep_due(counts(rows=-1, changed=51), DEFAULTS) == "analyze"
    assert upkeep_due(counts(rows=-1, changed=50), DEFAULTS) is None


def test_the_servers_own_thresholds_apply():
    limits = Thresholds(analyze=0, analyze_scale=0.5)
    assert upkeep_due(counts(changed=500), limits) is None
    assert upkeep_due(counts(changed=501), limits) == "analyze"


def test_an_insert_threshold_of_minus_one_turns_vacuums_for_inserts_off():
    limits = Thresholds(insert=-1)
    assert upkeep_due(counts(inserted=10**9), limits) is None
    assert upkeep_due(counts(dead=251), limits) == "vacuum"


def test_a_tables_own_storage_parameters_come_first():
    own = [
        "autovacuum_analyze_threshold=500",
        "autovacuum_vacuum_scale_factor=0.5",
        "fillfactor=90",
    ]
    assert upkeep_due(counts(changed=600, options=own), DEFAULTS) is None
    assert upkeep_due(counts(changed=601, options=own), DEFAULTS) == "analyze"
    assert upkeep_due(counts(dead=550, options=own), DEFAULTS) is None
    assert upkeep_due(counts(dead=551, options=own), DEFAULTS) == "vacuum"


@pytest.mark.parametrize("word", ["false", "off", "no", "0", "f", "FALSE"])
def test_a_table_whose_autovacuum_is_turned_off_is_left_alone(word):
    off = [f"autovacuum_enabled={word}"]
    assert (
        upkeep_due(counts(dead=10**6, inserted=10**6, changed=10**6, options=off), DEFAULTS) is None
    )


@pytest.mark.parametrize("word", ["true", "on", "yes", "1", "t", "y"])
def test_a_table_whose_autovacuum_is_turned_on_is_done_as_any(word):
    on = [f"autovacuum_enabled={word}"]
    assert upkeep_due(counts(dead=251, options=on), DEFAULTS) == "vacuum"


def autovacuum_on() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('autovacuum') = 'on'")
        return cursor.fetchone()[0]


def plan(cursor, table_id: int) -> str:
    cursor.execute("EXPLAIN EXECUTE upkeep_probe(%s)", [table_id])
    return "\n".join(line for (line,) in cursor.fetchall())


@pytest.mark.django_db(transaction=True)  # VACUUM cannot run in a transaction
def test_a_plan_made_while_the_hands_were_few_is_made_again_once_upkeep_analyzes_them():
    """The table command's read of the hand in progress, prepared while the room had dealt
    no hand, read every hand the room had dealt since, until the hands were analyzed."""
    if autovacuum_on():
        pytest.skip("the server's autovacuum is on: upkeep leaves the tables to it")
    table = TableFactory()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE tables_hand")  # a new room's: no hand yet
        cursor.execute(f"PREPARE upkeep_probe AS {prepared.numbered(rows._hand_sql())}")
        try:
            for _ in range(6):  # PostgreSQL settles on a generic plan after five runs
                cursor.execute("EXECUTE upkeep_probe(%s)", [table.pk])
            Hand.objects.bulk_create(
                Hand(
                    table=table,
                    number=number,
                    status=HandStatus.FINISHED,
                    state={},
                    button=1,
                    deck_commitment="0" * 64,
                    salt="0" * 64,
                )
                for number in range(1, 3001)
            )
            assert "Seq Scan on tables_hand" in plan(cursor, table.pk)
            # The inserts' counts, in the server's statistics now, not within ten seconds.
            cursor.execute("SELECT pg_stat_force_next_flush()")

            report = upkeep_run()

            assert not report.autovacuum
            assert "public.tables_hand" in report.vacuumed + report.analyzed
            assert not report.skipped
            now = plan(cursor, table.pk)
            assert "Index Scan using hand_one_in_progress_per_table" in now
            assert "Seq Scan" not in now
        finally:
            cursor.execute("DEALLOCATE upkeep_probe")


@pytest.fixture
def tables_changed(transactional_db):
    """60 tables made (past the analyze threshold of an empty tables_table), their counts in
    the server's statistics now."""
    if autovacuum_on():
        pytest.skip("the server's autovacuum is on: upkeep leaves the tables to it")
    TableFactory.create_batch(60)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")


def test_the_beat_task_does_it_and_a_second_run_straight_after_finds_nothing_to_do(
    tables_changed,
):
    assert "public.tables_table" in database_upkeep_task()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
    assert database_upkeep_task() == []


def test_beat_schedules_the_task_by_a_name_a_new_worker_knows():
    """In a process of its own, as a worker starts: nothing imported beforehand."""
    entry = settings.CELERY_BEAT_SCHEDULE["database-upkeep"]
    assert entry["schedule"] == settings.DATABASE_UPKEEP_SECONDS
    probe = (
        "from poker_room.celery import app; app.loader.import_default_modules(); "
        f"print({entry['task']!r} in app.tasks)"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "poker_room.settings.test"}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_a_run_that_finds_another_under_way_leaves_it_the_work(tables_changed):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [RUN_LOCK_KEY])  # a run under way
        try:
            assert upkeep_run() == UpkeepReport(autovacuum=False, busy=True)
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [RUN_LOCK_KEY])
    assert "public.tables_table" in database_upkeep_task()  # left for the next run


def test_a_table_whose_autovacuum_is_turned_off_is_not_touched(tables_changed):
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE tables_table SET (autovacuum_enabled = false)")
        try:
            report = upkeep_run()
        finally:
            cursor.execute("ALTER TABLE tables_table RESET (autovacuum_enabled)")
    assert "public.tables_table" not in report.vacuumed + report.analyzed
    assert "public.tables_table" in database_upkeep_task()


@pytest.mark.django_db
def test_a_run_from_inside_a_transaction_runs_on_its_own_connection():
    """VACUUM cannot run in a transaction: the run's connection is its own, and the
    caller's connection and transaction are as they were."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SHOW lock_timeout")
            before = cursor.fetchone()
        report = upkeep_run()
        with connection.cursor() as cursor:
            cursor.execute("SHOW lock_timeout")
            assert cursor.fetchone() == before
        assert connection.in_atomic_block
    assert not report.skipped
