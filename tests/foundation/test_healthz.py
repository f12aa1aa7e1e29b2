"""GET /healthz says whether THIS process can serve: its database and its Redis answer
(200), or not (503 naming which), within a second whatever they do; nothing the room as a
whole suffers (a paused table, an overdue turn, a stopped timer loop) makes it 503 (those
are the room status's: tests/foundation/test_room_status.py). Throttled per address.

Issue 46, finding 7: with PostgreSQL down /healthz answered after ~41 s (each check
waited for the pool in turn). Finding 14: each /healthz logged a ~190-line traceback
chain while a service was down.
"""

import logging
import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from poker_room import health
from tables.models import Hand, Heartbeat, Table, TableStatus
from tests.conftest import free_port
from tests.kit import TableFactory, deal, seat_players

DEAD_REDIS = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there


def get(client, address: str = "127.0.0.1"):
    return client.get("/healthz", REMOTE_ADDR=address)


@pytest.mark.django_db
def test_healthz_is_200_when_this_processs_database_and_redis_answer(client):
    response = get(client)
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "status": "ok",
        "failing": [],
        "checks": {
            "database": {"ok": True, "detail": "reachable"},
            "redis": {"ok": True, "detail": "reachable"},
        },
    }
    assert response["Cache-Control"].startswith("max-age=0")


@pytest.mark.django_db
def test_healthz_is_503_and_names_redis_when_redis_is_unreachable(client, settings):
    settings.REDIS_URL = DEAD_REDIS
    response = get(client)
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["failing"] == ["redis"]
    # The error's type, never its message: that names the server's address.
    assert body["checks"]["redis"]["detail"] == "ConnectionError (see the server log)"
    assert "127.0.0.1" not in response.content.decode()


@pytest.mark.django_db
def test_nothing_wrong_with_the_room_as_a_whole_makes_healthz_503(client):
    """A paused table, an overdue turn, no timer loop, no worker, no beat: the room
    status's alarms. A load balancer that took the process out would take the cashier
    and every other table with it."""
    Heartbeat.objects.all().delete()  # no timer loop, no beat, no worker ever ran
    table = TableFactory(name="Frozen Table", seats=6)
    seat_players(table, 2)
    hand = deal(table)
    Hand.objects.filter(pk=hand.pk).update(turn_deadline=timezone.now() - timedelta(minutes=5))
    Table.objects.filter(pk=table.pk).update(
        status=TableStatus.PAUSED, failure_count=2, paused_reason="failed 2 times"
    )
    response = get(client)
    assert response.status_code == 200, response.json()
    assert set(response.json()["checks"]) == {"database", "redis"}


@pytest.mark.django_db
def test_a_flood_costs_one_check_of_each_service_per_interval(client, settings, monkeypatch):
    runs = []
    probe = health.Probe("counted", lambda: runs.append(1) or "ran")
    monkeypatch.setattr(health, "PROBES", [probe])
    settings.HEALTH_REPORT_MAX_AGE_SECONDS = 60
    for _ in range(20):
        assert get(client).json()["checks"] == {"counted": {"ok": True, "detail": "ran"}}
    assert len(runs) == 1
    settings.HEALTH_REPORT_MAX_AGE_SECONDS = 0
    get(client)
    assert len(runs) == 2


@pytest.mark.django_db
def test_healthz_is_throttled_per_address_with_a_429_and_retry_after(client, settings):
    settings.HEALTHZ_PER_MINUTE = 3
    address = "2001:db8:4646:1::7"
    assert [get(client, address).status_code for _ in range(3)] == [200, 200, 200]
    refused = get(client, address)
    assert refused.status_code == 429
    assert refused.json()["code"] == "throttled"
    assert "Too many health checks" in refused.json()["detail"]
    assert 1 <= int(refused["Retry-After"]) <= 60
    # Its whole /64 is one client (it may pick any address of it); another is not.
    assert get(client, "2001:db8:4646:1::8").status_code == 429
    assert get(client, "2001:db8:4646:2::7").status_code == 200


