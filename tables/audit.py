"""Ledger audit checks of the tables (found by `cashier.audit.ledger_audit`).

The table's ledger account holds the chips of everyone seated there; seat stacks change
only when a hand is settled, so the account must equal the sum of the seats' stacks at
every committed moment, hand in progress or not. A finished hand's rake is attributed to
its players (tables/rake.py): their shares must sum to it.
"""

from collections.abc import Iterator

from django.db.models import F, Q, Sum
from django.db.models.functions import Coalesce

from cashier.audit import audit_check
from cashier.models import AccountKind, LedgerAccount
from tables.engine.state import HandState
from tables.ledger import table_ledger_reference
from tables.models import Hand, HandStatus, Seat


@audit_check("table_accounts_match_seats")
def table_accounts_match_seats() -> Iterator[str]:
    seated = {
        table_ledger_reference(table_id=table_id): total
        for table_id, total in Seat.objects.values("table_id")
        .annotate(total=Sum("stack"))
        .values_list("table_id", "total")
    }
    accounts = dict(
        LedgerAccount.objects.filter(kind=AccountKind.TABLE).values_list("reference", "balance")
    )
    for reference in sorted(set(seated) | set(accounts)):
        chips, balance = seated.get(reference, 0), accounts.get(reference, 0)
        if chips != balance:
            yield f"{reference}: ledger account {balance} != seated stacks {chips}"


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


@audit_check("rake_contributions_match_hands")
def rake_contributions_match_hands() -> Iterator[str]:
    wrong = (
        Hand.objects.filter(status=HandStatus.FINISHED)
        .annotate(contributed=Coalesce(Sum("rake_contributions__amount"), 0))
        .filter(~Q(contributed=F("rake")))
        .order_by("pk")
    )
    for hand in wrong.only("pk", "rake"):
        yield f"hand #{hand.pk} raked {hand.rake} but its players' shares sum to {hand.contributed}"
