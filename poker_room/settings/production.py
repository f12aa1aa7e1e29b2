"""Production settings: safe by default. SECRET_KEY is required; DEBUG is off unless set.

Behind HTTPS (set SECURE_SSL=1, the default) cookies are secure, HSTS is on and plain
HTTP is redirected. The proxy in front must set X-Forwarded-Proto.
"""

from django.core.exceptions import ImproperlyConfigured

from poker_room.env import env_bool, env_str

from .base import *  # noqa: F403

SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set in production")
DEBUG = env_bool("DEBUG", False)

SECURE_SSL = env_bool("SECURE_SSL", True)
SESSION_COOKIE_SECURE = SECURE_SSL
CSRF_COOKIE_SECURE = SECURE_SSL
SECURE_SSL_REDIRECT = SECURE_SSL
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = 31536000 if SECURE_SSL else 0
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
