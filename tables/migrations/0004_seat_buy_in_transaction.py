"""Link a seat to the buy-in that made it, so a replayed sit request is recognised."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("cashier", "0001_initial"),
        ("tables", "0003_seat_advance"),
    ]

    operations = [
        migrations.AddField(
            model_name="seat",
            name="buy_in_transaction",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="seat",
                to="cashier.ledgertransaction",
            ),
        ),
    ]
