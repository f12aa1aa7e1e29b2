"""The lobby: a read-only list of the tables a player can join, with their recent action.

`lobby_tables()` is what both the lobby page and `GET /lobby.json` show: per open (or
paused) table its game, structure, stakes, seats taken of seats, buy-in range and the
average pot of its last `AVERAGE_POT_HANDS` finished hands. A hand's pot is the sum of
its final pots before rake (`state.result.pots`). Three queries whatever the number of
tables. Money stays integer cents; the `*_label` fields are for display only.
"""

from collections import defaultdict
from functools import partial
from typing import Any

from django.db.models import Count, F, Window
from django.db.models.functions import RowNumber
from django.urls import reverse

from cashier.money import dollars as format_dollars
from tables.engine.config import LIMIT_STRUCTURES
from tables.models import Hand, HandStatus, StakeLevel, Structure, Table, TableStatus

AVERAGE_POT_HANDS = 20


# The lobby writes whole amounts bare: "$1/$2", "$40 to $200".
dollars = partial(format_dollars, compact=True)


def stakes_label(stake: StakeLevel) -> str:
    """Blinds for pot- and no-limit ("$1/$2"), bets for fixed limit ("$2/$4"), the spread
    for spread limit ("$1-$3": any bet from the smallest to the largest)."""
    if stake.structure == Structure.SPREAD_LIMIT:
        return f"{dollars(stake.spread_min)}-{dollars(stake.spread_max)}"
    if stake.structure in LIMIT_STRUCTURES:
        return f"{dollars(stake.small_bet)}/{dollars(stake.big_bet)}"
    return f"{dollars(stake.small_blind)}/{dollars(stake.big_blind)}"


def buy_in_label(stake: StakeLevel) -> str:
    return f"{dollars(stake.buy_in_min)} to {dollars(stake.buy_in_max)}"


def table_average_pots(*, table_ids: list[int], hands: int = AVERAGE_POT_HANDS) -> dict[int, int]:
    """table id -> average pot (cents, rounded down) of its last `hands` finished hands."""
    if not table_ids:
        return {}
    rows = (
        Hand.objects.filter(table_id__in=table_ids, status=HandStatus.FINISHED)
        .annotate(
            recent=Window(RowNumber(), partition_by=F("table_id"), order_by=F("number").desc())
        )
        .filter(recent__lte=hands)
        .values_list("table_id", "state__result__pots")
    )
    totals: dict[int, list[int]] = defaultdict(list)
    for table_id, pots in rows:
        totals[table_id].append(sum(int(pot["amount"]) for pot in pots or []))
    return {table_id: sum(pots) // len(pots) for table_id, pots in totals.items()}


def lobby_tables() -> list[dict[str, Any]]:
    """The tables of the lobby, as plain JSON-able rows, ordered by game, stakes, name."""
    tables = list(
        Table.objects.exclude(status=TableStatus.CLOSED)
        .select_related("stake_level")
        .annotate(seated=Count("seat_set"))
        .order_by("stake_level__game", "stake_level__structure", "stake_level__big_blind", "name")
    )
    averages = table_average_pots(table_ids=[t.id for t in tables])
    rows = []
    for table in tables:
        stake = table.stake_level
        average = averages.get(table.id)
        rows.append(
            {
                "id": table.id,
                "name": table.name,
                "url": reverse("table", args=[table.id]),
                "status": table.status,
                "game": stake.game,
                "game_label": stake.get_game_display(),
                "structure": stake.structure,
                "structure_label": stake.get_structure_display(),
                "small_blind": stake.small_blind,
                "big_blind": stake.big_blind,
                "stakes_label": stakes_label(stake),
                "buy_in_min": stake.buy_in_min,
                "buy_in_max": stake.buy_in_max,
                "buy_in_label": buy_in_label(stake),
                "seated": table.seated,
                "seats": table.seats,
                "average_pot": average,
                "average_pot_label": "—" if average is None else dollars(average),
            }
        )
    return rows
