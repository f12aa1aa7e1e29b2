"""Create the `auditor` group that grants read access to every hand and ledger entry."""

from django.db import migrations


def create_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.get_or_create(name="auditor")


def delete_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="auditor").delete()


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]

    operations = [migrations.RunPython(create_group, delete_group)]
