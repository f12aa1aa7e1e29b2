"""What the bots need in the database before they play: their users and their tables.

This is the one part of the bots that uses the ORM, as an admin would: creating players
and opening tables. Money and play go through the room's HTTP and WebSocket APIs only.

Bot tables get short timers so that a run stays quick, and are reused by later runs when
nobody sits at them (two runs started at the same moment may pick the same idle table;
start concurrent runs one after the other). The N tables of a run walk through the games
and structures so that the first four already cover every game and every structure, and
twelve cover every pair (3 games x 4 structures, coprime: table i plays game i mod 3 in
structure i mod 4).
"""

from dataclasses import dataclass

from django.db import transaction

from accounts.services import user_ensure
from tables.bots.stakes import FL, HOLDEM, NL, OMAHA, OMAHA8, PL, SL, stake_level_for
from tables.models import Table, TableStatus

BOT_PASSWORD = "pokerbots"  # noqa: S105 - the bots' known demo password
BOT_TABLE_PREFIX = "Bots"
GAMES = (OMAHA, OMAHA8, HOLDEM)
STRUCTURES = (PL, FL, NL, SL)
MAX_SEATS = 10


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
