"""Services that create and change users (HackSoft style: `<entity>_<action>`, keyword-only).

Login throttling
    `login_throttle_check` / `login_failure_record` / `login_success_clear` form a small
    limiter kept in the cache (Redis), called by the log-in forms of the site and of the
    admin. Failures are counted per (screen name, client address) and per client address
    alone, each in a fixed window of `LOGIN_THROTTLE_WINDOW` seconds from the first
    failure; past `LOGIN_THROTTLE_FAILURES` (or `LOGIN_THROTTLE_FAILURES_PER_ADDRESS`)
    further attempts are refused, with the right password too, until the window ends.
    Counting per pair means a stranger guessing at a player's password locks out only
    themselves and whoever shares their address (behind one NAT, or on one IPv6 /64);
    the per-address count stops one address sweeping many screen names. The address is
    REMOTE_ADDR (the proxy in front must set it to the client's), an IPv6 client's
    counted under its /64 network (poker_room/addresses.py).

API tokens
    Auditors read the API with tokens of django-rest-knox: the database keeps only a
    SHA-512 digest and the first characters (`token_key`, shown to tell tokens apart),
    and each token expires `REST_KNOX["TOKEN_TTL"]` after it was made. The token itself
    exists only in the answer that creates it (`api_token_create`): shown once, never
    again. `api_token_revoke` deletes one of the auditor's own tokens.
"""

import hashlib
import logging
import secrets

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone
from knox.models import AuthToken

from accounts.models import AUDITOR_GROUP, User
from accounts.selectors import user_is_auditor, user_name_conflict
from poker_room.throttling import CACHE_DOWN_ERRORS

logger = logging.getLogger(__name__)

LOGIN_THROTTLE_FAILURES = 5
LOGIN_THROTTLE_FAILURES_PER_ADDRESS = 30
LOGIN_THROTTLE_WINDOW = 15 * 60


