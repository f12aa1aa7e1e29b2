"""Settings shared by every environment, read from the environment (see poker_room.env).

Variables: DATABASE_URL, REDIS_URL, SECRET_KEY, DEBUG, ALLOWED_HOSTS, CSRF_TRUSTED_ORIGINS,
EMAIL_* and DEFAULT_FROM_EMAIL (mail), API_TOKEN_TTL_DAYS (auditors' API tokens).
"""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from csp.constants import NONE, SELF

from poker_room.env import (
    DEFAULT_DATABASE_URL,
    DEFAULT_REDIS_URL,
    celery_broker_url,
    env_bool,
    env_list,
    env_str,
)

BASE_DIR = Path(__file__).resolve().parent.parent.parent

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", "")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    # API tokens stored hashed (SHA-512) and expiring; replaces rest_framework.authtoken,
    # whose plaintext table accounts/migrations/0003 drops.
    "knox",
    "csp",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "accounts",
    "cashier",
    "tables",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Content-Security-Policy on every page (CONTENT_SECURITY_POLICY below).
    "poker_room.csp.RoomCSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "poker_room.urls"
ASGI_APPLICATION = "poker_room.asgi.application"
WSGI_APPLICATION = "poker_room.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL", DEFAULT_DATABASE_URL)
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", DEFAULT_REDIS_URL)
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "poker_room",
    }
}
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        # channels-redis waits for messages in 5 s blocking reads, and redis-py 8 gives
        # up on a read after 5 s by default: idle sockets would close. Wait longer.
        "CONFIG": {
            "hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
            "prefix": "poker_room",
        },
    }
}

CELERY_BROKER_URL = celery_broker_url(REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    "cashier-ledger-audit": {"task": "cashier.tasks.ledger_audit_task", "schedule": 3600.0},
    # Picks up turns and deals whose scheduled task was lost (a worker died): no table hangs.
    "tables-sweep": {"task": "tables.sweep", "schedule": 5.0},
    # Yesterday's rake report (UTC), rebuilt whole: a late or repeated run is harmless.
    "cashier-rake-report-daily": {
        "task": "cashier.tasks.rake_report_daily_task",
        "schedule": crontab(hour=0, minute=15),
    },
}

AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"
# Password-reset mail goes to the console unless a real backend is configured; production
# (settings/production.py) refuses the console and requires an SMTP host or another backend.
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = int(env_str("EMAIL_PORT", "25"))
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "webmaster@localhost")
SERVER_EMAIL = env_str("SERVER_EMAIL", DEFAULT_FROM_EMAIL)

# Content-Security-Policy (django-csp 4): nothing inline, nothing from elsewhere. Pages keep
# their scripts and styles in static/ (a `json_script` data block is not a script). The
# WebSocket's ws:/wss: URL of the page's own host is added per request by
# poker_room.csp.RoomCSPMiddleware. Django admin and the Swagger UI page (/api/docs/,
# a split view whose init script is its own URL) need nothing more; DRF's browsable API
# pages alone get style attributes (see poker_room/csp.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}

# Auditors' API tokens (django-rest-knox): only a SHA-512 digest is stored, each token
# expires API_TOKEN_TTL_DAYS after it was made, and it is sent as `Authorization: Token <t>`.
API_TOKEN_TTL_DAYS = int(env_str("API_TOKEN_TTL_DAYS", "30"))
REST_KNOX = {
    "TOKEN_TTL": timedelta(days=API_TOKEN_TTL_DAYS),
    "AUTH_HEADER_PREFIX": "Token",
    "AUTO_REFRESH": False,
}
# At most this many live tokens per auditor (accounts/services.api_token_create).
API_TOKEN_LIMIT_PER_USER = 10

# The cashier (cashier/gateways.py, cashier/services.py). The sandbox gateway credits
# every deposit at once: production must name a real gateway class here.
CASHIER_PAYMENT_GATEWAY = env_str("CASHIER_PAYMENT_GATEWAY", "cashier.gateways.SandboxGateway")
CASHIER_DEPOSIT_DAILY_LIMIT = 1_000_000  # cents per player, over a rolling 24 hours

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "knox.auth.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    # Scopes: the hand-history API (tables/api/throttles.py) falls back to "user".
    "DEFAULT_THROTTLE_RATES": {
        "anon": "60/min",
        "user": "600/min",
        "hand_history": "300/min",
        "hand_export": "20/min",
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Poker room API",
    "DESCRIPTION": "Wallet, ledger, cashier and hand histories of the poker room.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The docs page (/api/docs/) serves Swagger UI from our static files, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": "INFO"},
}
