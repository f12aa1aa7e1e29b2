"""`hand_one_in_progress_per_table` back in the database.

Migration 0015 turned off the index of `Hand.table`'s foreign key, and Django then drops
every plain index on that column: the partial unique index of the one-column
UniqueConstraint (a table has at most one hand in progress) went with it, while the
migrations' state still lists the constraint. Created again as 0002 made it, if missing
(a database migrated to 0015 lacks it; one built another way may not).
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("tables", "0015_redundant_foreign_key_indexes"),
    ]

    operations = [
        migrations.RunSQL(
            "CREATE UNIQUE INDEX IF NOT EXISTS hand_one_in_progress_per_table "
            "ON tables_hand (table_id) WHERE status = 'in_progress'",
            migrations.RunSQL.noop,
        ),
    ]