def test_the_address_limit_forgets_ended_windows_and_stays_bounded():
    from poker_room.throttling import AddressWindowLimit

    limit = AddressWindowLimit(limit=2, window=60.0, most_addresses=4)
    assert limit.retry_after("192.0.2.1", now=0.0) is None
    assert limit.retry_after("192.0.2.1", now=1.0) is None
    assert limit.retry_after("192.0.2.1", now=2.0) == pytest.approx(58.0)
    assert limit.retry_after("192.0.2.1", now=60.0) is None  # a new window
    for n in range(2, 20):
        limit.retry_after(f"192.0.2.{n}", now=61.0)
    assert len(limit._windows) <= 4


@pytest.mark.django_db
def test_healthz_answers_get_only(client):
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_an_outage_is_logged_once_with_its_traceback_then_in_one_line(
    client, settings, monkeypatch, caplog
):
    """Finding 14: not a traceback chain per request while a service is down."""
    monkeypatch.setattr(health, "outages", health.OutageLog(remind_every=3600))
    working = settings.REDIS_URL
    settings.REDIS_URL = DEAD_REDIS
    with caplog.at_level(logging.INFO, logger="poker_room.health"):
        for _ in range(10):
            assert get(client).status_code == 503
        records = [r for r in caplog.records if r.name == "poker_room.health"]
        assert len(records) == 1
        assert records[0].levelno == logging.ERROR
        assert records[0].exc_info is not None
        assert "healthz redis failing: ConnectionError" in records[0].getMessage()

        health.outages.remind_every = 0  # the next failure is due a reminder
        get(client)
        reminder = [r for r in caplog.records if r.name == "poker_room.health"][-1]
        assert "healthz redis still failing after" in reminder.getMessage()
        assert reminder.exc_info is None

        settings.REDIS_URL = working
        assert get(client).status_code == 200
        back = [r for r in caplog.records if r.name == "poker_room.health"][-1]
        assert "healthz redis passes again after" in back.getMessage()


def test_the_outage_log_logs_the_first_traceback_even_after_a_timeout_was_logged(caplog):
    """A hung server is first "no answer within 0.5 s" (no traceback), then its probe
    ends with the driver's error: that traceback is logged, once."""
    log = health.OutageLog(remind_every=3600)
    with caplog.at_level(logging.INFO, logger="poker_room.health"):
        log.failed("healthz database", "no answer within 0.5 s")
        log.failed("healthz database", "no answer within 0.5 s")
        error = OSError("connection timeout expired")
        log.failed("healthz database", "OSError: connection timeout expired", error)
        log.failed("healthz database", "OSError: connection timeout expired", error)
        log.passed("healthz database")
    records = [(r.levelno, r.exc_info is not None) for r in caplog.records]
    assert records == [(logging.WARNING, False), (logging.ERROR, True), (logging.INFO, False)]


@pytest.mark.django_db
def test_a_late_check_is_covered_by_a_recent_answer_then_reported(client, settings, monkeypatch):
    """A check that does not answer within half a second: the probe's last answer stands
    in while it is recent (a slow machine is not a down service), then it is a 503."""
    release = threading.Event()
    calls = []

    def check() -> str:
        calls.append(1)
        if len(calls) > 1:
            release.wait(30)  # a server that accepts and says nothing
        return "reachable"

    monkeypatch.setattr(health, "PROBES", [health.Probe("slow", check)])
    settings.HEALTH_REPORT_MAX_AGE_SECONDS = 0
    try:
        assert get(client).json()["checks"]["slow"] == {"ok": True, "detail": "reachable"}
        covered = get(client)
        assert covered.status_code == 200
        assert "a new check is under way" in covered.json()["checks"]["slow"]["detail"]
        monkeypatch.setattr(health, "RECENT_ENOUGH", 0)
        late = get(client)
        assert late.status_code == 503
        assert late.json()["checks"]["slow"] == {"ok": False, "detail": "no answer within 0.5 s"}
        assert len(calls) == 2  # one run at a time: the late one is joined, not repeated
    finally:
        release.set()
