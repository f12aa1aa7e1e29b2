"""The room's user: a screen name unique regardless of case, and table preferences.

Roles are Django groups and flags: every signed-up user is a player; members of the
`auditor` group read every hand history and ledger entry through the API; staff use
Django admin.
"""

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models.functions import Lower

AUDITOR_GROUP = "auditor"


class User(AbstractUser):
    auto_muck = models.BooleanField(
        default=True, help_text="Muck a losing hand at showdown instead of showing it."
    )
    chop_blinds = models.BooleanField(
        default=False, help_text="Agree to chop the blinds when everyone folds to them."
    )
    four_color_deck = models.BooleanField(
        default=False, help_text="Draw diamonds blue and clubs green."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(Lower("username"), name="accounts_user_username_ci_unique")
        ]

    @property
    def is_auditor(self) -> bool:
        return self.groups.filter(name=AUDITOR_GROUP).exists()
