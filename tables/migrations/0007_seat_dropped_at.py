"""Seat.dropped_at / dropped_turn: when a player's connection dropped, and during which of
their own turns, so that the reconnect bonus goes only to a real drop (issue #12, 12)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0006_table_failures"),
    ]

    operations = [
        migrations.AddField(
            model_name="seat",
            name="dropped_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="seat",
            name="dropped_turn",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
    ]
