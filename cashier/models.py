"""The chip ledger: double-entry bookkeeping in integer cents (modelled on django-hordak).

Design
======

Accounts
    A `LedgerAccount` holds chips. Its kind says whose:

    - ``wallet``: one per player, the cashier balance they can play or withdraw;
    - ``table``: one per table of the room, holding the chips of everyone seated there
      (stacks and chips in a hand in progress; the tables layer tracks who owns what).
      The ledger knows it by an opaque ``reference`` its owner chooses, and a ``name``
      to show: the cashier imports nothing of the tables app (``accounts <- cashier <-
      tables``), the tables layer passes its table's account to the table movements;
    - ``house``: the rake the room has taken (one);
    - ``hold``: withdrawals requested and not yet decided (one);
    - ``clearing``: the outside world (one). Deposits come from it and paid withdrawals
      go to it, so its balance is minus the chips in the room: it is the only account
      allowed below zero.

Transactions and legs
    Every movement is one `LedgerTransaction` with two or more `LedgerEntry` legs. A leg
    is a signed amount of cents: positive adds chips to its account, negative takes them
    away; zero legs are refused. The legs of a transaction sum to zero, so chips are
    never created or destroyed, only moved, and the balances of all accounts sum to zero.

    ============================  ====================================
    movement                      legs
    ============================  ====================================
    deposit                       clearing -x, wallet +x
    withdrawal request            wallet -x, hold +x
    withdrawal paid (approved)    hold -x, clearing +x
    withdrawal released           hold -x, wallet +x  (rejected, cancelled)
    buy-in, top-up                wallet -x, table +x
    cash-out                      table -x, wallet +x
    rake                          table -x, house +x
    ============================  ====================================

Invariants, and where they live
    In PostgreSQL, so that nothing written behind the services' back can break them:

    - a deferred constraint trigger rejects, at commit, any transaction whose legs do not
      sum to zero or that has fewer than two legs (migration 0002);
    - ``amount <> 0`` on every leg (CHECK);
    - legs and transactions are append-only: a trigger refuses UPDATE and DELETE;
      a mistake is corrected by a new, reversing transaction;
    - ``balance >= 0`` on every account but the clearing one (CHECK);
    - one wallet per player, one account per table reference, one of each system account
      (unique); a table account has a reference, no other kind has one (CHECK);
    - ``idempotency_key`` is unique, so a retried request cannot post twice.

    In the posting service (`cashier.services`): the same balance rule (checked before
    any leg or balance is written, to give a clear error; a refusal rolls back the
    movement's transaction row, written first to claim its key), row locks, and
    idempotency.

Cached balances
    `LedgerAccount.balance` caches the sum of the account's legs so that funds can be
    checked on one locked row. The posting service updates it under that row lock;
    `cashier.audit.ledger_audit` recomputes every balance from the legs and reports any
    difference.

Withdrawals
    A `Withdrawal` follows the request: ``pending`` (amount held) then ``paid``,
    ``rejected`` or ``cancelled``, each step a ledger transaction linked from it.

Deposits are ledger transactions of kind ``deposit`` carrying the payment gateway's
reference; they need no table of their own.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class AccountKind(models.TextChoices):
    WALLET = "wallet", "Player wallet"
    TABLE = "table", "Table"
    HOUSE = "house", "House rake"
    HOLD = "hold", "Withdrawal hold"
    CLEARING = "clearing", "External clearing"


# Kinds with exactly one account in the room.
SYSTEM_KINDS = (AccountKind.HOUSE, AccountKind.HOLD, AccountKind.CLEARING)


class LedgerAccount(models.Model):
    kind = models.CharField(max_length=8, choices=AccountKind.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ledger_accounts",
    )
    # A table account is known by its owner's opaque reference (the tables layer's
    # choice, such as ``table:12``) and shown under a name; the ledger never looks inside.
    reference = models.CharField(max_length=64, blank=True, default="")
    name = models.CharField(max_length=100, blank=True, default="")
    balance = models.BigIntegerField(default=0, help_text="Cents; the sum of the legs.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(balance__gte=0) | Q(kind=AccountKind.CLEARING),
                name="cashier_account_balance_non_negative",
            ),
            models.CheckConstraint(
                condition=Q(kind=AccountKind.WALLET, user__isnull=False)
                | (~Q(kind=AccountKind.WALLET) & Q(user__isnull=True)),
                name="cashier_account_wallet_has_user",
            ),
            models.CheckConstraint(
                condition=(Q(kind=AccountKind.TABLE) & ~Q(reference=""))
                | (~Q(kind=AccountKind.TABLE) & Q(reference="")),
                name="cashier_account_table_has_reference",
            ),
            models.UniqueConstraint(
                fields=["user"],
                condition=Q(kind=AccountKind.WALLET),
                name="cashier_account_one_wallet_per_user",
            ),
            models.UniqueConstraint(
                fields=["reference"],
                condition=Q(kind=AccountKind.TABLE),
                name="cashier_account_one_per_table_reference",
            ),
            models.UniqueConstraint(
                fields=["kind"],
                condition=Q(kind__in=SYSTEM_KINDS),
                name="cashier_account_one_per_system_kind",
            ),
        ]

    def __str__(self) -> str:
        if self.kind == AccountKind.WALLET:
            return f"wallet of {self.user}"
        if self.kind == AccountKind.TABLE:
            return f"table {self.name or self.reference}"
        return self.get_kind_display()


class TransactionKind(models.TextChoices):
    DEPOSIT = "deposit", "Deposit"
    WITHDRAWAL_REQUEST = "withdrawal_request", "Withdrawal requested"
    WITHDRAWAL_PAID = "withdrawal_paid", "Withdrawal paid"
    WITHDRAWAL_RELEASE = "withdrawal_release", "Withdrawal released"
    BUY_IN = "buy_in", "Table buy-in"
    TOP_UP = "top_up", "Table top-up"
    CASH_OUT = "cash_out", "Table cash-out"
    RAKE = "rake", "Rake"


class LedgerTransaction(models.Model):
    kind = models.CharField(max_length=20, choices=TransactionKind.choices)
    memo = models.CharField(max_length=200, blank=True)
    idempotency_key = models.CharField(max_length=200, unique=True)
    # SHA-256 of the request's parameters: a retry with the same key must match it.
    fingerprint = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    # References, for reading the ledger; the legs alone define the movement.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ledger_transactions",
    )
    hand_id = models.BigIntegerField(null=True, blank=True)
    external_reference = models.CharField(
        max_length=100, blank=True, help_text="The payment gateway's reference, for deposits."
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"#{self.pk} {self.get_kind_display()}"


class LedgerEntry(models.Model):
    transaction = models.ForeignKey(
        LedgerTransaction, on_delete=models.PROTECT, related_name="entries"
    )
    account = models.ForeignKey(LedgerAccount, on_delete=models.PROTECT, related_name="entries")
    amount = models.BigIntegerField(help_text="Cents; positive adds to the account.")

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "ledger entries"
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="cashier_entry_amount_non_zero"),
        ]

    def __str__(self) -> str:
        return f"{self.amount:+d} on {self.account}"


class WithdrawalStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    PAID = "paid", "Paid"
    REJECTED = "rejected", "Rejected"
    CANCELLED = "cancelled", "Cancelled"


class Withdrawal(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="withdrawals"
    )
    amount = models.BigIntegerField()
    status = models.CharField(
        max_length=9, choices=WithdrawalStatus.choices, default=WithdrawalStatus.PENDING
    )
    created_at = models.DateTimeField(default=timezone.now)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    request_transaction = models.OneToOneField(
        LedgerTransaction, on_delete=models.PROTECT, related_name="withdrawal_requested"
    )
    settle_transaction = models.OneToOneField(
        LedgerTransaction,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="withdrawal_settled",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="cashier_withdrawal_positive"),
            models.CheckConstraint(
                condition=Q(status=WithdrawalStatus.PENDING, settle_transaction__isnull=True)
                | (~Q(status=WithdrawalStatus.PENDING) & Q(settle_transaction__isnull=False)),
                name="cashier_withdrawal_settled_iff_decided",
            ),
        ]

    def __str__(self) -> str:
        return f"withdrawal #{self.pk} of {self.amount} cents by {self.user} ({self.status})"
