"""Redis down or restarted: money (PostgreSQL) keeps answering, the Celery worker lives on.

The cache, the channel layer and the Celery broker are all Redis. Throttle counters in
the cache made every DRF endpoint answer 500 while Redis was down; a Redis restart killed
the Celery worker (kombu 5.7: "Unrecoverable error: AttributeError('NoneType' object has
no attribute 'hostname')" right after "Restoring N unacknowledged message(s)").

The worker and socket tests run a PRIVATE redis-server on a free port: the machine's shared Redis is
never restarted.
"""

import asyncio
import os
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.test import override_settings
from django.utils import timezone
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from rest_framework.test import APIClient

from cashier.audit import ledger_audit
from cashier.selectors import wallet_balance
from cashier.services import deposit_create
from poker_room.routing import websocket_urlpatterns
from tables import events, feed
from tables.events import TableMessage
from tests.conftest import free_port, room_process, wait_until_up
from tests.kit import PASSWORD, TableFactory, UserFactory, api_for

DEAD_CACHE = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        # A port nothing listens on: Redis is down.
        "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
        "OPTIONS": {"socket_connect_timeout": 1.0, "socket_timeout": 1.0},
    }
}


@pytest.mark.django_db
@override_settings(CACHES=DEAD_CACHE)
def test_the_cashier_and_the_history_answer_while_redis_is_down(caplog):
    player = UserFactory()
    deposit_create(user=player, amount=5_000, idempotency_key="before-the-outage")
    client = api_for(player)

    wallet = client.get("/api/wallet/")
    assert wallet.status_code == 200, wallet.content
    assert wallet.json()["balance"] == 5_000
    assert client.get("/api/ledger/").status_code == 200
    assert client.get("/api/hands/").status_code == 200
    deposit = client.post(
        "/api/cashier/deposits/", {"amount": 1_000}, format="json", headers={"Idempotency-Key": "d"}
    )
    assert deposit.status_code == 201, deposit.content
    withdrawal = client.post(
        "/api/cashier/withdrawals/",
        {"amount": 500},
        format="json",
        headers={"Idempotency-Key": "w"},
    )
    assert withdrawal.status_code == 201, withdrawal.content
    assert wallet_balance(user=player) == 5_500
    # Anonymous requests go through the anonymous throttle: refused for lack of a login,
    # not for lack of Redis.
    anonymous = APIClient().get("/api/wallet/")
    assert anonymous.status_code == 401
    assert anonymous.json()["code"] == "not_authenticated"
    assert "cache is unavailable" in caplog.text


@pytest.mark.django_db
@override_settings(DEBUG=True, ROOT_URLCONF="tests.foundation.api_error_urls")
@pytest.mark.parametrize("url", ["/api/test-broken/", "/api/test-broken-cashier/"])
def test_an_unexpected_api_error_is_json_even_in_development(url):
    client = api_for(UserFactory())
    client.raise_request_exception = False
    response = client.get(url)
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "detail": "Something went wrong on our side.",
        "code": "server_error",
    }


# --- the Celery worker rides through a Redis restart ---------------------------------


def worker_log_has(log: Path, text: str) -> bool:
    return text in log.read_text(errors="replace")


def wait_for(condition, *, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.2)


@pytest.mark.django_db(transaction=True)
def test_the_celery_worker_survives_a_redis_restart(private_redis, settings, monkeypatch, tmp_path):
    from poker_room.celery import app

    queue = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-redis-restart"
    node = f"redis-restart-{uuid.uuid4().hex[:8]}@{os.uname().nodename}"
    log = tmp_path / "celery.log"
    monkeypatch.setenv("REDIS_URL", private_redis.url)
    # As the Procfile runs it: prefork (the crash was in the pool's consumer), one child.
    args = ["celery", "-A", "poker_room", "worker", "--loglevel=INFO", "--concurrency=1",
            "--without-gossip", "--without-mingle", "-Q", queue, "-n", node]  # fmt: skip
    with (
        app.connection_for_write(private_redis.url) as connection,
        room_process(args, log_name=str(log)) as worker,
    ):

        def send(countdown: float | None = None) -> str:
            task_id = uuid.uuid4().hex
            app.send_task(
                "tables.tasks.rake_report_daily_task", task_id=task_id, queue=queue,
                countdown=countdown,
                connection=connection,
            )  # fmt: skip
            return task_id

        wait_until_up(worker, lambda: worker_log_has(log, f"{node} ready."), "Celery")
        first = send()
        wait_for(
            lambda: worker_log_has(log, f"[{first}] succeeded"), seconds=60, what="a first task"
        )
        # Tasks due later (an ETA) the worker holds unacknowledged when Redis goes: the
        # crash came while restoring them.
        for _ in range(3):
            send(countdown=300)
        wait_for(
            lambda: log.read_text(errors="replace").count("received") >= 4,
            seconds=30,
            what="the delayed tasks to reach the worker",
        )

        private_redis.stop()
        wait_for(
            lambda: worker_log_has(log, "Connection to broker lost"),
            seconds=30,
            what="the worker to notice",
        )
        time.sleep(1)
        private_redis.start()
        connection.ensure_connection(max_retries=10)

        after = send()
        wait_for(
            lambda: worker_log_has(log, f"[{after}] succeeded") or worker.poll() is not None,
            seconds=90,
            what="a task after the restart",
        )
        text = log.read_text(errors="replace")
        assert worker.poll() is None, text[-3000:]
        assert "Unrecoverable error" not in text
        assert f"[{after}] succeeded" in text


