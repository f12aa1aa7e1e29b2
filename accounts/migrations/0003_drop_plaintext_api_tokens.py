"""Drop DRF's `authtoken_token` table: it held every API token in plain text.

The room's tokens are django-rest-knox's now (stored hashed, expiring); the old ones are
unusable anyway since `rest_framework.authtoken` left INSTALLED_APPS, so their secrets
must not stay in the database (or its backups from now on). Auditors make new tokens at
/accounts/tokens/ or with `manage.py createauditor`. Not reversible (nothing to restore).
"""

from django.db import migrations

OLD_TABLE = "authtoken_token"


def drop_plaintext_tokens(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        tables = connection.introspection.table_names(cursor)
    if OLD_TABLE in tables:
        schema_editor.execute(f"DROP TABLE {schema_editor.quote_name(OLD_TABLE)} CASCADE")
    # Forget authtoken's migrations too: a re-added app would then build its table anew.
    schema_editor.execute("DELETE FROM django_migrations WHERE app = %s", ["authtoken"])


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_auditor_group")]

    operations = [migrations.RunPython(drop_plaintext_tokens, migrations.RunPython.noop)]
