"""Endpoints of the cashier API. Thin: serializers parse, services move, selectors read.

Errors are JSON ``{"detail": <for people>, "code": <stable>}`` (validation errors add
``"errors"`` by field). Anonymous requests get 401 (token authentication comes first, so
a `WWW-Authenticate: Token` challenge is sent). Money-moving POSTs need an
``Idempotency-Key`` header; the key is scoped to the caller and the command
(``api:<user id>:<command>:<key>``, see `cashier.idempotency`).
Auditors read the whole ledger but may not move money (403). (The daily rake report,
which reads hands, is the tables API's: tables/api/rake.py.)
"""

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from knox.auth import TokenAuthentication
from rest_framework import exceptions, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView, exception_handler

from accounts.selectors import user_can_play
from cashier.api.serializers import (
    DepositSerializer,
    LedgerEntrySerializer,
    LedgerFilterSerializer,
    LedgerPageSerializer,
    MoneyRequestSerializer,
    WalletSerializer,
    WithdrawalSerializer,
)
from cashier.exceptions import CashierError, IdempotencyKeyInvalid, IdempotencyKeyMissing
from cashier.idempotency import CLIENT_KEY_MAX, client_idempotency_key
from cashier.models import Withdrawal
from cashier.selectors import (
    ledger_entry_list,
    wallet_get,
    withdrawal_list,
    withdrawal_pending_total,
)
from cashier.services import deposit_create, withdrawal_cancel, withdrawal_request

IDEMPOTENCY_KEY_MAX = CLIENT_KEY_MAX

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    type=str,
    location=OpenApiParameter.HEADER,
    required=True,
    description="A new random key per request, the same key when retrying it.",
)

CASHIER_ERROR_STATUS = {
    "invalid_amount": status.HTTP_400_BAD_REQUEST,
    "deposit_declined": status.HTTP_402_PAYMENT_REQUIRED,
    "withdrawal_not_found": status.HTTP_404_NOT_FOUND,
    "insufficient_funds": status.HTTP_409_CONFLICT,
    "deposit_limit_exceeded": status.HTTP_409_CONFLICT,
    "withdrawal_not_pending": status.HTTP_409_CONFLICT,
    "idempotency_key_reused": status.HTTP_422_UNPROCESSABLE_ENTITY,
    "idempotency_key_missing": status.HTTP_400_BAD_REQUEST,
    "idempotency_key_invalid": status.HTTP_400_BAD_REQUEST,
}


class IdempotencyHeaderInvalid(exceptions.ValidationError):
    default_code = "idempotency_key_missing"


class NotYourAccount(exceptions.PermissionDenied):
    default_detail = "That is not your account."
    default_code = "not_your_account"


class CanMoveMoney(BasePermission):
    message = "Auditors and staff accounts can read the ledger but never move money."
    code = "auditors_cannot_move_money"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return request.method in ("GET", "HEAD", "OPTIONS") or user_can_play(user=request.user)


def cashier_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, with cashier refusals mapped and every body given a `code`."""
    if isinstance(exc, CashierError):
        return Response(
            {"detail": exc.message, "code": exc.code},
            status=CASHIER_ERROR_STATUS.get(exc.code, status.HTTP_400_BAD_REQUEST),
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    response = exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response
    detail = exc.detail
    if isinstance(exc, exceptions.ValidationError) and isinstance(detail, dict):
        field, problems = next(iter(detail.items()))
        first = problems[0] if isinstance(problems, list) else problems
        where = "" if field == "non_field_errors" else f"{field}: "
        response.data = {"detail": f"{where}{first}", "code": first.code, "errors": detail}
    elif isinstance(detail, list):
        response.data = {"detail": str(detail[0]), "code": detail[0].code}
    else:
        response.data = {"detail": str(detail), "code": getattr(detail, "code", "error")}
    return response


class CashierAPIView(APIView):
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated, CanMoveMoney]

    def get_exception_handler(self):  # type: ignore[no-untyped-def]
        return cashier_exception_handler

    def idempotency_key(self, request: Request, *, command: str) -> str:
        """The ledger key of this request: its header, namespaced by user and `command`."""
        key = request.headers.get("Idempotency-Key", "").strip()
        try:
            return client_idempotency_key(
                channel="api", user_id=request.user.pk, command=command, key=key
            )
        except IdempotencyKeyMissing as exc:
            raise IdempotencyHeaderInvalid(
                "The Idempotency-Key header is required: send a new random key "
                "(a UUID, say) with each request, and the same key when you retry it."
            ) from exc
        except IdempotencyKeyInvalid as exc:
            raise IdempotencyHeaderInvalid(
                f"The Idempotency-Key header must be printable ASCII, at most "
                f"{IDEMPOTENCY_KEY_MAX} characters.",
                code="idempotency_key_invalid",
            ) from exc

    def money_request(self, request: Request) -> int:
        """The amount asked for, after checking the key and that the wallet is the caller's."""
        serializer = MoneyRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        account = serializer.validated_data.get("account")
        if account is not None:
            wallet = wallet_get(user=request.user)
            if wallet is None or wallet.pk != account:
                raise NotYourAccount
        return serializer.validated_data["amount"]


