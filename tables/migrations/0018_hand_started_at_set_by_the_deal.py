"""A hand's start is set by its deal (`tables.services.hands.hand_start_if_ready`), not
stamped when its row is written: the deal's command writes the row at its end, after it
may have settled the hand too. No SQL: the default is Python's."""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tables', '0017_hand_updates_in_place'),
    ]

    operations = [
        migrations.AlterField(
            model_name='hand',
            name='started_at',
            field=models.DateTimeField(default=django.utils.timezone.now, editable=False),
        ),
    ]
