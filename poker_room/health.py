"""Reachability of the services the room depends on: PostgreSQL, Redis, a Celery worker."""

from collections.abc import Callable
from typing import TypedDict

import redis
from django.conf import settings
from django.db import connection

from poker_room.celery import app as celery_app


class Check(TypedDict):
    ok: bool
    detail: str


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "reachable"


def _redis() -> str:
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    try:
        client.ping()
    finally:
        client.close()
    return "reachable"


def _celery() -> str:
    replies = celery_app.control.ping(timeout=1.0)
    if not replies:
        raise RuntimeError("no Celery worker answered a ping within 1 s")
    return f"{len(replies)} worker(s) answered"


CHECKS: dict[str, Callable[[], str]] = {
    "database": _database,
    "redis": _redis,
    "celery": _celery,
}


def health_report() -> dict[str, Check]:
    """Run every check; a failing one reports its error instead of raising."""
    report: dict[str, Check] = {}
    for name, check in CHECKS.items():
        try:
            report[name] = {"ok": True, "detail": check()}
        except Exception as exc:
            report[name] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"}
    return report
