"""The cashier page: balance, deposit, withdraw, pending withdrawals, history. Thin views:
the forms parse, the services move money, the selectors read."""

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.selectors import user_can_play
from cashier.exceptions import CashierError
from cashier.forms import MoneyForm
from cashier.idempotency import client_idempotency_key
from cashier.models import Withdrawal, WithdrawalStatus
from cashier.selectors import (
    wallet_balance,
    wallet_entry_list,
    withdrawal_list,
    withdrawal_pending_total,
)
from cashier.services import deposit_create, withdrawal_cancel, withdrawal_request
from cashier.templatetags.money import chips

HISTORY_PAGE_SIZE = 20


@login_required
@require_GET
def cashier_page(request: HttpRequest) -> HttpResponse:
    return _render(request)


@login_required
@require_POST
def deposit(request: HttpRequest) -> HttpResponse:
    return _move(request, prefix="deposit", service=deposit_create, done="Deposited")


@login_required
@require_POST
def withdraw(request: HttpRequest) -> HttpResponse:
    return _move(
        request, prefix="withdraw", service=withdrawal_request, done="Withdrawal requested:"
    )


@login_required
@require_POST
def withdrawal_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    withdrawal = get_object_or_404(Withdrawal, pk=pk, user=request.user)
    try:
        withdrawal_cancel(withdrawal=withdrawal, user=request.user)
    except CashierError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Withdrawal of {chips(withdrawal.amount)} cancelled.")
    return redirect("cashier")


def _move(
    request: HttpRequest, *, prefix: str, service: Callable[..., Any], done: str
) -> HttpResponse:
    if not user_can_play(user=request.user):
        raise PermissionDenied("Auditors and staff accounts cannot move money.")
    form = MoneyForm(request.POST, prefix=prefix)
    if form.is_valid():
        amount = form.cleaned_data["amount"]
        key = client_idempotency_key(
            channel="web",
            user_id=request.user.pk,
            command=prefix,
            key=str(form.cleaned_data["idempotency_key"]),
        )
        try:
            result = service(user=request.user, amount=amount, idempotency_key=key)
        except CashierError as exc:
            form.add_error("amount", exc.message)
        else:
            if isinstance(result, Withdrawal) and result.status != WithdrawalStatus.PENDING:
                # The form sent again (its key) after the withdrawal was decided: the
                # replay moved nothing; do not announce a request that is not pending.
                messages.info(
                    request,
                    f"This withdrawal of {chips(amount)} was already requested, "
                    f"and is now {result.get_status_display().lower()}.",
                )
            else:
                messages.success(request, f"{done} {chips(amount)}.")
            return redirect("cashier")
    return _render(request, status=400, **{f"{prefix}_form": form})


def _render(request: HttpRequest, *, status: int = 200, **forms: MoneyForm) -> HttpResponse:
    history = Paginator(wallet_entry_list(user=request.user), HISTORY_PAGE_SIZE)
    context = {
        "balance": wallet_balance(user=request.user),
        "pending_total": withdrawal_pending_total(user=request.user),
        "pending": withdrawal_list(user=request.user, status=WithdrawalStatus.PENDING),
        "history": history.get_page(request.GET.get("page")),
        "can_play": user_can_play(user=request.user),
        "deposit_form": forms.get("deposit_form") or MoneyForm(prefix="deposit"),
        "withdraw_form": forms.get("withdraw_form") or MoneyForm(prefix="withdraw"),
    }
    return render(request, "cashier/cashier.html", context, status=status)
