"""`/api/status/`: the room's alarms (poker_room/room_status.py), for staff and auditors.

Always 200 when the report is made: a failing check is an alert in the body (`status`
"alert", the check's `ok` false and its `detail`), not an error of the request. Anonymous
requests get 401, players 403. Whether a web process can serve is /healthz's question.
"""

from drf_spectacular.utils import extend_schema
from knox.auth import TokenAuthentication
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from poker_room.api.permissions import IsStaffOrAuditor
from poker_room.api.serializers import ErrorSerializer
from poker_room.room_status import room_status_recent


class CheckSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    detail = serializers.CharField(help_text="What the check found, for people.")


class RoomStatusSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["ok", "alert"])
    failing = serializers.ListField(
        child=serializers.CharField(), help_text="The names of the failing checks."
    )
    checks = serializers.DictField(
        child=CheckSerializer(),
        help_text="database, redis, celery, beat, timers, tables, turns.",
    )
    checked_at = serializers.DateTimeField(
        help_text="When the checks ran (a report is reused for a few seconds)."
    )


class RoomStatusView(APIView):
    """The room's checks, each with ok and a detail (a paused table is an alert here)."""

    # A token first: an anonymous request gets 401 with its `WWW-Authenticate` challenge.
    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated, IsStaffOrAuditor]

    @extend_schema(
        responses={200: RoomStatusSerializer, 401: ErrorSerializer, 403: ErrorSerializer},
    )
    def get(self, request: Request) -> Response:
        return Response(RoomStatusSerializer(room_status_recent()).data)
