"""The rake accounting models leave the cashier's state (tables migration 0009 took them
over with their renamed database tables); nothing changes in the database here."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("cashier", "0004_table_account_reference"),
        ("tables", "0009_rake_accounting"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="RakeReportPlayer"),
                migrations.DeleteModel(name="RakeReportTable"),
                migrations.DeleteModel(name="RakeContribution"),
                migrations.DeleteModel(name="RakeReport"),
            ],
            database_operations=[],
        )
    ]
