"""Rake accounting: who paid each hand's rake, and the daily rake reports (RULES.md §6).

The ledger moves each hand's rake from the table's account to the house
(`cashier.services.hand_rake_collect`). This module, of the tables app because it reads
hands and their players (the cashier knows nothing of tables), attributes it and sums it
up; players are always found by user id (`HandPlayer.user_id`), never by screen name:

- `rake_contributions` gives each player's share of a hand's rake as the engine
  computed it (`HandResult.contributed_rake`: proportional to what each put in the pots,
  floored, left-over cents to the largest contributors, finer point 13). The tables layer
  writes them while settling the hand, in the same transaction as the rake posting, so a
  hand's contributions exist exactly when its rake does. The audit check
  ``rake_contributions_match_hands`` (tables/audit.py) verifies that they sum to it.
- `rake_report_build` rebuilds the report of one UTC day from the hands that ended that
  day: per table (with its stake level), per player, and the day's totals. Rebuilding a
  day replaces its rows, so the beat task (`rake_report_daily_task`) and a manual rebuild
  are idempotent. Builds of the same day are serialized by an advisory lock.
- `rake_report_get` reads a built report.

Amounts are integer cents; a day's average rake per hand is rounded down to the cent.
"""

import datetime
from collections.abc import Mapping
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce

from tables.engine.state import HandState
from tables.models import (
    Hand,
    HandStatus,
    RakeContribution,
    RakeReport,
    RakeReportPlayer,
    RakeReportTable,
)

# Namespace of the advisory locks taken while a day's report is rebuilt.
_REPORT_LOCK_NAMESPACE = 0x5241_4B45  # "RAKE"


def rake_contributions(
    *, hand: Hand, state: HandState, players: Mapping[int, int]
) -> list[RakeContribution]:
    """The non-zero rake shares of a finished hand, one row per player, to be written in
    the transaction that settles it (the settling command writes them with its others).

    Each share goes to the user dealt in at its seat: `players`, seat -> user id, as the
    settling command knows them (`TableCommand.dealt`, from the deal's `HandPlayer` rows;
    by user id, never by screen name, which may have been renamed and taken by someone
    else since the hand was dealt).
    """
    result = state.result
    if result is None:
        raise ValueError("only a finished hand has contributed rake")
    return [
        RakeContribution(hand=hand, player_id=players[seat], seat=seat, amount=amount)
        for seat, amount in zip(state.seats, result.contributed_rake, strict=True)
        if amount
    ]


def day_bounds(*, day: datetime.date) -> tuple[datetime.datetime, datetime.datetime]:
    """The UTC instants a day starts (inclusive) and ends (exclusive)."""
    start = datetime.datetime.combine(day, datetime.time.min, tzinfo=datetime.UTC)
    return start, start + datetime.timedelta(days=1)


def rake_report_build(*, day: datetime.date) -> RakeReport:
    """Build (or rebuild, replacing it) the rake report of a UTC day."""
    start, end = day_bounds(day=day)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, %s)", [_REPORT_LOCK_NAMESPACE, day.toordinal()]
            )
        hands = Hand.objects.filter(
            status=HandStatus.FINISHED, ended_at__gte=start, ended_at__lt=end
        )
        per_table = list(
            hands.values("table_id", "table__stake_level_id")
            .annotate(
                hand_count=Count("id"),
                raked_count=Count("id", filter=Q(rake__gt=0)),
                rake_total=Coalesce(Sum("rake"), 0),
            )
            .order_by("table_id")
        )
        per_player = list(
            RakeContribution.objects.filter(hand__in=hands)
            .values("player_id")
            .annotate(raked_count=Count("id"), rake_total=Sum("amount"))
            .order_by("player_id")
        )
        RakeReport.objects.filter(date=day).delete()
        report = RakeReport.objects.create(
            date=day,
            hands=sum(row["hand_count"] for row in per_table),
            raked_hands=sum(row["raked_count"] for row in per_table),
            rake=sum(row["rake_total"] for row in per_table),
        )
        RakeReportTable.objects.bulk_create(
            RakeReportTable(
                report=report,
                table_id=row["table_id"],
                stake_level_id=row["table__stake_level_id"],
                hands=row["hand_count"],
                raked_hands=row["raked_count"],
                rake=row["rake_total"],
            )
            for row in per_table
        )
        RakeReportPlayer.objects.bulk_create(
            RakeReportPlayer(
                report=report,
                player_id=row["player_id"],
                raked_hands=row["raked_count"],
                rake=row["rake_total"],
            )
            for row in per_player
        )
    return report


@dataclass(frozen=True)
class StakeLevelRake:
    """A report's tables of one stake level, added up."""

    stake_level_id: int
    stake_level: str
    hands: int
    raked_hands: int
    rake: int

    @property
    def average_rake(self) -> int:
        return self.rake // self.hands if self.hands else 0


def rake_report_get(*, day: datetime.date) -> RakeReport | None:
    """The built report of a day (None before it is built)."""
    return RakeReport.objects.filter(date=day).first()


def rake_report_tables(*, report: RakeReport) -> list[RakeReportTable]:
    return list(report.tables.select_related("table", "stake_level").order_by("table__name"))


def rake_report_players(*, report: RakeReport) -> list[RakeReportPlayer]:
    """The report's players, most rake first (ties by user id: a stable order)."""
    return list(report.players.select_related("player").order_by("-rake", "player_id"))


def rake_report_stake_levels(*, tables: list[RakeReportTable]) -> list[StakeLevelRake]:
    """The table rows of a report summed per stake level, by stake level name."""
    totals: dict[int, StakeLevelRake] = {}
    for row in tables:
        seen = totals.get(row.stake_level_id)
        totals[row.stake_level_id] = StakeLevelRake(
            stake_level_id=row.stake_level_id,
            stake_level=row.stake_level.name,
            hands=row.hands + (seen.hands if seen else 0),
            raked_hands=row.raked_hands + (seen.raked_hands if seen else 0),
            rake=row.rake + (seen.rake if seen else 0),
        )
    return sorted(totals.values(), key=lambda total: total.stake_level)
