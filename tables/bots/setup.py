"""What the bots need in the database before they play: their users and their tables.

This is the one part of the bots that uses the ORM, as an admin would: creating players
and opening tables. Money and play go through the room's HTTP and WebSocket APIs only,
except in the load test's quick set-up (`bot_players_quick`), which makes thousands of
players at once: one password hash computed for all of them (`make_password` is meant
to be slow), users and logged-in sessions inserted in bulk (the session data
`django.contrib.auth.login` would store), and wallets funded through the cashier's own
`deposit_create`, in process rather than over HTTP.

Bot tables get short timers so that a run stays quick, and are reused by later runs when
nobody sits at them (two runs started at the same moment may pick the same idle table;
start concurrent runs one after the other). The N tables of a run walk through the games
and structures so that the first four already cover every game and every structure, and
twelve cover every pair (3 games x 4 structures, coprime: table i plays game i mod 3 in
structure i mod 4).
"""

import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.hashers import make_password
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import get_random_string

from accounts.models import User
from accounts.names import name_skeleton, name_skeleton_cased
from accounts.services import user_ensure
from cashier.models import AccountKind, LedgerAccount
from cashier.services import deposit_create
from tables.bots.stakes import FL, HOLDEM, NL, OMAHA, OMAHA8, PL, SL, stake_level_for
from tables.models import Table, TableStatus

BOT_PASSWORD = "pokerbots"  # noqa: S105 - the bots' known demo password
BOT_TABLE_PREFIX = "Bots"
GAMES = (OMAHA, OMAHA8, HOLDEM)
STRUCTURES = (PL, FL, NL, SL)
MAX_SEATS = 10
# Wallets: deposit up to TARGET buy-ins when they hold less than LOW (buy-ins at the max).
FUND_LOW_BUY_INS = 3
FUND_TARGET_BUY_INS = 6
# What Django's session keys are made of (django.contrib.sessions.backends.base).
SESSION_KEY_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass(frozen=True)
class BotTimers:
    """The timing settings of bot tables (short: a decision times out after 3 s)."""

    action_seconds: int = 1
    time_bank_seconds: int = 2
    reconnect_bonus_seconds: int = 2
    pause_between_hands_ms: int = 300

    def fields(self) -> dict[str, int]:
        return {
            "action_seconds": self.action_seconds,
            "time_bank_seconds": self.time_bank_seconds,
            "reconnect_bonus_seconds": self.reconnect_bonus_seconds,
            "pause_between_hands_ms": self.pause_between_hands_ms,
        }


@dataclass(frozen=True)
class TablePlan:
    """A table opened for a run."""

    id: int
    name: str
    game: str
    structure: str
    buy_in_max: int


def table_variant(index: int) -> tuple[str, str]:
    """The game and structure of the run's table number `index` (from 0)."""
    return GAMES[index % len(GAMES)], STRUCTURES[index % len(STRUCTURES)]


def bot_users_ensure(*, count: int, prefix: str, password: str = BOT_PASSWORD) -> list[str]:
    """The screen names `<prefix>001`... of `count` bot players, created when missing."""
    names = [f"{prefix}{n:03d}" for n in range(1, count + 1)]
    for name in names:
        user_ensure(username=name, password=password)
    return names


@dataclass(frozen=True)
class QuickPlayer:
    """A bot player made by the quick set-up: logged in, wallet funded."""

    username: str
    session_key: str
    wallet: int


def _bot_users(names: list[str], password: str) -> list[User]:
    """The users of these screen names, the missing ones inserted with one shared hash."""
    existing = {user.username: user for user in User.objects.filter(username__in=names)}
    missing = [name for name in names if name not in existing]
    if missing:
        hashed = make_password(password)  # once, not once per player
        User.objects.bulk_create(
            User(
                username=name,
                password=hashed,
                name_skeleton=name_skeleton(name),
                name_skeleton_cased=name_skeleton_cased(name),
            )
            for name in missing
        )
        existing.update((u.username, u) for u in User.objects.filter(username__in=missing))
    return [existing[name] for name in names]


