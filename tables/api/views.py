"""Endpoints of the hand-history API. Thin: serializers parse and present, selectors read
and decide what each reader may see, the formatters write text.

Access (see tables/history_selectors.py): anonymous 401; a hand in progress, or a hand
the player was not dealt into, 404; PHH and exports are for auditors (403 for players:
a PHH file holds every hole card and the deck). Errors are JSON ``{"detail", "code"}``
(the cashier API's handler); text formats are ``text/plain; charset=utf-8``.
"""

from collections.abc import Iterator

from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from knox.auth import TokenAuthentication
from rest_framework import generics
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from cashier.api.views import cashier_exception_handler
from poker_room.api.permissions import IsAuditor
from poker_room.api.serializers import ErrorSerializer
from tables.api.pagination import HandCursorPagination
from tables.api.serializers import (
    ExportFilterSerializer,
    HandDetailSerializer,
    HandFilterSerializer,
    HandSummarySerializer,
    VerifySerializer,
    hand_detail_data,
)
from tables.api.throttles import HandExportThrottle, HandHistoryThrottle
from tables.formats.ohh import hand_to_ohh
from tables.formats.phh import PhhMeta, export_phh
from tables.formats.pokerstars import hand_to_pokerstars
from tables.history_selectors import (
    HISTORY_CURRENCY,
    HISTORY_SITE_NAME,
    HandAccess,
    hand_access_get,
    hand_commitment_check,
    hand_export_iter,
    hand_list,
)

TEXT = "text/plain; charset=utf-8"
HAND_ID = OpenApiParameter(
    "id",
    {"type": "integer", "minimum": 1, "maximum": 2**63 - 1},
    OpenApiParameter.PATH,
    description="The hand's id.",
)
ERRORS = {
    401: OpenApiResponse(ErrorSerializer, description="Not signed in."),
    404: OpenApiResponse(ErrorSerializer, description="No such finished hand for you."),
}
AUDITOR_ERRORS = {
    **ERRORS,
    403: OpenApiResponse(ErrorSerializer, description="Auditors only."),
}


def phh_of(access: HandAccess) -> str:
    """The PHH text of one hand (every hole card, the deck and the salt)."""
    hand = access.hand
    meta = PhhMeta(
        table=hand.table.name,
        seat_count=hand.table.seats,
        time=hand.started_at,
        currency=HISTORY_CURRENCY,
        salt=hand.salt,
    )
    return export_phh(access.state, access.engine_events(), meta)


class HandHistoryAPIView(APIView):
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_classes = [HandHistoryThrottle]

    def get_exception_handler(self):  # type: ignore[no-untyped-def]
        return cashier_exception_handler


class TextAPIView(HandHistoryAPIView):
    """A view whose success is plain text and whose errors are JSON."""

    renderer_classes = [JSONRenderer]

    def perform_content_negotiation(
        self, request: Request, force: bool = False
    ) -> tuple[BaseRenderer, str]:
        # ``?format=`` names the export's format here, not a DRF renderer.
        renderer = JSONRenderer()
        return renderer, renderer.media_type


class HandListView(generics.ListAPIView, HandHistoryAPIView):
    """Finished hands you may read, newest first (cursor-paginated)."""

    serializer_class = HandSummarySerializer
    pagination_class = HandCursorPagination

    def get_queryset(self):  # type: ignore[no-untyped-def]
        filters = HandFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return hand_list(user=self.request.user, filters=filters.filters())

    @extend_schema(
        parameters=[HandFilterSerializer],
        responses={200: HandSummarySerializer(many=True), 400: ErrorSerializer, **ERRORS},
    )
    def get(self, request: Request) -> Response:
        return super().get(request)


class HandDetailView(HandHistoryAPIView):
    """The whole record of a finished hand, as you may see it."""

    @extend_schema(parameters=[HAND_ID], responses={200: HandDetailSerializer, **ERRORS})
    def get(self, request: Request, pk: int) -> Response:
        access = hand_access_get(user=request.user, hand_id=pk)
        verify_url = reverse("api-hand-verify", kwargs={"pk": pk}, request=request)
        return Response(HandDetailSerializer(hand_detail_data(access, verify_url=verify_url)).data)


class HandPhhView(TextAPIView):
    """The hand in PHH (TOML), with every hole card, the deck and the salt: auditors."""

    @extend_schema(
        parameters=[HAND_ID],
        responses={(200, "text/plain"): OpenApiTypes.STR, **AUDITOR_ERRORS},
    )
    def get(self, request: Request, pk: int) -> HttpResponse:
        access = hand_access_get(user=request.user, hand_id=pk)
        if not access.auditor:
            raise PermissionDenied(
                "PHH files hold every hole card and the deck: auditors only.",
                code="auditors_only",
            )
        return HttpResponse(phh_of(access), content_type=TEXT)


class HandTextView(TextAPIView):
    """The hand in PokerStars' text format (dollars, Eastern Time)."""

    @extend_schema(
        parameters=[HAND_ID], responses={(200, "text/plain"): OpenApiTypes.STR, **ERRORS}
    )
    def get(self, request: Request, pk: int) -> HttpResponse:
        access = hand_access_get(user=request.user, hand_id=pk)
        return HttpResponse(hand_to_pokerstars(access.record()), content_type=TEXT)


class HandOhhView(HandHistoryAPIView):
    """The hand in Open Hand History JSON (amounts in cents); hero = you."""

    @extend_schema(parameters=[HAND_ID], responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request: Request, pk: int) -> Response:
        access = hand_access_get(user=request.user, hand_id=pk)
        return Response(hand_to_ohh(access.record(), site_name=HISTORY_SITE_NAME))


class HandVerifyView(HandHistoryAPIView):
    """Recompute the deck commitment from the revealed deck and salt, server side."""

    @extend_schema(parameters=[HAND_ID], responses={200: VerifySerializer, **ERRORS})
    def get(self, request: Request, pk: int) -> Response:
        access = hand_access_get(user=request.user, hand_id=pk)
        return Response(VerifySerializer(hand_commitment_check(access=access)).data)


class HandExportView(TextAPIView):
    """Many hands at once, oldest first, streamed: PHH (``.phhs``) or PokerStars text."""

    permission_classes = [IsAuthenticated, IsAuditor]
    throttle_classes = [HandExportThrottle]

    @extend_schema(
        parameters=[ExportFilterSerializer],
        responses={
            (200, "text/plain"): OpenApiTypes.STR,
            400: ErrorSerializer,
            401: ERRORS[401],
            403: AUDITOR_ERRORS[403],
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        params = ExportFilterSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        kind = params.validated_data["format"]
        hands = hand_export_iter(user=request.user, filters=params.filters())
        chunks = _phhs(hands) if kind == "phh" else _pokerstars(hands)
        response = StreamingHttpResponse(chunks, content_type=TEXT)
        name = "hands.phhs" if kind == "phh" else "hands.txt"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


def _phhs(hands: Iterator[HandAccess]) -> Iterator[str]:
    """One ``[hand id]`` TOML section per hand (the ``.phhs`` form pokerkit loads)."""
    for access in hands:
        yield f"[{access.hand.id}]\n{phh_of(access)}\n"


def _pokerstars(hands: Iterator[HandAccess]) -> Iterator[str]:
    """Hands separated by blank lines, as PokerStars writes its files."""
    for access in hands:
        yield hand_to_pokerstars(access.record()) + "\n\n"
