"""GET /healthz reports PostgreSQL, Redis and Celery reachability."""

import pytest


@pytest.mark.django_db
def test_healthz_is_200_when_database_redis_and_a_worker_answer(client, celery_worker_process):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["failing"] == []
    assert set(body["checks"]) == {"database", "redis", "celery"}
    assert all(check["ok"] for check in body["checks"].values())


@pytest.mark.django_db
def test_healthz_is_503_and_names_redis_when_redis_is_unreachable(
    client, settings, celery_worker_process
):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["failing"] == ["redis"]
    assert "Connection" in body["checks"]["redis"]["detail"]


@pytest.mark.django_db
def test_healthz_answers_get_only(client):
    assert client.post("/healthz").status_code == 405
