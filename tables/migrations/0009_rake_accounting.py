"""The rake accounting moves from the cashier to the tables app, rows and all.

`RakeContribution` and the `RakeReport*` models read hands and their players, so they
belong to the tables app (the cashier imports nothing of it). The models change owner in
Django's state only (cashier migration 0005 removes them there); in the database their
tables are renamed, ``cashier_rake*`` to ``tables_rake*``, with their rows, ids and
constraints (renamed after the tables app's style). Their content types follow them, so
that permissions granted on them (staff reading the reports in the admin) are kept.
"""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

RENAMES = [
    ("cashier_rakereport", "tables_rakereport", []),
    (
        "cashier_rakecontribution",
        "tables_rakecontribution",
        [
            ("cashier_rake_one_per_player", "rake_contribution_one_per_player"),
            ("cashier_rake_positive", "rake_contribution_positive"),
        ],
    ),
    (
        "cashier_rakereporttable",
        "tables_rakereporttable",
        [("cashier_rake_report_table", "rake_report_table_unique")],
    ),
    (
        "cashier_rakereportplayer",
        "tables_rakereportplayer",
        [("cashier_rake_report_player", "rake_report_player_unique")],
    ),
]


MODELS = ["rakereport", "rakecontribution", "rakereporttable", "rakereportplayer"]


def _content_types_move(*, source: str, target: str):
    def move(apps, schema_editor):
        ContentType = apps.get_model("contenttypes", "ContentType")
        # A model that already has a content type on the target side keeps that one.
        taken = ContentType.objects.filter(app_label=target, model__in=MODELS).values("model")
        ContentType.objects.filter(app_label=source, model__in=MODELS).exclude(
            model__in=taken
        ).update(app_label=target)

    return move


def _rename_sql(*, backwards: bool) -> list[str]:
    statements = []
    for old_table, new_table, constraints in RENAMES:
        source, target = (new_table, old_table) if backwards else (old_table, new_table)
        statements.append(f"ALTER TABLE {source} RENAME TO {target}")
        for old_name, new_name in constraints:
            was, now = (new_name, old_name) if backwards else (old_name, new_name)
            statements.append(f"ALTER TABLE {target} RENAME CONSTRAINT {was} TO {now}")
    return statements


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0008_stake_level_defaults"),
        ("cashier", "0004_table_account_reference"),
        ("accounts", "0004_user_name_skeleton"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(_rename_sql(backwards=False), _rename_sql(backwards=True))
            ],
            state_operations=[
                migrations.CreateModel(
                    name="RakeReport",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("date", models.DateField(unique=True)),
                        ("built_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("hands", models.PositiveIntegerField()),
                        ("raked_hands", models.PositiveIntegerField()),
                        ("rake", models.BigIntegerField(help_text="Cents.")),
                    ],
                    options={"ordering": ["-date"]},
                ),
                migrations.CreateModel(
                    name="RakeContribution",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("seat", models.PositiveSmallIntegerField()),
                        ("amount", models.BigIntegerField(help_text="Cents.")),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        (
                            "hand",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="rake_contributions",
                                to="tables.hand",
                            ),
                        ),
                        (
                            "player",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="rake_contributions",
                                to="accounts.user",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["hand", "seat"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("hand", "player"), name="rake_contribution_one_per_player"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("amount__gt", 0)),
                                name="rake_contribution_positive",
                            ),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="RakeReportPlayer",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("raked_hands", models.PositiveIntegerField()),
                        ("rake", models.BigIntegerField(help_text="Cents.")),
                        (
                            "player",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="accounts.user",
                            ),
                        ),
                        (
                            "report",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="players",
                                to="tables.rakereport",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["report", "-rake", "player"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("report", "player"), name="rake_report_player_unique"
                            )
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="RakeReportTable",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("hands", models.PositiveIntegerField()),
                        ("raked_hands", models.PositiveIntegerField()),
                        ("rake", models.BigIntegerField(help_text="Cents.")),
                        (
                            "report",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="tables",
                                to="tables.rakereport",
                            ),
                        ),
                        (
                            "stake_level",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="tables.stakelevel",
                            ),
                        ),
                        (
                            "table",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="tables.table",
                            ),
                        ),
                    ],
                    options={
                        "ordering": ["report", "stake_level", "table"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("report", "table"), name="rake_report_table_unique"
                            )
                        ],
                    },
                ),
            ],
        ),
        migrations.RunPython(
            _content_types_move(source="cashier", target="tables"),
            _content_types_move(source="tables", target="cashier"),
        ),
    ]

