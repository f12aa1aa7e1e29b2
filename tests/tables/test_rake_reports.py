"""Daily rake reports: built per table (with its stake level) and per player from the
hands that ended that UTC day, rebuilt idempotently by the beat task, summing to the
house account; read by auditors through the API and in the admin (read-only)."""

import datetime
import random

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from cashier.models import AccountKind, LedgerAccount
from tables.models import Hand, HandPlayer, RakeContribution, RakeReport
from tables.rake import rake_report_build
from tables.tasks import rake_report_daily_task
from tests.kit import api_for, play_hand, play_passively, rolled_back, stake_for, table_with_players

pytestmark = pytest.mark.django_db

TODAY = datetime.datetime.now(tz=datetime.UTC).date()
YESTERDAY = TODAY - datetime.timedelta(days=1)


@pytest.fixture(scope="module")
def played(django_db_setup, django_db_blocker):
    """Two stake levels, three tables: some hands today, one moved to yesterday.

    Played once for the module (a dozen hands take a while), in a transaction rolled
    back after it; each test runs in a savepoint of its own inside (its `db`), so what
    one test builds or renames is gone for the next."""
    with django_db_blocker.unblock(), rolled_back():
        yield _play()


def _play():
    holdem = stake_for("holdem", "NL")
    omaha = stake_for("omaha8", "FL")
    tables = [
        table_with_players(holdem)[0],
        table_with_players(holdem)[0],
        table_with_players(omaha, count=4)[0],
    ]
    rng = random.Random("rake-report")
    hands = {t.id: [play_hand(t, rng) for _ in range(3)] for t in tables}
    hands[tables[0].id].append(play_passively(tables[0]))
    moved = hands[tables[0].id][-1]
    late = datetime.datetime.combine(YESTERDAY, datetime.time(23, 59), tzinfo=datetime.UTC)
    Hand.objects.filter(pk=moved.pk).update(started_at=late, ended_at=late)
    return tables, hands, moved


def test_the_report_sums_a_day_per_table_and_player(played):
    _tables, hands, moved = played
    report = rake_report_build(day=TODAY)
    today = [h for hs in hands.values() for h in hs if h.pk != moved.pk]
    assert report.hands == len(today)
    assert report.raked_hands == sum(1 for h in today if h.rake)
    assert report.rake == sum(h.rake for h in today)
    for row in report.tables.all():
        mine = [h for h in hands[row.table_id] if h.pk != moved.pk]
        assert (row.hands, row.rake) == (len(mine), sum(h.rake for h in mine))
        assert row.stake_level_id == row.table.stake_level_id
        assert row.average_rake == row.rake // row.hands
    contributions = RakeContribution.objects.filter(hand__in=today)
    for row in report.players.all():
        paid = contributions.filter(player=row.player)
        assert (row.raked_hands, row.rake) == (paid.count(), sum(p.amount for p in paid))
    assert sum(row.rake for row in report.players.all()) == report.rake


def test_the_reports_of_all_days_sum_to_the_house_account(played):
    reports = [rake_report_build(day=day) for day in (YESTERDAY, TODAY)]
    house = LedgerAccount.objects.get(kind=AccountKind.HOUSE).balance
    assert sum(r.rake for r in reports) == house > 0
    assert reports[0].hands == 1


def test_rebuilding_a_day_replaces_its_rows(played):
    first = rake_report_build(day=TODAY)
    counts = (first.tables.count(), first.players.count())
    assert rake_report_daily_task(TODAY.isoformat()) == first.rake
    assert RakeReport.objects.filter(date=TODAY).count() == 1
    again = RakeReport.objects.get(date=TODAY)
    assert (again.tables.count(), again.players.count()) == counts
    assert again.rake == first.rake and again.pk != first.pk


def test_the_beat_task_builds_yesterday_by_default(played):
    rake_report_daily_task()
    assert list(RakeReport.objects.values_list("date", "hands")) == [(YESTERDAY, 1)]
    entry = settings.CELERY_BEAT_SCHEDULE["tables-rake-report-daily"]
    assert entry["task"] == "tables.tasks.rake_report_daily_task"


def test_a_day_without_hands_has_an_empty_report(db):
    report = rake_report_build(day=datetime.date(2020, 1, 1))
    assert (report.hands, report.raked_hands, report.rake, report.average_rake) == (0, 0, 0, 0)


def test_auditors_read_the_report_through_the_api(played, auditor, player):
    tables, _hands, _moved = played
    report = rake_report_build(day=TODAY)
    client = api_for(auditor)
    body = client.get("/api/reports/rake/", {"date": TODAY.isoformat()}).json()
    assert body["date"] == TODAY.isoformat()
    assert (body["hands"], body["rake"]) == (report.hands, report.rake)
    assert body["average_rake"] == report.rake // report.hands
    assert sum(s["rake"] for s in body["stake_levels"]) == report.rake
    assert {s["stake_level_id"] for s in body["stake_levels"]} == {t.stake_level_id for t in tables}
    assert sum(s["hands"] for s in body["stake_levels"]) == report.hands
    assert {t["table_id"] for t in body["tables"]} == {t.id for t in tables}
    assert sum(p["rake"] for p in body["players"]) == report.rake
    # Players are named by user id, their screen name beside it, most rake first.
    dealt = dict(HandPlayer.objects.values_list("user_id", "user__username").distinct())
    assert {(p["player_id"], p["player"]) for p in body["players"]} <= set(dealt.items())
    assert [p["rake"] for p in body["players"]] == sorted(
        (p["rake"] for p in body["players"]), reverse=True
    )
    assert client.get("/api/reports/rake/", {"date": "2020-01-01"}).status_code == 404
    assert client.get("/api/reports/rake/", {"date": "yesterday"}).status_code == 400
    assert client.get("/api/reports/rake/").status_code == 400
    refused = api_for(player).get("/api/reports/rake/", {"date": TODAY.isoformat()})
    assert refused.status_code == 403 and refused.json()["code"] == "auditors_only"
    assert APIClient().get("/api/reports/rake/", {"date": TODAY.isoformat()}).status_code == 401


def test_the_admin_shows_reports_read_only(played, admin_client):
    report = rake_report_build(day=TODAY)
    for url in (
        "/admin/tables/rakereport/",
        f"/admin/tables/rakereport/{report.pk}/change/",
        "/admin/tables/rakecontribution/",
    ):
        response = admin_client.get(url)
        assert response.status_code == 200, url
    assert admin_client.get("/admin/tables/rakereport/add/").status_code == 403
    page = admin_client.get(f"/admin/tables/rakereport/{report.pk}/change/").content.decode()
    assert all(table.name in page for table in played[0])


def test_a_renamed_player_keeps_their_rake_under_their_user_id(played, auditor):
    report = rake_report_build(day=TODAY)
    top = report.players.order_by("-rake", "player_id").first().player
    top.username = f"{top.username}-renamed"
    top.save()
    body = api_for(auditor).get("/api/reports/rake/", {"date": TODAY.isoformat()}).json()
    first = body["players"][0]
    assert (first["player_id"], first["player"]) == (top.pk, top.username)
