"""Settings shared by every environment, read from the environment (see poker_room.env).

Variables: DATABASE_URL, REDIS_URL, SECRET_KEY, DEBUG, ALLOWED_HOSTS, CSRF_TRUSTED_ORIGINS,
EMAIL_* and DEFAULT_FROM_EMAIL (mail), API_TOKEN_TTL_DAYS (auditors' API tokens).
"""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from csp.constants import NONE, SELF
from redis.exceptions import ConnectionError as RedisConnectionError

from poker_room.env import (
    DEFAULT_DATABASE_URL,
    DEFAULT_REDIS_URL,
    celery_broker_url,
    env_bool,
    env_list,
    env_positive_ints,
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
    # Last, so that it sees a view's exception first: JSON errors under /api/ and a 503
    # for a database that cannot serve (a pool timeout), on every page.
    "poker_room.api_errors.ApiErrorMiddleware",
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
# Connections come from a psycopg pool of at most DB_POOL_MAX per process (README,
# "Database connections"): under daphne every HTTP request runs in a thread of its own, and
# persistent per-thread connections (CONN_MAX_AGE) were never closed, so a burst of
# requests used up PostgreSQL's max_connections. The pool needs CONN_MAX_AGE = 0 (Django
# then hands the connection back to the pool at the end of each request). A request that
# waits DB_POOL_TIMEOUT seconds for a connection gets a 503, not a hang
# (poker_room.api_errors and poker_room.http_limit). poker_room.asgi lets no more HTTP
# requests run at once than the pool can serve.
DB_POOL_MIN = int(env_str("DB_POOL_MIN", "1"))
DB_POOL_MAX = int(env_str("DB_POOL_MAX", "20"))
DB_POOL_TIMEOUT = float(env_str("DB_POOL_TIMEOUT", "10"))
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
# Django's backend with a cheaper check of a connection on loan (poker_room/postgres/base.py).
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["ENGINE"] = "poker_room.postgres"
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # the pool checks a connection on loan
DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
    "min_size": min(DB_POOL_MIN, DB_POOL_MAX),
    "max_size": DB_POOL_MAX,
    "timeout": DB_POOL_TIMEOUT,
    # Connections above min_size idle for a minute are closed: a burst's are given back.
    "max_idle": 60.0,
}
# HTTP requests inside Django at once per web process (poker_room.http_limit): one less
# than the pool, whose last connection serves the WebSocket consumers' database thread.
HTTP_CONCURRENCY = int(env_str("HTTP_CONCURRENCY", str(max(1, DB_POOL_MAX - 1))))
HTTP_QUEUE_TIMEOUT = float(env_str("HTTP_QUEUE_TIMEOUT", "30"))
# How long a table command waits for a lock (its table's row, a ledger account) before it
# is refused `table_busy` (tables/services/command.py); a command holds its lock for
# milliseconds, so only a stuck holder is ever waited for this long.
TABLE_LOCK_TIMEOUT_MS = int(env_str("TABLE_LOCK_TIMEOUT_MS", "5000"))
# New seats are refused (`room_busy`) while a web process's database thread spent more
# than this share of a core on the seated players' play over the last few seconds (its
# CPU time: tables/capacity.py says why, and how the defaults were found on the two-core
# development machine; raise both on a machine with cores to spare); with SEATING_OPEN
# off, always (a process drained before a restart). Above the slow share, one new seat is
# taken every SEATING_SLOW_INTERVAL seconds and the others are refused.
SEATING_SLOW_CPU = float(env_str("SEATING_SLOW_CPU", "0.09"))
SEATING_SLOW_INTERVAL = float(env_str("SEATING_SLOW_INTERVAL", "1"))
SEATING_SHED_CPU = float(env_str("SEATING_SHED_CPU", "0.15"))
SEATING_OPEN = env_bool("SEATING_OPEN", True)
# Table sockets one viewer may hold open in a web process (tables/viewer_limits.py; each
# process counts its own): a signed-in user, and a client address, which everyone behind
# one NAT shares, hence more. A signed-in socket counts under both. Over a cap, a new
# socket is closed with 4429. The load test's bots all connect from 127.0.0.1: start its
# room with a high TABLE_SOCKETS_PER_ADDRESS (bench/load.py).
TABLE_SOCKETS_PER_USER = int(env_str("TABLE_SOCKETS_PER_USER", "16"))
TABLE_SOCKETS_PER_ADDRESS = int(env_str("TABLE_SOCKETS_PER_ADDRESS", "64"))
# One token bucket per viewer, shared by all their sockets in the process, spent by each
# connect (closed 4429 when empty) and each frame (`rate_limited`): a burst of
# TABLE_VIEWER_BURST, refilled at TABLE_VIEWER_PER_SECOND a second.
TABLE_VIEWER_BURST = float(env_str("TABLE_VIEWER_BURST", "40"))
TABLE_VIEWER_PER_SECOND = float(env_str("TABLE_VIEWER_PER_SECOND", "20"))
# The cyclic garbage collector's thresholds in the web processes and the timer loop
# (poker_room/collector.py): container objects allocated between young collections, then
# young collections per middle one, middle ones per full one. CPython's default is
# 700,10,10; at 500 tables these measured others' sockets p99 81 ms against 145 (README,
# "Speed", session 19).
GC_THRESHOLDS = env_positive_ints("GC_THRESHOLDS", (50000, 20, 10))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", DEFAULT_REDIS_URL)
# The tables' feeds are Redis pub/sub channels, which span Redis's databases: their names
# carry the room's PostgreSQL server and database (tables/feed.py), or this name if set.
TABLE_FEED_ROOM = env_str("TABLE_FEED_ROOM", "")
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "poker_room",
        # Only throttle counters and log-in limits live here: when Redis is down or
        # unreachable, a request finds out in a second, not after the OS's TCP timeout
        # (the throttles then let it through, poker_room.throttling).
        "OPTIONS": {"socket_connect_timeout": 1.0, "socket_timeout": 1.0},
    }
}
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "poker_room.channel_layer.RefreshingRedisChannelLayer",
        # channels-redis waits for messages in 5 s blocking reads, and redis-py 8 gives
        # up on a read after 5 s by default: idle sockets would close. Wait longer.
        "CONFIG": {
            # After a Redis restart every pooled connection is dead: retry a command once
            # on a fresh one instead of failing it (a consumer's group_add, a broadcast).
            "hosts": [
                {
                    "address": REDIS_URL,
                    "socket_timeout": 30,
                    "retry_on_error": [RedisConnectionError],
                }
            ],
            "prefix": "poker_room",
            # A channel whose process died stays in its table's group until the group
            # entry expires; every message to it is then dropped and logged as "over
            # capacity". Entries expire after 5 minutes instead of 24 hours; the layer
            # (poker_room.channel_layer) re-adds its own live members every minute.
            "group_expiry": 300,
            "group_refresh_interval": 60,
            # A live consumer drains its channel at once: 100 waiting messages (several
            # hands) means a stuck client, which then resyncs from a snapshot; a message
            # nobody reads in 60 s is dropped.
            "capacity": 100,
            "expiry": 60,
        },
    }
}

