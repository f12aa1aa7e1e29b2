"""Read-only questions about users: roles, look-alike names (HackSoft selectors,
`<entity>_<action>`)."""

from django.db.models import Q, QuerySet
from django.utils import timezone
from knox.models import AuthToken

from accounts.models import AUDITOR_GROUP, User
from accounts.names import name_skeleton, name_skeleton_cased


def user_is_auditor(*, user: User) -> bool:
    """Auditors read every hand and ledger entry; they never play or move money."""
    return user.is_authenticated and user.groups.filter(name=AUDITOR_GROUP).exists()


def user_can_play(*, user: User) -> bool:
    """Whether the user may take a seat or move money: an active player, not an auditor.

    Staff and superusers do not play either: they can read every live hand in the
    database and approve withdrawals, so an account of theirs at a table or in the
    cashier would play with knowledge no player has and move its own money.
    """
    return user_flags_allow_play(user=user) and not user_is_auditor(user=user)


def user_flags_allow_play(*, user: User) -> bool:
    """The part of `user_can_play` read from the user's own row, without a query (the
    auditors' group is not)."""
    return user.is_authenticated and user.is_active and not user.is_staff and not user.is_superuser


def user_name_conflict(*, username: str, exclude_id: int | None = None) -> User | None:
    """The user whose screen name is the same as ``username`` or looks like it
    (case and look-alike letters ignored: see accounts.names), other than ``exclude_id``."""
    users = User.objects.filter(
        Q(username__iexact=username)
        | Q(name_skeleton=name_skeleton(username))
        | Q(name_skeleton_cased=name_skeleton_cased(username))
    )
    if exclude_id is not None:
        users = users.exclude(pk=exclude_id)
    return users.order_by("id").first()


def api_token_list(*, user: User) -> QuerySet[AuthToken]:
    """The user's live API tokens, newest first (expired ones are not usable: left out)."""
    live = Q(expiry__isnull=True) | Q(expiry__gt=timezone.now())
    return AuthToken.objects.filter(live, user=user).order_by("-created")
