"""Issue 46: a departure remembers the sit that honoured it (`Departure.honoured_by`: no
ratholing across the tables of a stake level, one sit honouring one departure). Which
sits honoured the departures from before was not recorded: they are all taken as owed,
so for at most `rathole_minutes` after the upgrade a player may be asked to bring again
what they already brought back once. No data is rewritten."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('cashier', '0005_rake_accounting_to_tables'),
        ('tables', '0019_table_ledger_account'),
    ]

    operations = [
        migrations.AddField(
            model_name='departure',
            name='honoured_by',
            field=models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='honoured_departure', to='cashier.ledgertransaction'),
        ),
    ]
