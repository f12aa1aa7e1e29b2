"""Development settings (what `make run` uses): a fixed insecure key; DEBUG off unless
DEBUG=1 is set.

DEBUG off by default because `make run` serves on a real port: with it on, a 404 was
Django's debug page (every URL pattern listed) and an error page showed settings and
local variables to whoever asked, and the query log slowed the room (README, "Speed").
`DEBUG=1 make run` turns it on for a developer who wants the debug pages.
"""

from poker_room.env import env_bool, env_str

from .base import *  # noqa: F403

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", "dev-only-insecure-key-do-not-use-in-production")
# Static files are served by WhiteNoise (not Django: that needs DEBUG) straight from the
# source folders, found at start-up whether or not collectstatic ran; with DEBUG, fresh
# on every change.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
