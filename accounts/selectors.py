"""Read-only questions about users: roles (HackSoft selectors, `<entity>_<action>`)."""

from accounts.models import AUDITOR_GROUP, User


def user_is_auditor(*, user: User) -> bool:
    """Auditors read every hand and ledger entry; they never play or move money."""
    return user.is_authenticated and user.groups.filter(name=AUDITOR_GROUP).exists()


def user_can_play(*, user: User) -> bool:
    """Whether the user may take a seat or move money: an active player, not an auditor."""
    return user.is_authenticated and user.is_active and not user_is_auditor(user=user)
