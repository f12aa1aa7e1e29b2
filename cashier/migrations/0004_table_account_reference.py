"""Table accounts known by an opaque reference, not by a foreign key to `tables.Table`.

The cashier stops pointing at the tables app (``accounts <- cashier <- tables``):

- every table account gets ``reference`` ``table:<its table's id>`` (the tables layer's
  key, tables/ledger.py) and ``name``, its table's name, then loses its ``table`` column;
  the CHECK "a table account has a table" and the one-account-per-table UNIQUE become
  the same rules on ``reference``;
- ledger transactions lose their ``table`` column: it repeated what their legs say (the
  table account they move chips to or from). Legs and transactions stay append-only:
  no row of them is updated here.

Reversing restores each account's table from its reference; the transactions' ``table``
comes back empty (they are append-only, their rows are never updated).
"""

from django.db import migrations, models
from django.db.models import Q

REFERENCE_PREFIX = "table:"


def references_from_tables(apps, schema_editor):
    LedgerAccount = apps.get_model("cashier", "LedgerAccount")
    for account in LedgerAccount.objects.filter(kind="table").select_related("table"):
        account.reference = f"{REFERENCE_PREFIX}{account.table_id}"
        account.name = account.table.name
        account.save(update_fields=["reference", "name"])


def tables_from_references(apps, schema_editor):
    LedgerAccount = apps.get_model("cashier", "LedgerAccount")
    for account in LedgerAccount.objects.filter(kind="table"):
        account.table_id = int(account.reference.removeprefix(REFERENCE_PREFIX))
        account.save(update_fields=["table"])


class Migration(migrations.Migration):
    dependencies = [
        ("cashier", "0003_rake_accounting"),
        ("tables", "0008_stake_level_defaults"),
    ]

    operations = [
        migrations.AddField(
            model_name="ledgeraccount",
            name="reference",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.AddField(
            model_name="ledgeraccount",
            name="name",
            field=models.CharField(blank=True, default="", max_length=100),
        ),
        migrations.RemoveConstraint(
            model_name="ledgeraccount", name="cashier_account_table_has_table"
        ),
        migrations.RemoveConstraint(model_name="ledgeraccount", name="cashier_account_one_per_table"),
        migrations.RunPython(references_from_tables, tables_from_references),
        migrations.RemoveField(model_name="ledgeraccount", name="table"),
        migrations.RemoveField(model_name="ledgertransaction", name="table"),
        migrations.AddConstraint(
            model_name="ledgeraccount",
            constraint=models.CheckConstraint(
                condition=(Q(kind="table") & ~Q(reference=""))
                | (~Q(kind="table") & Q(reference="")),
                name="cashier_account_table_has_reference",
            ),
        ),
        migrations.AddConstraint(
            model_name="ledgeraccount",
            constraint=models.UniqueConstraint(
                fields=["reference"],
                condition=Q(kind="table"),
                name="cashier_account_one_per_table_reference",
            ),
        ),
    ]
