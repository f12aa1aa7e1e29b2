"""Seating over HTTP: sit down with a buy-in, top up, leave (`/api/tables/<id>/...`).

The same services as the WebSocket commands, for scripts and for any client that moves
money over plain HTTP: each POST takes an `Idempotency-Key`, and a refusal is a 4xx with
`{"detail", "code"}` that changed nothing. A retry with the same key gets the first
answer (201 and the seat for a sit, while that seat is still there) and moves nothing;
a key whose seat is gone is refused (`idempotency_key_reused`). Playing itself happens
over the WebSocket.
"""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from cashier.api.serializers import CentsField
from cashier.api.views import (
    CASHIER_ERROR_STATUS,
    IDEMPOTENCY_HEADER,
    CashierAPIView,
    cashier_exception_handler,
)
from tables.exceptions import TableError
from tables.services import seating

TABLE_ERROR_STATUS = {
    **CASHIER_ERROR_STATUS,
    "table_not_found": status.HTTP_404_NOT_FOUND,
    "table_closed": status.HTTP_409_CONFLICT,
    "seat_unavailable": status.HTTP_409_CONFLICT,
    "not_seated": status.HTTP_409_CONFLICT,
    "hand_in_progress": status.HTTP_409_CONFLICT,
    "buy_in_out_of_range": status.HTTP_400_BAD_REQUEST,
}


def table_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, TableError):
        return Response(
            {"detail": exc.message, "code": exc.code},
            status=TABLE_ERROR_STATUS.get(exc.code, status.HTTP_400_BAD_REQUEST),
        )
    return cashier_exception_handler(exc, context)


class SitSerializer(serializers.Serializer):
    seat = serializers.IntegerField(min_value=1, max_value=10)
    buy_in = CentsField()
    post_big_blind = serializers.BooleanField(default=False)


class TopUpSerializer(serializers.Serializer):
    amount = CentsField()


class SeatSerializer(serializers.Serializer):
    seat = serializers.IntegerField(source="number")
    stack = serializers.IntegerField()
    status = serializers.CharField()


class LeaveSerializer(serializers.Serializer):
    left = serializers.BooleanField(help_text="False: you leave when the hand you are in ends.")


class TableAPIView(CashierAPIView):
    def get_exception_handler(self):  # type: ignore[no-untyped-def]
        return table_exception_handler


class SitView(TableAPIView):
    @extend_schema(
        request=SitSerializer, responses={201: SeatSerializer}, parameters=[IDEMPOTENCY_HEADER]
    )
    def post(self, request: Request, pk: int) -> Response:
        key = self.idempotency_key(request, command="sit")
        data = SitSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        seat = seating.seat_take(
            table_id=pk,
            user=request.user,
            seat_number=data.validated_data["seat"],
            buy_in=data.validated_data["buy_in"],
            post_big_blind=data.validated_data["post_big_blind"],
            idempotency_key=key,
        )
        return Response(SeatSerializer(seat).data, status=status.HTTP_201_CREATED)


class TopUpView(TableAPIView):
    @extend_schema(
        request=TopUpSerializer, responses={200: SeatSerializer}, parameters=[IDEMPOTENCY_HEADER]
    )
    def post(self, request: Request, pk: int) -> Response:
        key = self.idempotency_key(request, command="top_up")
        data = TopUpSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        seat = seating.seat_top_up(
            table_id=pk,
            user=request.user,
            amount=data.validated_data["amount"],
            idempotency_key=key,
        )
        return Response(SeatSerializer(seat).data)


class LeaveView(TableAPIView):
    @extend_schema(request=None, responses={200: LeaveSerializer})
    def post(self, request: Request, pk: int) -> Response:
        return Response({"left": seating.seat_leave(table_id=pk, user=request.user)})
