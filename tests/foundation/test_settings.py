"""Settings come from the environment, and production refuses unsafe defaults."""

import os
import subprocess
import sys

import pytest

from poker_room.env import celery_broker_url, env_bool, env_list, env_positive_ints
from tests.conftest import ROOT

# A production mail setup (finding 13): password resets leave through this SMTP server.
PRODUCTION_MAIL = {
    "EMAIL_HOST": "smtp.example.com",
    "EMAIL_PORT": "587",
    "EMAIL_HOST_USER": "room",
    "EMAIL_HOST_PASSWORD": "mail-secret",
    "EMAIL_USE_TLS": "1",
    "DEFAULT_FROM_EMAIL": "Poker room <noreply@example.com>",
}
SHOWN = "settings.DEBUG, settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE"


def run_settings(module: str, shown: str = SHOWN, **env: str) -> subprocess.CompletedProcess:
    # The machine's own EMAIL_* / SECRET_KEY / DEBUG must not leak into the child.
    environment = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "DEBUG", "DEFAULT_FROM_EMAIL", "API_TOKEN_TTL_DAYS"}
        and not k.startswith("EMAIL_")
    }
    environment.update(env, DJANGO_SETTINGS_MODULE=module)
    code = f"import django; from django.conf import settings; django.setup(); print({shown})"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True
    )


def test_production_requires_a_secret_key():
    result = run_settings("poker_room.settings.production")
    assert result.returncode != 0
    assert "SECRET_KEY must be set in production" in result.stderr


def test_production_is_not_debug_and_has_secure_cookies_by_default():
    result = run_settings("poker_room.settings.production", SECRET_KEY="x" * 50, **PRODUCTION_MAIL)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True", "True"]


def test_production_refuses_to_start_without_a_mail_server():
    """Password resets must not go to the console: no EMAIL_HOST, no start."""
    result = run_settings("poker_room.settings.production", SECRET_KEY="x" * 50)
    assert result.returncode != 0
    assert "EMAIL_HOST and DEFAULT_FROM_EMAIL must be set in production" in result.stderr


@pytest.mark.parametrize("backend", ["console", "locmem", "filebased", "dummy"])
def test_production_refuses_a_mail_backend_that_delivers_nothing(backend):
    result = run_settings(
        "poker_room.settings.production",
        SECRET_KEY="x" * 50,
        **PRODUCTION_MAIL,
        EMAIL_BACKEND=f"django.core.mail.backends.{backend}.EmailBackend",
    )
    assert result.returncode != 0
    assert "does not deliver mail" in result.stderr


