"""GET /api/status/: the room's alarms (poker_room/room_status.py), for staff and auditors.

Issue 46, finding 7 and the design change "Health that says what a load balancer needs":
a paused table, an overdue turn, a stopped timer loop, worker or beat are alerts here,
each check with ok and a detail, and never make /healthz 503. The worker and beat are
told apart by a heartbeat task beat sends and the worker records, not by a 1 s ping that
a loaded machine missed.
"""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.services import auditor_create
from poker_room.room_status import (
    AUTOVACUUM_OFF,
    BEAT_MAX_AGE,
    CELERY_HEARTBEAT,
    vacuum_warning,
)
from poker_room.tasks import room_heartbeat_task
from tables.models import Hand, HandStatus, Heartbeat, Table, TableStatus
from tables.timers import HEARTBEAT, timers_heartbeat
from tests.conftest import free_port, room_process, wait_for, wait_until_up
from tests.foundation.test_csp import assert_strict, inline_code
from tests.kit import TableFactory, UserFactory, api_for, deal, seat_players

CHECKS = {"database", "redis", "celery", "beat", "timers", "tables", "turns"}


def ran(name: str, seconds_ago: float = 0) -> None:
    Heartbeat.objects.update_or_create(
        name=name, defaults={"at": timezone.now() - timedelta(seconds=seconds_ago)}
    )


def all_ran() -> None:
    """What the timer loop and beat's heartbeat task do, moments ago."""
    timers_heartbeat(now=timezone.now())
    ran(CELERY_HEARTBEAT)


@pytest.fixture
def auditor():
    user, _password, _token = auditor_create(username=f"aud-{uuid.uuid4().hex[:8]}")
    return api_for(user)


def status(client) -> dict:
    response = client.get("/api/status/")
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.django_db
def test_the_status_is_for_staff_and_auditors_only(auditor):
    anonymous = api_for(None).get("/api/status/")
    assert anonymous.status_code == 401
    assert anonymous.json()["code"] == "not_authenticated"
    player = api_for(UserFactory()).get("/api/status/")
    assert player.status_code == 403
    assert player.json()["code"] == "staff_or_auditors_only"
    assert set(status(auditor)["checks"]) == CHECKS
    assert set(status(api_for(UserFactory(is_staff=True)))["checks"]) == CHECKS


@pytest.mark.django_db
def test_all_green_when_every_part_of_the_room_ran_lately(auditor):
    all_ran()
    body = status(auditor)
    assert body["status"] == "ok", body
    assert body["failing"] == []
    assert all(check["ok"] for check in body["checks"].values())
    assert body["checks"]["beat"]["detail"].startswith("beat's heartbeat task ran")


@pytest.mark.django_db
def test_a_paused_table_is_an_alert_in_the_status_and_leaves_healthz_200(auditor, client):
    all_ran()
    table = TableFactory(name="Frozen Table")
    Table.objects.filter(pk=table.pk).update(
        status=TableStatus.PAUSED,
        failure_count=2,
        paused_reason="tables.services.play.turn_timeout failed 2 times: KeyError: 'secret'",
    )
    body = status(auditor)
    assert body["status"] == "alert"
    assert body["failing"] == ["tables"]
    detail = body["checks"]["tables"]["detail"]
    assert f"Frozen Table (id {table.id})" in detail
    assert "secret" not in detail  # the reason is the admin's
    assert client.get("/healthz").status_code == 200


@pytest.mark.django_db
def test_a_turn_overdue_by_more_than_a_minute_is_an_alert(auditor):
    all_ran()
    table = TableFactory(name="Stuck Table", seats=6)
    seat_players(table, 2)
    hand = deal(table)
    Hand.objects.filter(pk=hand.pk).update(turn_deadline=timezone.now() - timedelta(seconds=50))
    assert status(auditor)["status"] == "ok"  # late, but not yet a minute
    Hand.objects.filter(pk=hand.pk).update(turn_deadline=timezone.now() - timedelta(seconds=70))
    body = status(auditor)
    assert body["failing"] == ["turns"]
    assert f"Stuck Table (id {table.id}) hand {hand.id}" in body["checks"]["turns"]["detail"]
    Hand.objects.filter(pk=hand.pk).update(status=HandStatus.FINISHED)
    assert status(auditor)["status"] == "ok"


@pytest.mark.django_db
@pytest.mark.parametrize("seconds_ago", [None, 16])
def test_a_timer_loop_that_has_not_run_lately_is_an_alert(auditor, seconds_ago):
    all_ran()
    Heartbeat.objects.filter(name=HEARTBEAT).delete()
    if seconds_ago is not None:
        ran(HEARTBEAT, seconds_ago)
    body = status(auditor)
    assert body["failing"] == ["timers"]
    assert "is `manage.py run_timers` running?" in body["checks"]["timers"]["detail"]


