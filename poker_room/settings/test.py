"""Test settings: the real PostgreSQL and Redis, fast password hashing, no throttling surprises.

pytest-django creates and drops `test_<name>` beside the configured database. Redis keys
get their own prefix so a running `make run` room and the suite never see each other's
channel messages or tasks.
"""

from poker_room.env import env_str

from .base import *  # noqa: F403
from .base import CACHES, CHANNEL_LAYERS, DATABASES, REST_FRAMEWORK

DEBUG = False
SECRET_KEY = env_str("SECRET_KEY", "test-only-insecure-key")
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Several suites on one server (two checkouts, parallel sessions) need their own database
# names; the Redis prefixes and the Celery queue follow it, so that neither a running room
# nor another suite ever sees this suite's channel messages or tasks.
TEST_DATABASE_NAME = env_str("TEST_DATABASE_NAME", "test_poker_room")
DATABASES["default"]["TEST"] = {"NAME": TEST_DATABASE_NAME}
# Consumers use the database from worker threads: close each connection after use, so
# that none is left open when the test database is dropped.
DATABASES["default"]["CONN_MAX_AGE"] = 0
CACHES["default"]["KEY_PREFIX"] = TEST_DATABASE_NAME
CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = TEST_DATABASE_NAME
# A test may run its own worker on a queue of its own (foundation/test_redis_outage.py).
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", TEST_DATABASE_NAME)
REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] = {"anon": "10000/min", "user": "10000/min"}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Static files are served from the app folders (no collectstatic in the suite).
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
# The suite's bots play as fast as they can, beside other suites: new seats are refused
# only in the tests of load shedding (and the chaos machine's), which set these.
SEATING_SHED_CPU = float(env_str("SEATING_SHED_CPU", "2"))  # above one core: never
SEATING_SLOW_CPU = float(env_str("SEATING_SLOW_CPU", "2"))
# Health tests change the room and look again at once.
HEALTH_REPORT_MAX_AGE_SECONDS = 0
ROOM_STATUS_MAX_AGE_SECONDS = 0
# The suite polls /healthz while processes start, and signs up many players from
# 127.0.0.1: the tests of these limits lower them.
HEALTHZ_PER_MINUTE = int(env_str("HEALTHZ_PER_MINUTE", "100000"))
SIGNUP_PER_ADDRESS = int(env_str("SIGNUP_PER_ADDRESS", "100000"))