class WalletView(CashierAPIView):
    serializer_class = WalletSerializer

    def get(self, request: Request) -> Response:
        wallet = wallet_get(user=request.user)
        data = {
            "account": wallet.pk if wallet else None,
            "balance": wallet.balance if wallet else 0,
            "pending_withdrawals": withdrawal_pending_total(user=request.user),
        }
        return Response(WalletSerializer(data).data)


class LedgerPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


class LedgerView(CashierAPIView):
    serializer_class = LedgerEntrySerializer

    @extend_schema(
        parameters=[
            LedgerFilterSerializer,
            OpenApiParameter("page", int, description="Page number, from 1."),
            OpenApiParameter("page_size", int, description="Entries per page (at most 500)."),
        ],
        responses={200: LedgerPageSerializer},
    )
    def get(self, request: Request) -> Response:
        filters = LedgerFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        entries = ledger_entry_list(viewer=request.user, **filters.validated_data)
        paginator = LedgerPagination()
        page = paginator.paginate_queryset(entries, request, view=self)
        return paginator.get_paginated_response(LedgerEntrySerializer(page, many=True).data)


class DepositView(CashierAPIView):
    @extend_schema(
        request=MoneyRequestSerializer,
        responses={201: DepositSerializer},
        parameters=[IDEMPOTENCY_HEADER],
    )
    def post(self, request: Request) -> Response:
        key = self.idempotency_key(request, command="deposit")
        amount = self.money_request(request)
        txn = deposit_create(user=request.user, amount=amount, idempotency_key=key)
        return Response(DepositSerializer(txn).data, status=status.HTTP_201_CREATED)


class WithdrawalListView(CashierAPIView):
    serializer_class = WithdrawalSerializer

    @extend_schema(responses={200: WithdrawalSerializer(many=True)})
    def get(self, request: Request) -> Response:
        withdrawals = withdrawal_list(user=request.user)
        return Response(WithdrawalSerializer(withdrawals, many=True).data)

    @extend_schema(
        request=MoneyRequestSerializer,
        responses={201: WithdrawalSerializer},
        parameters=[IDEMPOTENCY_HEADER],
    )
    def post(self, request: Request) -> Response:
        key = self.idempotency_key(request, command="withdrawal")
        amount = self.money_request(request)
        withdrawal = withdrawal_request(user=request.user, amount=amount, idempotency_key=key)
        return Response(WithdrawalSerializer(withdrawal).data, status=status.HTTP_201_CREATED)


class WithdrawalCancelView(CashierAPIView):
    """Cancel a pending withdrawal. No Idempotency-Key needed: cancelling twice is a no-op."""

    @extend_schema(
        request=None,
        responses={200: WithdrawalSerializer},
        parameters=[
            OpenApiParameter(
                "id", {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}, OpenApiParameter.PATH
            )
        ],
    )
    def post(self, request: Request, pk: int) -> Response:
        withdrawal = get_object_or_404(Withdrawal, pk=pk, user=request.user)
        withdrawal = withdrawal_cancel(withdrawal=withdrawal, user=request.user)
        return Response(WithdrawalSerializer(withdrawal).data)
