"""GET /healthz reports PostgreSQL, Redis, a Celery worker, the timer loop, and tables
that stopped playing (paused by failing commands, or a turn overdue by over a minute)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from poker_room.health import AUTOVACUUM_OFF, vacuum_warning
from tables.models import Hand, HandStatus, Heartbeat, Table, TableStatus
from tables.timers import HEARTBEAT, timers_heartbeat
from tests.kit import TableFactory, deal, seat_players

CHECKS = {"database", "redis", "celery", "timers", "tables", "turns"}


def timers_ran(seconds_ago: float = 0) -> None:
    Heartbeat.objects.update_or_create(
        name=HEARTBEAT, defaults={"at": timezone.now() - timedelta(seconds=seconds_ago)}
    )


@pytest.mark.django_db
def test_healthz_is_200_when_everything_answers_and_the_timer_loop_ran(
    client, celery_worker_process
):
    timers_heartbeat(now=timezone.now())  # what the timer loop does every 2 s
    response = client.get("/healthz")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "ok"
    assert body["failing"] == []
    assert set(body["checks"]) == CHECKS
    assert all(check["ok"] for check in body["checks"].values())


@pytest.mark.django_db
def test_healthz_is_503_and_names_redis_when_redis_is_unreachable(
    client, settings, celery_worker_process
):
    timers_ran()
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["failing"] == ["redis"]
    # The error's type, never its message: that names the server's address.
    assert body["checks"]["redis"]["detail"] == "ConnectionError (see the server log)"
    assert "127.0.0.1" not in response.content.decode()


@pytest.mark.django_db
def test_healthz_reuses_a_recent_report_so_a_flood_costs_one_round_of_checks(
    client, settings, monkeypatch
):
    from poker_room import health

    runs = []
    monkeypatch.setattr(health, "_recent", None)
    monkeypatch.setattr(health, "CHECKS", {"counted": lambda: runs.append(1) or "ran"})
    settings.HEALTH_REPORT_MAX_AGE_SECONDS = 60
    for _ in range(20):
        assert client.get("/healthz").json()["checks"] == {"counted": {"ok": True, "detail": "ran"}}
    assert len(runs) == 1
    settings.HEALTH_REPORT_MAX_AGE_SECONDS = 0
    client.get("/healthz")
    assert len(runs) == 2


@pytest.mark.django_db
@pytest.mark.parametrize("seconds_ago", [None, 16])
def test_healthz_is_503_when_the_timer_loop_has_not_run_lately(
    client, celery_worker_process, seconds_ago
):
    Heartbeat.objects.all().delete()
    if seconds_ago is not None:
        timers_ran(seconds_ago)
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["timers"]
    assert "is `manage.py run_timers` running?" in body["checks"]["timers"]["detail"]


@pytest.mark.django_db
def test_healthz_is_503_and_names_a_table_paused_by_failures(client, celery_worker_process):
    timers_ran()
    table = TableFactory(name="Frozen Table")
    Table.objects.filter(pk=table.pk).update(
        status=TableStatus.PAUSED,
        failure_count=2,
        paused_reason="tables.services.play.turn_timeout failed 2 times: KeyError: 'secret'",
    )
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["tables"]
    detail = body["checks"]["tables"]["detail"]
    assert f"Frozen Table (id {table.id})" in detail
    assert "secret" not in detail  # the reason is for the admin, not the world


@pytest.mark.django_db
def test_healthz_is_503_and_names_a_hand_whose_turn_is_overdue_by_more_than_a_minute(
    client, celery_worker_process
):
    timers_ran()
    table = TableFactory(name="Stuck Table", seats=6)
    seat_players(table, 2)
    hand = deal(table)
    Hand.objects.filter(pk=hand.pk).update(turn_deadline=timezone.now() - timedelta(seconds=50))
    assert client.get("/healthz").status_code == 200  # late, but not yet a minute
    Hand.objects.filter(pk=hand.pk).update(turn_deadline=timezone.now() - timedelta(seconds=70))
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["turns"]
    assert f"Stuck Table (id {table.id}) hand {hand.id}" in body["checks"]["turns"]["detail"]
    Hand.objects.filter(pk=hand.pk).update(status=HandStatus.FINISHED)
    assert client.get("/healthz").status_code == 200


@pytest.mark.django_db
def test_healthz_answers_get_only(client):
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_the_database_check_warns_as_the_servers_settings_say_but_does_not_fail(client):
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('autovacuum'), current_setting('track_counts')")
        autovacuum, track_counts = cursor.fetchone()
    database = client.get("/healthz").json()["checks"]["database"]
    assert database["ok"]
    warning = vacuum_warning(autovacuum=autovacuum, track_counts=track_counts)
    assert database["detail"] == ("reachable" if warning is None else f"reachable; {warning}")


def test_the_vacuum_warning_names_the_setting_that_is_off():
    assert vacuum_warning(autovacuum="on", track_counts="on") is None
    assert vacuum_warning(autovacuum="off", track_counts="on") == AUTOVACUUM_OFF
    assert "track_counts is off" in vacuum_warning(autovacuum="on", track_counts="off")
    # Both off: the upkeep task cannot stand in, and the warning does not say it does.
    assert "track_counts is off" in vacuum_warning(autovacuum="off", track_counts="off")
