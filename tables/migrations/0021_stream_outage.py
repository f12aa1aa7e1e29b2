"""Issue 46: the timer loop records an outage of the tables' stream (`StreamOutage`,
tables/stream_outage.py): while Redis cannot carry the tables' messages it times no turn
out and deals no hand, and when it is back it gives every turn then running a fresh
clock. In the database, so that a loop taking over or restarting finds it."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tables', '0020_departure_honoured_by'),
    ]

    operations = [
        migrations.CreateModel(
            name='StreamOutage',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('started_at', models.DateTimeField()),
                ('back_at', models.DateTimeField(blank=True, null=True)),
                ('ended_at', models.DateTimeField(blank=True, null=True)),
            ],
            options={
                'ordering': ['-started_at'],
                'constraints': [models.UniqueConstraint(condition=models.Q(('ended_at__isnull', True)), fields=('ended_at',), name='stream_outage_one_open', nulls_distinct=False)],
            },
        ),
    ]
