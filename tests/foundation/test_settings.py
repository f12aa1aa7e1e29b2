"""Settings come from the environment, and production refuses unsafe defaults."""

import os
import subprocess
import sys

import pytest

from poker_room.env import celery_broker_url, env_bool, env_list
from tests.conftest import ROOT


def run_settings(module: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    environment.update(env, DJANGO_SETTINGS_MODULE=module)
    code = (
        "import django; from django.conf import settings; django.setup(); "
        "print(settings.DEBUG, settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE)"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True
    )


def test_production_requires_a_secret_key():
    result = run_settings("poker_room.settings.production")
    assert result.returncode != 0
    assert "SECRET_KEY must be set in production" in result.stderr


def test_production_is_not_debug_and_has_secure_cookies_by_default():
    result = run_settings("poker_room.settings.production", SECRET_KEY="x" * 50)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True", "True"]


def test_development_defaults_to_debug():
    result = run_settings("poker_room.settings.dev")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "True"


def test_env_bool_rejects_what_is_not_a_boolean(monkeypatch):
    monkeypatch.setenv("SOME_FLAG", "maybe")
    with pytest.raises(ValueError, match="SOME_FLAG must be a boolean"):
        env_bool("SOME_FLAG", False)
    monkeypatch.setenv("SOME_FLAG", "off")
    assert env_bool("SOME_FLAG", True) is False


def test_env_list_splits_on_commas(monkeypatch):
    monkeypatch.setenv("HOSTS", "a.example, b.example,,")
    assert env_list("HOSTS", []) == ["a.example", "b.example"]


def test_celery_reaches_a_unix_socket_redis_by_its_own_scheme():
    assert celery_broker_url("unix:///run/r.sock?db=0") == "redis+socket:///run/r.sock?db=0"
    assert celery_broker_url("redis://h:6379/0") == "redis://h:6379/0"
