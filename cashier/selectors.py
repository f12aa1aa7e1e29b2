"""Read-only queries of the cashier (HackSoft selectors, `<entity>_<action>`)."""

from datetime import datetime

from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, QuerySet, Subquery, Sum

from accounts.models import User
from accounts.selectors import user_is_auditor
from cashier.models import AccountKind, LedgerAccount, LedgerEntry, Withdrawal, WithdrawalStatus


def wallet_get(*, user: User) -> LedgerAccount | None:
    """The player's wallet, or None before their first movement."""
    return LedgerAccount.objects.filter(kind=AccountKind.WALLET, user=user).first()


def wallet_balance(*, user: User) -> int:
    wallet = wallet_get(user=user)
    return wallet.balance if wallet else 0


def withdrawal_pending_total(*, user: User) -> int:
    pending = Withdrawal.objects.filter(user=user, status=WithdrawalStatus.PENDING)
    return pending.aggregate(total=Sum("amount"))["total"] or 0


def withdrawal_list(*, user: User, status: WithdrawalStatus | None = None) -> QuerySet[Withdrawal]:
    withdrawals = Withdrawal.objects.filter(user=user)
    if status is not None:
        withdrawals = withdrawals.filter(status=status)
    return withdrawals.order_by("-created_at", "-id")


def wallet_entry_list(*, user: User) -> QuerySet[LedgerEntry]:
    """The legs on the player's wallet, newest first: their cashier movements.

    Each leg carries ``place``: the name of the table account on the other side of a
    buy-in, top-up or cash-out (None for other movements).
    """
    table_side = LedgerEntry.objects.filter(
        transaction=OuterRef("transaction"), account__kind=AccountKind.TABLE
    ).values("account__name")[:1]
    return (
        LedgerEntry.objects.filter(account__kind=AccountKind.WALLET, account__user=user)
        .select_related("transaction")
        .annotate(place=Subquery(table_side))
        .order_by("-transaction__created_at", "-id")
    )


def ledger_entry_list(
    *,
    viewer: User,
    username: str | None = None,
    user_id: int | None = None,
    account_kind: str | None = None,
    transaction_kind: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[LedgerEntry]:
    """Ledger legs the viewer may read, filtered; newest first.

    Auditors read every leg of every account; anyone else reads the legs on their own
    wallet only, and asking for another player's (by screen name or user id) raises
    PermissionDenied. `since` is inclusive and `until` exclusive.
    """
    entries = LedgerEntry.objects.select_related("transaction", "account", "account__user")
    if user_is_auditor(user=viewer):
        if username:
            entries = entries.filter(account__user__username__iexact=username)
        if user_id is not None:
            entries = entries.filter(account__user_id=user_id)
    else:
        other_name = username and username.lower() != viewer.username.lower()
        if other_name or user_id not in (None, viewer.pk):
            raise PermissionDenied("Players see their own ledger entries only.")
        entries = entries.filter(account__kind=AccountKind.WALLET, account__user=viewer)
    if account_kind:
        entries = entries.filter(account__kind=account_kind)
    if transaction_kind:
        entries = entries.filter(transaction__kind=transaction_kind)
    if since:
        entries = entries.filter(transaction__created_at__gte=since)
    if until:
        entries = entries.filter(transaction__created_at__lt=until)
    return entries.order_by("-transaction__created_at", "-id")
