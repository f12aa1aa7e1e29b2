"""Each table names its account in the chip ledger (`Table.ledger_account`), so that the
commands that move its chips read it with the table instead of looking it up. Tables
already opened are given theirs: the table account whose reference is ``table:<id>``
(`tables.ledger.table_ledger_reference`)."""

import django.db.models.deletion
from django.db import migrations, models

NAME_ACCOUNTS = """
UPDATE tables_table SET ledger_account_id = account.id
FROM cashier_ledgeraccount AS account
WHERE account.kind = 'table' AND account.reference = 'table:' || tables_table.id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("cashier", "0005_rake_accounting_to_tables"),
        ("tables", "0018_hand_started_at_set_by_the_deal"),
    ]

    operations = [
        migrations.AddField(
            model_name="table",
            name="ledger_account",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="cashier.ledgeraccount",
            ),
        ),
        migrations.RunSQL(NAME_ACCOUNTS, migrations.RunSQL.noop),
    ]
