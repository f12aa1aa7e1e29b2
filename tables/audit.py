"""Ledger audit checks of the tables (found by `cashier.audit.ledger_audit`).

The table's ledger account holds the chips of everyone seated there; seat stacks change
only when a hand is settled, so the account must equal the sum of the seats' stacks at
every committed moment, hand in progress or not.
"""

from collections.abc import Iterator

from django.db.models import Sum

from cashier.audit import audit_check
from cashier.models import AccountKind, LedgerAccount
from tables.engine.state import HandState
from tables.models import Hand, HandStatus, Seat


@audit_check("table_accounts_match_seats")
def table_accounts_match_seats() -> Iterator[str]:
    seated = dict(
        Seat.objects.values("table_id")
        .annotate(total=Sum("stack"))
        .values_list("table_id", "total")
    )
    accounts = dict(
        LedgerAccount.objects.filter(kind=AccountKind.TABLE).values_list("table_id", "balance")
    )
    for table_id in sorted(set(seated) | set(accounts)):
        chips, balance = seated.get(table_id, 0), accounts.get(table_id, 0)
        if chips != balance:
            yield f"table {table_id}: ledger account {balance} != seated stacks {chips}"


@audit_check("hands_in_progress_hold_the_seated_chips")
def hands_in_progress_hold_the_seated_chips() -> Iterator[str]:
    for hand in Hand.objects.filter(status=HandStatus.IN_PROGRESS):
        state = HandState.from_dict(hand.state)
        in_play = sum(state.stacks) + state.pot_total
        if in_play != sum(state.starting_stacks):
            yield f"hand {hand.id}: {in_play} chips in play, {sum(state.starting_stacks)} dealt"
        stacks = dict(Seat.objects.filter(table_id=hand.table_id).values_list("number", "stack"))
        for seat, start in zip(state.seats, state.starting_stacks, strict=True):
            if seat in stacks and stacks[seat] != start:
                yield f"hand {hand.id}: seat {seat} holds {stacks[seat]}, started with {start}"