class ApiTokenError(Exception):
    """An API token cannot be made or revoked; `code` is stable, the message for people."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


class LoginThrottled(Exception):
    """Too many failed log-ins from this address, for this screen name or for any."""

    def __init__(self) -> None:
        super().__init__(
            "Too many failed log-in attempts. "
            f"Try again in {LOGIN_THROTTLE_WINDOW // 60} minutes at most."
        )


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
        user.groups.add(_auditor_group())
    return user, True


class ScreenNameUnavailable(Exception):
    """The screen name is taken, or looks like one that is (see accounts.names)."""

    code = "screen_name_taken"

    def __init__(self, username: str) -> None:
        super().__init__(
            f"The screen name “{username}” is taken or looks like one that is "
            "(screen names ignore case and look-alike letters)."
        )


def user_sign_up(*, username: str, password: str, email: str = "") -> User:
    """Create a player, refusing a screen name that is taken or looks like a taken one.

    The check is the friendly word; the unique constraints on lower(username) and on
    `name_skeleton` decide a race, and their refusal is the same ScreenNameUnavailable.
    """
    username = User.normalize_username(username)
    if user_name_conflict(username=username) is not None:
        raise ScreenNameUnavailable(username)
    try:
        with transaction.atomic():
            return User.objects.create_user(username=username, password=password, email=email)
    except IntegrityError as exc:
        raise ScreenNameUnavailable(username) from exc


def user_preferences_update(
    *, user: User, auto_muck: bool, chop_blinds: bool, four_color_deck: bool
) -> User:
    user.auto_muck = auto_muck
    user.chop_blinds = chop_blinds
    user.four_color_deck = four_color_deck
    user.save(update_fields=["auto_muck", "chop_blinds", "four_color_deck"])
    return user


@transaction.atomic
def auditor_create(*, username: str, password: str | None = None) -> tuple[User, str, str]:
    """Create an auditor: no staff rights, member of `auditor`, with an API token.

    Returns the user, the password (random when none is given) and the token, which is
    stored only hashed: this is the one time it can be read.
    """
    password = password or secrets.token_urlsafe(18)
    user = User.objects.create_user(username=username, password=password)
    user.groups.add(_auditor_group())
    _instance, token = api_token_create(user=user)
    return user, password, token


@transaction.atomic
def api_token_create(*, user: User) -> tuple[AuthToken, str]:
    """Make an API token for an auditor: the stored row and the token (shown once).

    Expired tokens of the user are deleted first; at most API_TOKEN_LIMIT_PER_USER live.
    """
    if not user_is_auditor(user=user):
        raise ApiTokenError("Only auditors use API tokens.", code="not_an_auditor")
    # Lock the user row: two parallel "create" clicks cannot both pass the limit.
    User.objects.select_for_update().filter(pk=user.pk).first()
    user.auth_token_set.filter(expiry__lt=timezone.now()).delete()
    if user.auth_token_set.count() >= settings.API_TOKEN_LIMIT_PER_USER:
        raise ApiTokenError(
            f"You have {settings.API_TOKEN_LIMIT_PER_USER} tokens already: revoke one first.",
            code="too_many_tokens",
        )
    return AuthToken.objects.create(user=user)


def api_token_revoke(*, user: User, digest: str) -> None:
    """Delete one of the user's own tokens (by its digest); another's is not found."""
    deleted, _ = AuthToken.objects.filter(user=user, digest=digest).delete()
    if not deleted:
        raise ApiTokenError("No such token (revoked or expired already).", code="not_found")


def login_throttle_check(*, username: str, address: str) -> None:
    """Raise LoginThrottled if this screen name and address may not try to log in now.

    The counters live in the Redis cache. While it cannot be reached, log-ins are let
    through unthrottled (with a warning) rather than refused: an outage of the cache
    must not lock every player out of a room whose money lives in PostgreSQL.
    """
    try:
        counts = [
            ((cache.get(key) or 0), limit)
            for key, limit in _throttle_keys(username=username, address=address)
        ]
    except CACHE_DOWN_ERRORS as exc:
        logger.warning("log-in limiter not applied: the cache is unavailable (%s)", exc)
        return
    if any(count >= limit for count, limit in counts):
        raise LoginThrottled


def login_failure_record(*, username: str, address: str) -> None:
    try:
        for key, _limit in _throttle_keys(username=username, address=address):
            # add() starts the window only if no count exists; incr() is atomic in Redis.
            cache.add(key, 0, timeout=LOGIN_THROTTLE_WINDOW)
            try:
                cache.incr(key)
            except ValueError:  # the window ended between add() and incr()
                cache.set(key, 1, timeout=LOGIN_THROTTLE_WINDOW)
    except CACHE_DOWN_ERRORS as exc:
        logger.warning("log-in failure not counted: the cache is unavailable (%s)", exc)


def login_success_clear(*, username: str, address: str) -> None:
    """A successful log-in forgives the pair's failures (not the address's)."""
    pair_key, _limit = _throttle_keys(username=username, address=address)[0]
    try:
        cache.delete(pair_key)
    except CACHE_DOWN_ERRORS as exc:
        logger.warning("log-in failures not cleared: the cache is unavailable (%s)", exc)


def _throttle_keys(*, username: str, address: str) -> list[tuple[str, int]]:
    # Hashed: screen names typed at the log-in form may be anything.
    pair = hashlib.sha256(f"{username.lower()}\0{address}".encode()).hexdigest()
    return [
        (f"login-fail:pair:{pair}", LOGIN_THROTTLE_FAILURES),
        (f"login-fail:addr:{address}", LOGIN_THROTTLE_FAILURES_PER_ADDRESS),
    ]


def _auditor_group() -> Group:
    # get_or_create: the data migration made it, but a flushed test database has not.
    group, _ = Group.objects.get_or_create(name=AUDITOR_GROUP)
    return group
