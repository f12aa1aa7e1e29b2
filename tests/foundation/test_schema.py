"""The schema the migrations build is the one the models describe (every constraint and
index in the database too), carries no index that another makes useless (each is written
with every row: issue #15), and none on a column that every action writes."""

import re
from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection

from tables.models import Hand, Table
from tables.services.command import HAND_FIELDS_OF_PLAY

APPS = ("accounts", "cashier", "tables")

# Every index of the given tables: its table, name, columns in order, and whether it is
# unique, partial (a WHERE) or uses an operator class of its own (the `_like` indexes
# Django adds for LIKE lookups on text keys serve what no plain index can).
INDEXES = """
SELECT c.relname, i.relname, ix.indisunique, ix.indpred IS NOT NULL,
       EXISTS (SELECT 1 FROM unnest(ix.indclass) AS k(opclass)
               JOIN pg_opclass o ON o.oid = k.opclass WHERE NOT o.opcdefault),
       array(SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY AS k(attnum, n)
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
             ORDER BY k.n)
FROM pg_index ix
JOIN pg_class i ON i.oid = ix.indexrelid
JOIN pg_class c ON c.oid = ix.indrelid
JOIN pg_namespace s ON s.oid = c.relnamespace
WHERE s.nspname = current_schema() AND c.relname = ANY(%s)
"""


@pytest.mark.django_db
def test_every_model_change_has_its_migration():
    # Exits (SystemExit 1) when a model differs from what its migrations build.
    call_command("makemigrations", "--check", "--dry-run", stdout=StringIO())


@pytest.mark.django_db
def test_every_constraint_and_index_of_the_models_is_in_the_database():
    # The migrations' state can say one is there when the database has lost it: turning
    # a foreign key's db_index off drops every plain index on its column, the partial
    # unique index of a one-column UniqueConstraint included (hand_one_in_progress_per_table
    # went so in tables' migration 0015, restored by 0016).
    missing = []
    with connection.cursor() as cursor:
        for app in APPS:
            for model in apps.get_app_config(app).get_models():
                found = connection.introspection.get_constraints(cursor, model._meta.db_table)
                for item in [*model._meta.constraints, *model._meta.indexes]:
                    if item.name not in found:
                        missing.append(f"{model._meta.label}: {item.name}")
    assert missing == []


@pytest.mark.django_db
def test_no_index_is_the_start_of_another():
    # The models' own tables (not the many-to-many tables Django makes for them).
    tables = [
        model._meta.db_table for app in APPS for model in apps.get_app_config(app).get_models()
    ]
    with connection.cursor() as cursor:
        cursor.execute(INDEXES, [tables])
        indexes = cursor.fetchall()
    plain = [
        (table, name, columns)
        for table, name, unique, partial, own_opclass, columns in indexes
        if not partial and not own_opclass
    ]
    redundant = [
        f"{table}.{name} {columns} is the start of {other} {longer}"
        for table, name, unique, partial, own_opclass, columns in indexes
        if not unique and not partial and not own_opclass
        for other_table, other, longer in plain
        if other_table == table and other != name and longer[: len(columns)] == columns
    ]
    assert redundant == [], "\n".join(redundant)


@pytest.mark.django_db
def test_no_index_covers_a_column_every_action_writes():
    # An update that changes no indexed column (nor one an index's WHERE reads) is made in
    # place (HOT): no index entry is written and the old version is pruned from its page
    # without a vacuum. Every action writes its hand's play fields and its table's stream
    # version; an index on any of them (the turn's deadline had one) costs an entry in
    # every index of the table at every action.
    written = {
        Hand._meta.db_table: [Hand._meta.get_field(name).column for name in HAND_FIELDS_OF_PLAY],
        Table._meta.db_table: [Table._meta.get_field("event_seq").column],
    }
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.relname, pg_get_indexdef(ix.indexrelid) FROM pg_index ix"
            " JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class c ON c.oid = ix.indrelid"
            " WHERE c.relname = ANY(%s)",
            [list(written)],
        )
        definitions = cursor.fetchall()
    assert {table for table, _, _ in definitions} == set(written)  # the query finds them
    covering = [
        f"{name}: {definition}"
        for table, name, definition in definitions
        for column in written[table]
        if re.search(rf"\b{column}\b", definition)
    ]
    assert covering == []
