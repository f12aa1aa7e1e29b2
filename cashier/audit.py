"""The ledger audit: does the book balance? And the registry other apps extend it through.

`ledger_audit()` runs every registered check on one consistent snapshot of the database
(a REPEATABLE READ, read-only transaction when it is not called inside one) and returns
an `AuditReport`. The `audit_ledger` command and the hourly `ledger_audit_task` call it.

Built-in checks
    - ``transactions_balanced``: every transaction has two or more legs summing to zero;
    - ``cached_balances``: every account's cached balance equals the sum of its legs;
    - ``no_negative_balances``: no account but the clearing one is below zero;
    - ``clearing_mirrors_cash``: the clearing balance is minus (deposits - paid withdrawals);
    - ``hold_mirrors_pending``: the hold account holds exactly the pending withdrawals.

The tables app adds its own (tables/audit.py): table accounts against seated stacks,
hands in progress, and the players' rake shares against each hand's rake.

Adding a check (the tables app, for "every table account equals the chips of the players
seated there, including chips in a hand in progress")
    Write a function taking no argument that yields one message per discrepancy (nothing
    when all is well), decorate it with `@audit_check("name")`, and put it in a module
    named ``audit.py`` in your app: `ledger_audit` imports every app's ``audit`` module
    before running, as the admin does with ``admin.py``. For example, in tables/audit.py::

        from cashier.audit import audit_check

        @audit_check("table_accounts_match_seats")
        def table_accounts_match_seats():
            for table_id, in_ledger, at_table in ...:  # one query
                if in_ledger != at_table:
                    yield f"table {table_id}: ledger {in_ledger}, seats and pots {at_table}"

    A check that raises is reported as a discrepancy, so a broken check fails the audit
    loudly instead of passing it silently.
"""

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, F, Q, QuerySet, Sum
from django.db.models.functions import Coalesce
from django.utils.module_loading import autodiscover_modules

from cashier.models import (
    AccountKind,
    LedgerAccount,
    LedgerEntry,
    LedgerTransaction,
    TransactionKind,
    Withdrawal,
    WithdrawalStatus,
)

AuditCheck = Callable[[], Iterable[str]]

_checks: dict[str, AuditCheck] = {}


def audit_check(name: str) -> Callable[[AuditCheck], AuditCheck]:
    """Register a check under `name` (registering a name again replaces the check)."""

    def register(check: AuditCheck) -> AuditCheck:
        _checks[name] = check
        return check

    return register


@dataclass(frozen=True)
class Discrepancy:
    check: str
    message: str

    def __str__(self) -> str:
        return f"[{self.check}] {self.message}"


@dataclass
class AuditReport:
    checks: list[str] = field(default_factory=list)
    discrepancies: list[Discrepancy] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    balances: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.discrepancies

    def summary(self) -> str:
        counts = ", ".join(f"{count} {name}" for name, count in self.counts.items())
        balances = ", ".join(f"{kind} {cents}" for kind, cents in self.balances.items())
        verdict = "OK" if self.ok else f"{len(self.discrepancies)} discrepancies"
        return (
            f"Ledger audit: {verdict}. {len(self.checks)} checks; {counts}.\n"
            f"Balances by account kind (cents): {balances or 'none'}."
        )


def ledger_audit() -> AuditReport:
    """Run every registered check on one snapshot of the ledger."""
    autodiscover_modules("audit")
    report = AuditReport()
    # Inside a caller's transaction (or a test's) the snapshot is the caller's to choose.
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        for name, check in _checks.items():
            report.checks.append(name)
            try:
                found = [Discrepancy(check=name, message=message) for message in check()]
            except Exception as exc:
                found = [Discrepancy(check=name, message=f"the check crashed: {exc!r}")]
            report.discrepancies.extend(found)
        report.counts = {
            "accounts": LedgerAccount.objects.count(),
            "transactions": LedgerTransaction.objects.count(),
            "entries": LedgerEntry.objects.count(),
        }
        report.balances = dict(
            LedgerAccount.objects.values_list("kind")
            .annotate(total=Sum("balance"))
            .order_by("kind")
            .values_list("kind", "total")
        )
    return report


@audit_check("transactions_balanced")
def transactions_balanced() -> Iterator[str]:
    unbalanced = (
        LedgerTransaction.objects.annotate(
            legs=Count("entries"), total=Coalesce(Sum("entries__amount"), 0)
        )
        .filter(Q(legs__lt=2) | ~Q(total=0))
        .order_by("pk")
    )
    for txn in unbalanced:
        yield f"transaction #{txn.pk} ({txn.kind}) has {txn.legs} legs summing to {txn.total}"


@audit_check("cached_balances")
def cached_balances() -> Iterator[str]:
    wrong = (
        LedgerAccount.objects.annotate(computed=Coalesce(Sum("entries__amount"), 0))
        .filter(~Q(balance=F("computed")))
        .order_by("pk")
    )
    for account in wrong:
        yield (
            f"account #{account.pk} ({account}) caches {account.balance} "
            f"but its legs sum to {account.computed}"
        )


@audit_check("no_negative_balances")
def no_negative_balances() -> Iterator[str]:
    negative = LedgerAccount.objects.exclude(kind=AccountKind.CLEARING).filter(balance__lt=0)
    for account in negative.order_by("pk"):
        yield f"account #{account.pk} ({account}) is at {account.balance}"


@audit_check("clearing_mirrors_cash")
def clearing_mirrors_cash() -> Iterator[str]:
    deposited = _sum(
        LedgerEntry.objects.filter(
            transaction__kind=TransactionKind.DEPOSIT, account__kind=AccountKind.WALLET
        ),
        "amount",
    )
    paid = _sum(Withdrawal.objects.filter(status=WithdrawalStatus.PAID), "amount")
    clearing = _sum(LedgerAccount.objects.filter(kind=AccountKind.CLEARING), "balance")
    if clearing != -(deposited - paid):
        yield (
            f"the clearing account is at {clearing}, but deposits {deposited} "
            f"minus paid withdrawals {paid} call for {-(deposited - paid)}"
        )


@audit_check("hold_mirrors_pending")
def hold_mirrors_pending() -> Iterator[str]:
    pending = _sum(Withdrawal.objects.filter(status=WithdrawalStatus.PENDING), "amount")
    held = _sum(LedgerAccount.objects.filter(kind=AccountKind.HOLD), "balance")
    if held != pending:
        yield f"the hold account is at {held}, but pending withdrawals total {pending}"


def _sum(queryset: QuerySet[Any], column: str) -> int:
    return queryset.aggregate(total=Coalesce(Sum(column), 0))["total"]
