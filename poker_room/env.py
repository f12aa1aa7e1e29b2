"""Reading settings from the environment, and the service URLs derived from them.

Every setting that differs between machines comes from an environment variable with a
default that works on a developer machine running PostgreSQL and Redis locally.
"""

import os
from urllib.parse import urlsplit

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/poker_room"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def env_str(name: str, default: str) -> str:
    value = os.environ.get(name, "").strip()
    return value or default


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ValueError(f"{name} must be a boolean (1/0, true/false, yes/no, on/off), not {value!r}")


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_positive_ints(name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    """As many positive integers as the default has, comma-separated: `700,10,10`."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        numbers = tuple(int(item) for item in value.split(","))
    except ValueError:
        numbers = ()
    if len(numbers) != len(default) or min(numbers) < 1:
        raise ValueError(
            f"{name} must be {len(default)} positive integers, comma-separated, not {value!r}"
        )
    return numbers


def celery_broker_url(redis_url: str) -> str:
    """Kombu spells a unix-socket Redis `redis+socket://`; redis-py spells it `unix://`."""
    parts = urlsplit(redis_url)
    if parts.scheme == "unix":
        return "redis+socket://" + redis_url[len("unix://") :]
    return redis_url