def _sessions_create(users: list[User]) -> list[str]:
    """A logged-in session per user, as `login()` would store it; their keys, in order."""
    backend = settings.AUTHENTICATION_BACKENDS[0]
    expires = timezone.now() + timedelta(seconds=settings.SESSION_COOKIE_AGE)
    store = SessionStore()
    keys = [get_random_string(32, SESSION_KEY_CHARS) for _ in users]
    Session.objects.bulk_create(
        Session(
            session_key=key,
            session_data=store.encode(
                {
                    SESSION_KEY: str(user.pk),
                    BACKEND_SESSION_KEY: backend,
                    HASH_SESSION_KEY: user.get_session_auth_hash(),
                }
            ),
            expire_date=expires,
        )
        for key, user in zip(keys, users, strict=True)
    )
    return keys


def _wallets_fund(users: list[User], *, buy_in_max: list[int]) -> list[int]:
    """Top up each wallet holding less than LOW buy-ins of its table to TARGET; return
    the balances after, in order."""
    balances = dict(
        LedgerAccount.objects.filter(kind=AccountKind.WALLET, user__in=users).values_list(
            "user_id", "balance"
        )
    )
    after = []
    for user, high in zip(users, buy_in_max, strict=True):
        balance = balances.get(user.pk, 0)
        if balance < FUND_LOW_BUY_INS * high:
            # A fresh key: one deposit of this set-up (nothing retries it).
            amount = FUND_TARGET_BUY_INS * high - balance
            deposit_create(user=user, amount=amount, idempotency_key=f"bots-{uuid.uuid4()}")
            balance += amount
        after.append(balance)
    return after


def bot_players_quick(
    *, prefix: str, buy_in_max: list[int], password: str = BOT_PASSWORD
) -> list[QuickPlayer]:
    """Bot players `<prefix>001`..., one per entry of `buy_in_max`, logged in and funded.

    `buy_in_max[i]` is the maximum buy-in of the table that player `i` sits at.
    """
    names = [f"{prefix}{n:03d}" for n in range(1, len(buy_in_max) + 1)]
    users = _bot_users(names, password)
    keys = _sessions_create(users)
    wallets = _wallets_fund(users, buy_in_max=buy_in_max)
    return [
        QuickPlayer(username=name, session_key=key, wallet=wallet)
        for name, key, wallet in zip(names, keys, wallets, strict=True)
    ]


@transaction.atomic
def bot_tables_open(*, count: int, players: int, timers: BotTimers) -> list[TablePlan]:
    """Open `count` empty bot tables with room for `players`, reusing idle ones."""
    if not 2 <= players <= MAX_SEATS:
        raise ValueError(f"A table seats 2 to {MAX_SEATS} players, not {players}.")
    seats = max(players, 6)
    plans: list[TablePlan] = []
    for index in range(count):
        game, structure = table_variant(index)
        stake = stake_level_for(game=game, structure=structure)
        table = (
            Table.objects.filter(
                name__startswith=f"{BOT_TABLE_PREFIX} ",
                stake_level=stake,
                status=TableStatus.OPEN,
                seats__gte=players,
                seat_set__isnull=True,
            )
            .exclude(pk__in=[plan.id for plan in plans])
            .order_by("pk")
            .first()
        )
        if table is None:
            table = Table.objects.create(
                name=_free_name(f"{BOT_TABLE_PREFIX} {stake.name}"),
                stake_level=stake,
                seats=seats,
                **timers.fields(),
            )
        else:
            for name, value in timers.fields().items():
                setattr(table, name, value)
            table.save(update_fields=list(timers.fields()))
        plans.append(
            TablePlan(
                id=table.id,
                name=table.name,
                game=game,
                structure=structure,
                buy_in_max=stake.buy_in_max,
            )
        )
    return plans


def _free_name(base: str) -> str:
    number = 1
    while Table.objects.filter(name=f"{base} #{number}").exists():
        number += 1
    return f"{base} #{number}"
