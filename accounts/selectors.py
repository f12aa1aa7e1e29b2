"""Read-only questions about users: roles (HackSoft selectors, `<entity>_<action>`)."""

from django.db.models import Q, QuerySet
from django.utils import timezone
from knox.models import AuthToken

from accounts.models import AUDITOR_GROUP, User


def user_is_auditor(*, user: User) -> bool:
    """Auditors read every hand and ledger entry; they never play or move money."""
    return user.is_authenticated and user.groups.filter(name=AUDITOR_GROUP).exists()


def user_can_play(*, user: User) -> bool:
    """Whether the user may take a seat or move money: an active player, not an auditor."""
    return user.is_authenticated and user.is_active and not user_is_auditor(user=user)


def api_token_list(*, user: User) -> QuerySet[AuthToken]:
    """The user's live API tokens, newest first (expired ones are not usable: left out)."""
    live = Q(expiry__isnull=True) | Q(expiry__gt=timezone.now())
    return AuthToken.objects.filter(live, user=user).order_by("-created")