# --- a table socket rides through a Redis restart --------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_table_socket_stays_open_through_a_redis_restart_and_gets_new_messages(
    private_redis, settings, caplog
):
    """Redis goes away under a table socket (it used to close with 1011) and the socket
    stays open: its process's table feed subscribes again when Redis is back (a restarted
    Redis has lost the subscriptions), the viewer gets a fresh snapshot (what was
    published meanwhile is lost) and then the next table message."""
    room = settings.CHANNEL_LAYERS["default"]
    host = {**room["CONFIG"]["hosts"][0], "address": private_redis.url}
    settings.CHANNEL_LAYERS = {
        "default": {**room, "CONFIG": {**room["CONFIG"], "hosts": [host], "prefix": "restart"}}
    }
    settings.REDIS_URL = private_redis.url  # the table's feed
    table = await database_sync_to_async(TableFactory)()
    channel = feed.feed_channel(table.id)
    socket = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/tables/{table.id}/")
    connected, _ = await socket.connect()
    assert connected
    snapshot = await socket.receive_json_from(timeout=5)

    await asyncio.to_thread(private_redis.stop)
    # The feed meets the dead Redis (and says so, once).
    async with asyncio.timeout(15):
        while "table feed: reading failed" not in caplog.text:
            await asyncio.sleep(0.05)
    assert await socket.receive_nothing(timeout=0.5)  # no close, no error
    # A viewer arriving meanwhile is turned away (try again later), never shown a table
    # whose stream would miss what is published before the feed is back.
    late = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/tables/{table.id}/")
    assert await late.connect(timeout=15) == (True, None)
    closed = await late.receive_output(timeout=15)
    assert (closed["type"], closed["code"]) == ("websocket.close", 1013)
    await asyncio.to_thread(private_redis.start)

    redis = Redis.from_url(private_redis.url)
    async with asyncio.timeout(30):
        while not dict(await redis.pubsub_numsub(channel))[channel.encode()]:
            await asyncio.sleep(0.2)  # the feed subscribes again when Redis is back
    # Messages may have been lost meanwhile: the viewer gets a fresh snapshot at once.
    resync = await socket.receive_json_from(timeout=10)
    assert resync["type"] == "snapshot" and resync["v"] == snapshot["v"]
    await asyncio.to_thread(
        events._publish, table.id, [TableMessage(snapshot["v"] + 1, {"type": "ping"})]
    )
    assert await socket.receive_json_from(timeout=10) == {"v": snapshot["v"] + 1, "type": "ping"}
    await socket.disconnect()
    await redis.aclose()


@pytest.mark.django_db
@override_settings(CACHES=DEAD_CACHE)
def test_a_player_logs_in_while_redis_is_down(client, caplog):
    # The log-in limiter's counters live in the cache: unthrottled, not refused, meanwhile.
    UserFactory(username="dana")
    wrong = client.post("/accounts/login/", {"username": "dana", "password": "wrong"})
    assert wrong.status_code == 200
    right = client.post("/accounts/login/", {"username": "dana", "password": PASSWORD})
    assert right.status_code == 302
    assert client.get("/accounts/profile/").status_code == 200
    assert "the cache is unavailable" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_seating_over_rest_answers_when_redis_fails_after_the_commit(monkeypatch, caplog):
    """The channel layer (broadcasts) is Redis; it is used only after a command commits,
    so its failure must not turn its answer into a 500: viewers resync at the gap. (The
    deals and timeouts need no Redis: their deadlines are in the database.)"""

    def channel_layer_down(*args, **kwargs):
        raise RedisConnectionError("Error 111 connecting to Redis. Connection refused.")

    monkeypatch.setattr("tables.events._publish", channel_layer_down)
    # This test's failures alone (the first of an outage is the one logged in full).
    monkeypatch.setattr(events, "PUBLISH_FAILURES", events.PublishFailures())
    # No deal meanwhile (a running timer loop would deal the two, and leaving would wait
    # for the hand's end): the next hand is an hour away.
    table = TableFactory(seats=6, next_hand_at=timezone.now() + timedelta(hours=1))
    players = [UserFactory() for _ in range(2)]
    for number, player in enumerate(players, start=1):
        deposit_create(user=player, amount=50_000, idempotency_key=f"outage-{number}")
        sat = api_for(player).post(
            f"/api/tables/{table.id}/seat",
            {"seat": number, "buy_in": 10_000},
            format="json",
            headers={"Idempotency-Key": f"sit-{number}"},
        )
        assert sat.status_code == 201, sat.content
    left = api_for(players[0]).post(f"/api/tables/{table.id}/leave")
    assert left.status_code == 200, left.content
    assert left.json() == {"left": True}
    assert wallet_balance(user=players[0]) == 50_000
    assert "tables' stream: a publish failed" in caplog.text  # tables/events.py
    assert ledger_audit().ok


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [False, True])
def test_an_unknown_api_url_is_a_json_404(client, settings, debug):
    settings.DEBUG = debug
    response = client.get("/api/no-such-endpoint/")
    assert response.status_code == 404
    assert response.json() == {"detail": "There is no such API endpoint.", "code": "not_found"}
    # Pages outside the API keep the site's own 404 page.
    page = client.get("/no-such-page/")
    assert page.status_code == 404
    assert not page["Content-Type"].startswith("application/json")
