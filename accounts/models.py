"""The room's user: a screen name unique regardless of case and of look-alike letters,
and table preferences.

`name_skeleton` and `name_skeleton_cased` are the screen name reduced by
`accounts.names` (Unicode's confusable skeleton, diacritics dropped; case-folded, and as
written); their unique constraints refuse `alice` spelt with a Cyrillic a (U+0430), with
a capital I for the l or with a dot on the e beside `alice`, even when two sign-ups race.
`save()` keeps them in step with `username` whichever way a user is created or renamed
(sign-up, the admin, `createsuperuser`, a factory).

Roles are Django groups and flags: every signed-up user is a player; members of the
`auditor` group read every hand history and ledger entry through the API; staff use
Django admin.
"""

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models.functions import Lower

from accounts.names import name_skeleton, name_skeleton_cased

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
    # Derived from `username` by save(); unique, so two look-alike names cannot coexist.
    name_skeleton = models.CharField(max_length=600, unique=True, editable=False)
    name_skeleton_cased = models.CharField(max_length=600, unique=True, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(Lower("username"), name="accounts_user_username_ci_unique")
        ]

    def save(self, *args, **kwargs) -> None:
        # A derived column, not behaviour: computed here so that no way of creating or
        # renaming a user (the admin, createsuperuser, a factory) can leave it stale.
        self.name_skeleton = name_skeleton(self.username)
        self.name_skeleton_cased = name_skeleton_cased(self.username)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "username" in update_fields:
            kwargs["update_fields"] = {*update_fields, "name_skeleton", "name_skeleton_cased"}
        super().save(*args, **kwargs)

    @property
    def is_auditor(self) -> bool:
        return self.groups.filter(name=AUDITOR_GROUP).exists()
