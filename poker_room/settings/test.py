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
CACHES["default"]["KEY_PREFIX"] = "poker_room_test"
CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = "poker_room_test"
# Tasks go to a queue of the suite's own, so a worker of a running room never takes them.
CELERY_TASK_DEFAULT_QUEUE = "poker_room_test"
REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] = {"anon": "10000/min", "user": "10000/min"}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Static files are served from the app folders (no collectstatic in the suite).
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
# Several suites on one server (two checkouts, parallel sessions) need their own names.
DATABASES["default"]["TEST"] = {"NAME": env_str("TEST_DATABASE_NAME", "test_poker_room")}