CELERY_BROKER_URL = celery_broker_url(REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A Redis restart or outage must not stop the worker (a supervisor would restart it, and
# its tasks wait meanwhile): reconnect for as long as it takes. poker_room.broker fixes
# the crash kombu 5.7 had on the way there. A task running when the connection drops
# finishes (its work is in PostgreSQL and every table task is idempotent); its ack is lost
# and it runs again.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Fail fast on a dead Redis and probe idle broker sockets, so that a restart is
    # noticed within seconds rather than at the next TCP timeout.
    "socket_connect_timeout": 5,
    "socket_keepalive": True,
    "health_check_interval": 10,
}
CELERY_TIMEZONE = "UTC"
# The room-wide tasks that belong to no app (autodiscovery finds the apps' own).
CELERY_IMPORTS = ["poker_room.tasks"]
DATABASE_UPKEEP_SECONDS = 60.0
# Beat's heartbeat: the room status tells a stopped beat or worker by it (room_status.py).
ROOM_HEARTBEAT_SECONDS = float(env_str("ROOM_HEARTBEAT_SECONDS", "10"))
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    "cashier-ledger-audit": {"task": "cashier.tasks.ledger_audit_task", "schedule": 3600.0},
    # Only when PostgreSQL's autovacuum is off (poker_room/postgres/upkeep.py). A run still
    # queued when the next is due is dropped; one still running is left to finish.
    "database-upkeep": {
        "task": "poker_room.tasks.database_upkeep_task",
        "schedule": DATABASE_UPKEEP_SECONDS,
        "options": {"expires": DATABASE_UPKEEP_SECONDS},
    },
    # A run not started before the next is due is dropped: the next one says the same.
    "room-heartbeat": {
        "task": "poker_room.tasks.room_heartbeat_task",
        "schedule": ROOM_HEARTBEAT_SECONDS,
        "options": {"expires": ROOM_HEARTBEAT_SECONDS},
    },
    # Yesterday's rake report (UTC), rebuilt whole: a late or repeated run is harmless.
    "tables-rake-report-daily": {
        "task": "tables.tasks.rake_report_daily_task",
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
    # The counters live in Redis; while it is down these let requests through (with a
    # warning) so that the cashier and the histories, which need only PostgreSQL, answer.
    "DEFAULT_THROTTLE_CLASSES": [
        "poker_room.throttling.FailOpenAnonRateThrottle",
        "poker_room.throttling.FailOpenUserRateThrottle",
    ],
    # An anonymous client is throttled by REMOTE_ADDR, never by X-Forwarded-For, which any
    # client may write (DRF's default, None, takes that whole header as the key). Behind
    # a proxy, daphne's --proxy-headers puts the client's address in REMOTE_ADDR.
    "NUM_PROXIES": 0,
    # Every API error is JSON {"detail", "code"}, an unexpected exception too (in
    # development as well: no HTML debug page under /api/).
    "EXCEPTION_HANDLER": "poker_room.api_errors.api_exception_handler",
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
    # The schema and the docs page are for the room's overseers, as a regulated site keeps
    # them: staff and auditors (401 for anonymous, a token first; 403 for players).
    "SERVE_PERMISSIONS": ["poker_room.api.permissions.IsStaffOrAuditor"],
    "SERVE_AUTHENTICATION": [
        "knox.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
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

# /healthz, whether this process can serve (poker_room.health): a probe's answer is reused
# for this many seconds; each client address may ask this many times a minute per
# process (429 past it: a load balancer asks every few seconds).
HEALTH_REPORT_MAX_AGE_SECONDS = float(env_str("HEALTH_REPORT_MAX_AGE_SECONDS", "1"))
HEALTHZ_PER_MINUTE = int(env_str("HEALTHZ_PER_MINUTE", "60"))
# /api/status/, the room's alarms for staff and auditors (poker_room.room_status): a
# process reuses its last report for this many seconds.
ROOM_STATUS_MAX_AGE_SECONDS = float(env_str("ROOM_STATUS_MAX_AGE_SECONDS", "5"))
# Sign-ups per client address (an IPv6 client's /64) in a window of SIGNUP_WINDOW_SECONDS
# (accounts/views.py; counted in the Redis cache, across processes).
SIGNUP_PER_ADDRESS = int(env_str("SIGNUP_PER_ADDRESS", "5"))
SIGNUP_WINDOW_SECONDS = int(env_str("SIGNUP_WINDOW_SECONDS", "3600"))
