"""Services that create and change users (HackSoft style: `<entity>_<action>`, keyword-only)."""

from django.contrib.auth.models import Group
from django.db import transaction

from accounts.models import AUDITOR_GROUP, User


@transaction.atomic
def user_ensure(
    *, username: str, password: str, staff: bool = False, auditor: bool = False
) -> tuple[User, bool]:
    """Return the user with this screen name (any case), creating it if missing."""
    user = User.objects.filter(username__iexact=username).first()
    if user is not None:
        return user, False
    user = User.objects.create_user(
        username=username, password=password, is_staff=staff, is_superuser=staff
    )
    if auditor:
        user.groups.add(Group.objects.get(name=AUDITOR_GROUP))
    return user, True
