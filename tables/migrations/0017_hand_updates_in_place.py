"""No index on `Hand.turn_deadline`: an action's update of its hand is then made in place.

Every action moves the turn's deadline, and with it indexed PostgreSQL could never update
the hand's row in place (HOT): each action wrote a new entry in all four of the hand's
indexes. The timer loop now finds the turns due among the hands in progress, through
`hand_one_in_progress_per_table` (one entry a table).
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("tables", "0016_hand_one_in_progress_restored"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="hand",
            name="hand_turn_deadline_live",
        ),
    ]
