"""Seating over HTTP: sit down with a buy-in, top up, leave (`/api/tables/<id>/...`).

The same services as the WebSocket commands, for scripts and for any client that moves
money over plain HTTP: each POST takes an `Idempotency-Key`, and a refusal is a 4xx with
`{"detail", "code"}` that changed nothing. A retry with the same key gets the first
answer (201 and the seat for a sit, while that seat is still there) and moves nothing;
a key whose seat is gone is refused (`idempotency_key_reused`). Playing itself happens
over the WebSocket.
"""

import dataclasses
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
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
from tables import capacity
from tables.commands import Command, CommandError, Leave, Sit, TopUp, field_check, field_type
from tables.exceptions import RoomBusy, TableBusy, TableError

TABLE_ERROR_STATUS = {
    **CASHIER_ERROR_STATUS,
    "table_not_found": status.HTTP_404_NOT_FOUND,
    "table_busy": status.HTTP_503_SERVICE_UNAVAILABLE,
    "room_busy": status.HTTP_503_SERVICE_UNAVAILABLE,
    "table_closed": status.HTTP_409_CONFLICT,
    "seat_unavailable": status.HTTP_409_CONFLICT,
    "not_seated": status.HTTP_409_CONFLICT,
    "hand_in_progress": status.HTTP_409_CONFLICT,
    "buy_in_out_of_range": status.HTTP_400_BAD_REQUEST,
}

# A refusal that is over by itself: when to ask again, in seconds.
RETRY_AFTER = {
    TableBusy: {"Retry-After": "1"},
    RoomBusy: {"Retry-After": str(capacity.RETRY_AFTER)},
}


def table_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, TableError):
        return Response(
            {"detail": exc.message, "code": exc.code},
            status=TABLE_ERROR_STATUS.get(exc.code, status.HTTP_400_BAD_REQUEST),
            headers=RETRY_AFTER.get(type(exc)),
        )
    return cashier_exception_handler(exc, context)


class CommandField(serializers.Field):
    """A command's field held to the check the WebSocket holds it to (`field_check`): a
    value of another JSON type (`"1"` for a number, `1` for a boolean), out of range or
    refused by its text rule is a 400 with the check's reason and code."""

    def __init__(self, *, command: type[Command], name: str, **kwargs: Any):
        # (By name: DRF copies a field by calling this again with the same arguments.)
        super().__init__(**kwargs)
        self.command_field = next(f for f in dataclasses.fields(command) if f.name == name)
        self.kind = field_type(command, self.command_field)

    def to_internal_value(self, data: object) -> object:
        try:
            field_check(self.command_field, data, self.kind)
        except CommandError as exc:
            raise serializers.ValidationError(exc.message, code=exc.code) from exc
        return data

    def to_representation(self, value: object) -> object:
        return value


@extend_schema_field(OpenApiTypes.INT64)
class CommandIntegerField(CommandField):
    pass


@extend_schema_field(OpenApiTypes.BOOL)
class CommandBooleanField(CommandField):
    pass


@extend_schema_field(OpenApiTypes.STR)
class CommandTextField(CommandField):
    pass


COMMAND_FIELDS: dict[type, type[CommandField]] = {
    int: CommandIntegerField,
    bool: CommandBooleanField,
    str: CommandTextField,
}


def command_serializer(command: type[Command]) -> type[serializers.Serializer]:
    """A serializer of a table command's fields, as the WebSocket takes them (the key
    travels in the Idempotency-Key header instead, checked as the cashier checks every
    key)."""
    fields: dict[str, serializers.Field] = {}
    for f in dataclasses.fields(command):
        if f.name == "key":
            continue
        options: dict[str, Any] = (
            {"required": True} if f.default is dataclasses.MISSING else {"default": f.default}
        )
        if f.metadata.get("cents"):
            fields[f.name] = CentsField(**options)
        else:
            kind = COMMAND_FIELDS[field_type(command, f)]
            fields[f.name] = kind(command=command, name=f.name, **options)
    return type(f"{command.__name__}Serializer", (serializers.Serializer,), fields)


SitSerializer = command_serializer(Sit)
TopUpSerializer = command_serializer(TopUp)


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
        seat = Sit(**data.validated_data).run(table_id=pk, user=request.user, idempotency_key=key)
        return Response(SeatSerializer(seat).data, status=status.HTTP_201_CREATED)


class TopUpView(TableAPIView):
    @extend_schema(
        request=TopUpSerializer, responses={200: SeatSerializer}, parameters=[IDEMPOTENCY_HEADER]
    )
    def post(self, request: Request, pk: int) -> Response:
        key = self.idempotency_key(request, command="top_up")
        data = TopUpSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        command = TopUp(**data.validated_data)
        seat = command.run(table_id=pk, user=request.user, idempotency_key=key)
        return Response(SeatSerializer(seat).data)


class LeaveView(TableAPIView):
    @extend_schema(request=None, responses={200: LeaveSerializer})
    def post(self, request: Request, pk: int) -> Response:
        return Response({"left": Leave().run(table_id=pk, user=request.user)})