def test_production_reads_its_mail_server_from_the_environment():
    shown = (
        "settings.EMAIL_BACKEND, settings.EMAIL_HOST, settings.EMAIL_PORT, "
        "settings.EMAIL_HOST_USER, settings.EMAIL_HOST_PASSWORD, settings.EMAIL_USE_TLS, "
        "settings.DEFAULT_FROM_EMAIL, sep='|'"
    )
    result = run_settings(
        "poker_room.settings.production", shown, SECRET_KEY="x" * 50, **PRODUCTION_MAIL
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().split("|") == [
        "django.core.mail.backends.smtp.EmailBackend",
        "smtp.example.com",
        "587",
        "room",
        "mail-secret",
        "True",
        "Poker room <noreply@example.com>",
    ]


def test_production_takes_a_mail_api_backend_without_smtp_settings():
    backend = "anymail.backends.mailgun.EmailBackend"  # a mail API's: not imported at start
    result = run_settings(
        "poker_room.settings.production",
        "settings.EMAIL_BACKEND",
        SECRET_KEY="x" * 50,
        EMAIL_BACKEND=backend,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == backend


def test_production_smtp_needs_a_sender_and_whole_credentials():
    result = run_settings(
        "poker_room.settings.production",
        "settings.EMAIL_BACKEND",
        SECRET_KEY="x" * 50,
        EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
        EMAIL_HOST="smtp.example.com",
    )
    assert result.returncode != 0  # SMTP with no sender address: refused
    assert "DEFAULT_FROM_EMAIL must be set" in result.stderr
    half = {**PRODUCTION_MAIL, "EMAIL_HOST_PASSWORD": ""}
    result = run_settings("poker_room.settings.production", SECRET_KEY="x" * 50, **half)
    assert result.returncode != 0
    assert "EMAIL_HOST_USER and EMAIL_HOST_PASSWORD go together" in result.stderr


def test_api_tokens_expire_after_the_configured_days():
    shown = "settings.REST_KNOX['TOKEN_TTL'].days"
    assert run_settings("poker_room.settings.dev", shown).stdout.strip() == "30"
    result = run_settings("poker_room.settings.dev", shown, API_TOKEN_TTL_DAYS="7")
    assert result.stdout.strip() == "7", result.stderr


def test_development_is_not_debug_unless_debug_is_set():
    """Issue 46, finding 13: `make run` (dev settings) served Django's debug pages."""
    shown = "settings.DEBUG, settings.WHITENOISE_USE_FINDERS, settings.WHITENOISE_AUTOREFRESH"
    result = run_settings("poker_room.settings.dev", shown)
    assert result.returncode == 0, result.stderr
    # Static files still served (by WhiteNoise, from the source folders).
    assert result.stdout.split() == ["False", "True", "False"]
    result = run_settings("poker_room.settings.dev", shown, DEBUG="1")
    assert result.stdout.split() == ["True", "True", "True"]


def test_production_hsts_covers_subdomains_and_may_be_preloaded():
    shown = (
        "settings.SECURE_HSTS_SECONDS, settings.SECURE_HSTS_INCLUDE_SUBDOMAINS, "
        "settings.SECURE_HSTS_PRELOAD, settings.SECURE_SSL_REDIRECT"
    )
    result = run_settings(
        "poker_room.settings.production", shown, SECRET_KEY="x" * 50, **PRODUCTION_MAIL
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["31536000", "True", "True", "True"]
    plain = run_settings(
        "poker_room.settings.production", shown, SECRET_KEY="x" * 50, SECURE_SSL="0",
        **PRODUCTION_MAIL,
    )  # fmt: skip
    assert plain.stdout.split() == ["0", "False", "False", "False"]


def test_env_bool_rejects_what_is_not_a_boolean(monkeypatch):
    monkeypatch.setenv("SOME_FLAG", "maybe")
    with pytest.raises(ValueError, match="SOME_FLAG must be a boolean"):
        env_bool("SOME_FLAG", False)
    monkeypatch.setenv("SOME_FLAG", "off")
    assert env_bool("SOME_FLAG", True) is False


def test_env_list_splits_on_commas(monkeypatch):
    monkeypatch.setenv("HOSTS", "a.example, b.example,,")
    assert env_list("HOSTS", []) == ["a.example", "b.example"]


@pytest.mark.parametrize(
    "value", ["0,10,10", "700,10", "700,10,10,1", "700;10;10", "a,b,c", "-1,10,10"]
)
def test_env_positive_ints_takes_exactly_so_many_positive_integers(monkeypatch, value):
    """GC_THRESHOLDS: a threshold of 0 would switch the collector off, so it is refused
    like a malformed value, by name, at start-up."""
    monkeypatch.setenv("GC_THRESHOLDS", value)
    with pytest.raises(ValueError, match="GC_THRESHOLDS must be 3 positive integers"):
        env_positive_ints("GC_THRESHOLDS", (700, 10, 10))


def test_env_positive_ints_reads_the_value_or_keeps_the_default(monkeypatch):
    monkeypatch.setenv("GC_THRESHOLDS", " 50000, 20 ,10")
    assert env_positive_ints("GC_THRESHOLDS", (700, 10, 10)) == (50000, 20, 10)
    monkeypatch.setenv("GC_THRESHOLDS", "")
    assert env_positive_ints("GC_THRESHOLDS", (700, 10, 10)) == (700, 10, 10)


def test_celery_reaches_a_unix_socket_redis_by_its_own_scheme():
    assert celery_broker_url("unix:///run/r.sock?db=0") == "redis+socket:///run/r.sock?db=0"
    assert celery_broker_url("redis://h:6379/0") == "redis://h:6379/0"