@pytest.mark.django_db(transaction=True)
def test_the_worker_records_beats_heartbeat_task(auditor, celery_worker_process):
    ran(CELERY_HEARTBEAT, seconds_ago=3600)
    since = timezone.now()
    room_heartbeat_task.delay()
    wait_for(
        lambda: Heartbeat.objects.filter(name=CELERY_HEARTBEAT, at__gte=since).exists(),
        timeout=60,
        what="the worker runs the heartbeat task",
    )
    checks = status(auditor)["checks"]
    assert checks["celery"]["ok"]
    assert checks["celery"]["detail"].startswith("a worker ran beat's heartbeat task")
    assert checks["beat"]["ok"]


@pytest.mark.django_db(transaction=True)
def test_a_silent_beat_is_an_alert_while_a_worker_still_answers(auditor, celery_worker_process):
    """No heartbeat task for over BEAT_MAX_AGE: beat is named; the worker, which answers
    a ping (waited for up to 5 s, not the 1 s a loaded machine missed), is not."""
    all_ran()
    ran(CELERY_HEARTBEAT, seconds_ago=BEAT_MAX_AGE.total_seconds() + 30)
    body = status(auditor)
    assert body["failing"] == ["beat"]
    assert "is `celery beat` running" in body["checks"]["beat"]["detail"]
    assert "answers pings" in body["checks"]["celery"]["detail"]


@pytest.mark.django_db
def test_without_redis_no_worker_is_pinged_and_both_are_alerts(auditor, settings):
    all_ran()
    ran(CELERY_HEARTBEAT, seconds_ago=BEAT_MAX_AGE.total_seconds() + 30)
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    body = status(auditor)
    assert body["failing"] == ["redis", "celery", "beat"]
    assert "Redis, the broker, is unreachable" in body["checks"]["celery"]["detail"]


@pytest.mark.django_db(transaction=True)
def test_celery_beat_sends_the_heartbeat_task(tmp_path, celery_worker_process):
    """A real beat (every second here; 10 s in the room) and the suite's worker."""
    since = timezone.now()
    args = ["celery", "-A", "poker_room", "beat", "--loglevel=INFO"]
    args += ["--schedule", str(tmp_path / "beat-schedule")]
    env = {"ROOM_HEARTBEAT_SECONDS": "1"}
    with room_process(args, log_name=str(tmp_path / "beat.log"), env=env) as beat:
        wait_until_up(
            beat,
            lambda: Heartbeat.objects.filter(name=CELERY_HEARTBEAT, at__gte=since).exists(),
            "beat's heartbeat task",
        )


@pytest.mark.django_db
def test_a_flood_costs_one_round_of_checks_per_interval(auditor, settings):
    from poker_room import room_status

    settings.ROOM_STATUS_MAX_AGE_SECONDS = 60
    room_status._recent = None
    first = status(auditor)["checked_at"]
    assert all(status(auditor)["checked_at"] == first for _ in range(10))
    settings.ROOM_STATUS_MAX_AGE_SECONDS = 0
    assert status(auditor)["checked_at"] != first


@pytest.mark.django_db
def test_the_database_check_warns_as_the_servers_settings_say_but_does_not_fail(auditor):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('autovacuum'), current_setting('track_counts')")
        autovacuum, track_counts = cursor.fetchone()
    database = status(auditor)["checks"]["database"]
    assert database["ok"]
    warning = vacuum_warning(autovacuum=autovacuum, track_counts=track_counts)
    assert database["detail"] == ("reachable" if warning is None else f"reachable; {warning}")


def test_the_vacuum_warning_names_the_setting_that_is_off():
    assert vacuum_warning(autovacuum="on", track_counts="on") is None
    assert vacuum_warning(autovacuum="off", track_counts="on") == AUTOVACUUM_OFF
    assert "track_counts is off" in vacuum_warning(autovacuum="on", track_counts="off")
    # Both off: the upkeep task cannot stand in, and the warning does not say it does.
    assert "track_counts is off" in vacuum_warning(autovacuum="off", track_counts="off")


@pytest.mark.django_db
def test_the_status_is_in_the_api_schema(auditor):
    schema = auditor.get("/api/schema/?format=json").json()
    get = schema["paths"]["/api/status/"]["get"]
    assert set(get["responses"]) == {"200", "401", "403"}


@pytest.mark.django_db
def test_staff_see_the_status_in_the_admin_and_players_do_not(client):
    all_ran()
    table = TableFactory(name="Frozen Table")
    Table.objects.filter(pk=table.pk).update(status=TableStatus.PAUSED, paused_reason="failed")
    client.force_login(UserFactory(is_staff=True))
    assert b'href="/admin/status/"' in client.get("/admin/").content
    response = client.get("/admin/status/")
    assert_strict(response)
    page = response.content.decode()
    assert inline_code(page) == []
    assert "Alert: tables." in page
    assert f"Frozen Table (id {table.id})" in page
    client.force_login(UserFactory())
    assert client.get("/admin/status/").status_code == 302  # to the admin's log-in
