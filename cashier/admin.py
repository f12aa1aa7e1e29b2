"""Admin of the ledger (read-only: the ledger is append-only) and of withdrawals, which
staff approve or reject with the two actions, through the cashier services. (The rake
accounting's admin is the tables app's.)"""

from collections.abc import Callable

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.models import User
from cashier.exceptions import CashierError
from cashier.models import (
    LedgerAccount,
    LedgerEntry,
    LedgerTransaction,
    Withdrawal,
    WithdrawalStatus,
)
from cashier.services import withdrawal_approve, withdrawal_reject


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(LedgerAccount)
class LedgerAccountAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "user", "name", "reference", "balance", "created_at")
    list_filter = ("kind",)
    search_fields = ("user__username", "name", "reference")


class LedgerEntryInline(admin.TabularInline):
    model = LedgerEntry
    fields = ("account", "amount")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(LedgerTransaction)
class LedgerTransactionAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "created_at", "user", "hand_id", "memo")
    list_filter = ("kind", "created_at")
    search_fields = ("idempotency_key", "user__username", "external_reference", "memo")
    inlines = [LedgerEntryInline]


@admin.register(Withdrawal)
class WithdrawalAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "amount", "status", "created_at", "decided_at", "decided_by")
    list_filter = ("status",)
    search_fields = ("user__username",)
    readonly_fields = (
        "user",
        "amount",
        "status",
        "created_at",
        "decided_at",
        "decided_by",
        "request_transaction",
        "settle_transaction",
    )
    actions = ["approve", "reject"]

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    @admin.action(
        description="Approve and pay out the selected withdrawals", permissions=["change"]
    )
    def approve(self, request: HttpRequest, queryset: QuerySet[Withdrawal]) -> None:
        self._decide(request, queryset, service=withdrawal_approve, verb="approved")

    @admin.action(
        description="Reject the selected withdrawals (release the chips)", permissions=["change"]
    )
    def reject(self, request: HttpRequest, queryset: QuerySet[Withdrawal]) -> None:
        self._decide(request, queryset, service=withdrawal_reject, verb="rejected")

    def _decide(
        self,
        request: HttpRequest,
        queryset: QuerySet[Withdrawal],
        *,
        service: Callable[..., Withdrawal],
        verb: str,
    ) -> None:
        decided = 0
        for withdrawal in queryset.order_by("pk"):
            if withdrawal.status != WithdrawalStatus.PENDING:
                self.message_user(
                    request,
                    f"Withdrawal #{withdrawal.pk} was left alone: it is already "
                    f"{withdrawal.get_status_display().lower()}.",
                    messages.WARNING,
                )
                continue
            try:
                service(withdrawal=withdrawal, decided_by=_as_user(request))
            except CashierError as exc:
                self.message_user(
                    request, f"Withdrawal #{withdrawal.pk}: {exc.message}", messages.ERROR
                )
            else:
                decided += 1
        if decided:
            self.message_user(request, f"{decided} withdrawal(s) {verb}.", messages.SUCCESS)


def _as_user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)  # noqa: S101 - admin views require a log-in
    return request.user
