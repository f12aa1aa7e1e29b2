"""The daily rake report over HTTP (`/api/reports/rake/`), for auditors only.

The report is built by the daily task (tables/rake.py); this endpoint reads it, 404 until
it is built. Players are listed by user id, with their screen name beside it for people.
Errors are the cashier API's JSON ``{"detail", "code"}``.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from cashier.api.views import CashierAPIView
from poker_room.api.permissions import IsAuditor
from poker_room.api.serializers import ErrorSerializer
from tables.rake import (
    rake_report_get,
    rake_report_players,
    rake_report_stake_levels,
    rake_report_tables,
)


class RakeReportQuerySerializer(serializers.Serializer):
    date = serializers.DateField(help_text="The UTC day, YYYY-MM-DD.")


class RakeTotalsSerializer(serializers.Serializer):
    hands = serializers.IntegerField()
    raked_hands = serializers.IntegerField()
    rake = serializers.IntegerField(help_text="Cents.")
    average_rake = serializers.IntegerField(help_text="Cents per hand, rounded down.")


class RakeStakeLevelSerializer(RakeTotalsSerializer):
    stake_level_id = serializers.IntegerField()
    stake_level = serializers.CharField()


class RakeTableSerializer(RakeTotalsSerializer):
    table_id = serializers.IntegerField()
    table = serializers.CharField(source="table.name")
    stake_level_id = serializers.IntegerField()
    stake_level = serializers.CharField(source="stake_level.name")


class RakePlayerSerializer(serializers.Serializer):
    player_id = serializers.IntegerField(help_text="The player's user id: who they are.")
    player = serializers.CharField(
        source="player.username", help_text="Their screen name now (display only)."
    )
    raked_hands = serializers.IntegerField()
    rake = serializers.IntegerField(help_text="Contributed rake, cents.")


class RakeReportSerializer(RakeTotalsSerializer):
    date = serializers.DateField()
    built_at = serializers.DateTimeField()
    stake_levels = RakeStakeLevelSerializer(many=True)
    tables = RakeTableSerializer(many=True)
    players = RakePlayerSerializer(many=True)


class RakeReportView(CashierAPIView):
    """The built rake report of one UTC day (404 until the daily task built it)."""

    permission_classes = [IsAuthenticated, IsAuditor]

    @extend_schema(
        parameters=[RakeReportQuerySerializer],
        responses={
            200: RakeReportSerializer,
            400: ErrorSerializer,
            401: ErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
        },
    )
    def get(self, request: Request) -> Response:
        query = RakeReportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        day = query.validated_data["date"]
        report = rake_report_get(day=day)
        if report is None:
            raise exceptions.NotFound(
                f"The rake report of {day} is not built yet.", code="report_not_built"
            )
        tables = rake_report_tables(report=report)
        data = {
            "date": report.date,
            "built_at": report.built_at,
            "hands": report.hands,
            "raked_hands": report.raked_hands,
            "rake": report.rake,
            "average_rake": report.average_rake,
            "stake_levels": rake_report_stake_levels(tables=tables),
            "tables": tables,
            "players": rake_report_players(report=report),
        }
        return Response(RakeReportSerializer(data).data)
