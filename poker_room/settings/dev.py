"""Development settings: DEBUG on unless DEBUG says otherwise, a fixed insecure key."""

from poker_room.env import env_bool, env_str

from .base import *  # noqa: F403

DEBUG = env_bool("DEBUG", True)
SECRET_KEY = env_str("SECRET_KEY", "dev-only-insecure-key-do-not-use-in-production")
# Serve static files straight from the source folders, fresh on every change.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
