"""`User.name_skeleton`: the look-alike skeleton of each screen name, unique.

Existing users get the skeleton of their name (`accounts.names.name_skeleton`, as it is
today). Where two existing names already look alike (`alice`, and `alice` with a Cyrillic a), the older
account keeps the plain skeleton and each later one gets it suffixed with `#<id>`: no
account is renamed, nobody new can take a third look-alike, and `#` cannot occur in a
screen name, so the suffixed value never blocks a real one.
"""

from django.db import migrations, models

from accounts.names import name_skeleton


def fill_skeletons(apps, schema_editor):
    User = apps.get_model("accounts", "User")
    seen: set[str] = set()
    for user in User.objects.order_by("id").only("id", "username").iterator():
        skeleton = name_skeleton(user.username)
        if skeleton in seen:
            skeleton = f"{skeleton}#{user.id}"
        seen.add(skeleton)
        User.objects.filter(pk=user.pk).update(name_skeleton=skeleton)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0003_drop_plaintext_api_tokens")]

    operations = [
        migrations.AddField(
            model_name="user",
            name="name_skeleton",
            field=models.CharField(editable=False, max_length=600, null=True),
        ),
        migrations.RunPython(fill_skeletons, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="user",
            name="name_skeleton",
            field=models.CharField(editable=False, max_length=600, unique=True),
        ),
    ]
