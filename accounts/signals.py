"""Notices that a user's sessions may have ended, wherever the account changed.

A table socket acts for its player only while their session lives and their account
may play (tables/session_watch.py checks every socket every few seconds); these notices
make it at once (poker_room/socket_auth.py `socket_sessions_notice`, published after
the commit): a log-out ends its session's sockets; a change of the user's password,
`is_active`, `is_staff` or `is_superuser`, of their groups (the auditors'), or their
deletion has their sockets checked.

Signals, where the style prefers services: the changes that matter come through
Django's own code more than the room's: the admin's user form (a ban is `is_active`
off; a role is staff, superuser or the auditors' group), Django's log-out (the site's
and the admin's), password change and reset views, `manage.py changepassword`, a
password hash upgraded at log-in. None calls a service of this app; the model's and
auth's signals are the one place all of them pass through. The receivers change
nothing: they only publish a notice once the change is committed.
"""

from typing import Any

from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import receiver

from accounts.models import User
from poker_room.socket_auth import socket_sessions_notice

# The columns of a user whose change may end their sessions or their right to play.
SESSION_FIELDS = frozenset({"password", "is_active", "is_staff", "is_superuser"})


@receiver(user_logged_out)
def session_logged_out(sender: Any, request: Any, user: User | None, **kwargs: Any) -> None:
    """A log-out (before Django flushes its session): that session's sockets end."""
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if user is not None and session_key is not None:
        socket_sessions_notice(user_id=user.pk, session_key=session_key)


@receiver(post_save, sender=User)
def user_saved(
    sender: Any,
    instance: User,
    created: bool,
    raw: bool,
    update_fields: frozenset[str] | None,
    **kwargs: Any,
) -> None:
    """A saved user: their sockets are checked, unless only other columns were saved
    (the log-in's `last_login`, the table preferences)."""
    if created or raw:
        return
    if update_fields is not None and not SESSION_FIELDS & set(update_fields):
        return
    socket_sessions_notice(user_id=instance.pk)


@receiver(post_delete, sender=User)
def user_deleted(sender: Any, instance: User, **kwargs: Any) -> None:
    socket_sessions_notice(user_id=instance.pk)


@receiver(m2m_changed, sender=User.groups.through)
def user_groups_changed(
    sender: Any,
    instance: Any,
    action: str,
    reverse: bool,
    pk_set: set[int] | None,
    **kwargs: Any,
) -> None:
    """A user's groups changed (the auditors' may not play): their sockets are checked.
    From the group's side (`group.user_set`) every member named; a group cleared of
    all its members names none, and every socket is checked."""
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    if not reverse:
        socket_sessions_notice(user_id=instance.pk)
    elif pk_set:
        for user_id in pk_set:
            socket_sessions_notice(user_id=user_id)
    else:
        socket_sessions_notice(user_id=None)
