"""`User.name_skeleton_cased`, and `name_skeleton` recomputed: look-alikes by a capital I
for an l, or by a diacritic, are refused too (issue #46, finding 12; accounts/names.py).

Both skeletons of every existing user are computed anew (the case-folded one now drops
diacritics). Where existing names already look alike by the new rules (`alice` and
`aIice`, `renee` and `renée`), the older account keeps the plain skeleton and each later
one gets it suffixed with `#<id>`, as migration 0004 did: no account is renamed, nobody
new can take a third look-alike, and `#` cannot occur in a screen name, so a suffixed
value never blocks a real one. The unique constraints are lifted while the rows are
rewritten (a row's new value may be another row's old one) and put back after.
"""

from django.db import migrations, models

from accounts.names import name_skeleton, name_skeleton_cased


def fill_skeletons(apps, schema_editor):
    User = apps.get_model("accounts", "User")
    seen: dict[str, set[str]] = {"name_skeleton": set(), "name_skeleton_cased": set()}
    skeletons = {"name_skeleton": name_skeleton, "name_skeleton_cased": name_skeleton_cased}
    for user in User.objects.order_by("id").only("id", "username").iterator():
        values = {}
        for field, skeleton_of in skeletons.items():
            value = skeleton_of(user.username)
            if value in seen[field]:
                value = f"{value}#{user.id}"
            seen[field].add(value)
            values[field] = value
        User.objects.filter(pk=user.pk).update(**values)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0004_user_name_skeleton")]

    operations = [
        migrations.AlterField(
            model_name="user",
            name="name_skeleton",
            field=models.CharField(editable=False, max_length=600, null=True),
        ),
        migrations.AddField(
            model_name="user",
            name="name_skeleton_cased",
            field=models.CharField(editable=False, max_length=600, null=True),
        ),
        migrations.RunPython(fill_skeletons, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="user",
            name="name_skeleton",
            field=models.CharField(editable=False, max_length=600, unique=True),
        ),
        migrations.AlterField(
            model_name="user",
            name="name_skeleton_cased",
            field=models.CharField(editable=False, max_length=600, unique=True),
        ),
    ]
