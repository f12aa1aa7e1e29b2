"""`HandPlayer`: who was dealt into each hand at which seat, by user id.

Existing hands are filled on a best-effort basis: each screen name in a hand's engine
state (``state["players"]``, beside ``state["seats"]``) is matched, ignoring case, to the
user who has that screen name *today*. A hand whose player has since been renamed, or
whose name now belongs to someone else, cannot be told apart from here: its row points
at today's owner of the name (or is missing when nobody has it), as the screen-name
matching did before this migration. A hand still in progress is matched by its seats
instead: the player sitting in each of its seats now is the one dealt in (nobody changes
seats during a hand), so a live hand's chips are settled to the right user even if a
name changed. Hands dealt from now on are recorded exactly, when they are dealt
(`tables.services.hands.hand_start_if_ready`).
"""

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

BATCH = 1000


def fill_hand_players(apps, schema_editor):
    Hand = apps.get_model("tables", "Hand")
    HandPlayer = apps.get_model("tables", "HandPlayer")
    Seat = apps.get_model("tables", "Seat")
    User = apps.get_model("accounts", "User")
    ids = {name.lower(): pk for pk, name in User.objects.values_list("id", "username")}
    seated = {
        (table_id, number): player_id
        for table_id, number, player_id in Seat.objects.values_list("table_id", "number", "player_id")
    }
    rows = []
    hands = Hand.objects.order_by("id").values_list("id", "table_id", "status", "state")
    for hand_id, table_id, status, state in hands.iterator():
        state = state or {}
        taken = set()
        for seat, name in zip(state.get("seats", []), state.get("players", []), strict=False):
            if status == "in_progress":
                user_id = seated.get((table_id, seat))
            else:
                user_id = ids.get(str(name).lower())
            if user_id is None or user_id in taken:
                continue
            taken.add(user_id)
            rows.append(HandPlayer(hand_id=hand_id, seat=seat, user_id=user_id, screen_name=name))
        if len(rows) >= BATCH:
            HandPlayer.objects.bulk_create(rows)
            rows = []
    HandPlayer.objects.bulk_create(rows)


class Migration(migrations.Migration):
    dependencies = [
        ("tables", "0004_seat_buy_in_transaction"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="HandPlayer",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "seat",
                    models.PositiveSmallIntegerField(
                        validators=[
                            django.core.validators.MinValueValidator(1),
                            django.core.validators.MaxValueValidator(10),
                        ]
                    ),
                ),
                (
                    "screen_name",
                    models.CharField(help_text="The user's screen name then.", max_length=150),
                ),
                (
                    "hand",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="players",
                        to="tables.hand",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="hand_seats",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["hand", "seat"],
                "indexes": [
                    models.Index(fields=["user", "hand"], name="tables_hand_user_id_7504ce_idx")
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("hand", "seat"), name="hand_player_unique_seat"
                    ),
                    models.UniqueConstraint(
                        fields=("hand", "user"), name="hand_player_unique_user"
                    ),
                ],
            },
        ),
        migrations.RunPython(fill_hand_players, migrations.RunPython.noop),
    ]
