"""Production settings: safe by default. SECRET_KEY is required; DEBUG is off unless set.

Behind HTTPS (set SECURE_SSL=1, the default) cookies are secure, HSTS is on (a year,
subdomains included, preload) and plain HTTP is redirected. The proxy in front must set
X-Forwarded-Proto.

Mail (password resets) must really leave: EMAIL_BACKEND defaults to SMTP here, the
console, in-memory, file and dummy backends are refused, and SMTP needs EMAIL_HOST and
DEFAULT_FROM_EMAIL (EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS or
EMAIL_USE_SSL as the server wants). Another backend (a mail API's) is taken as given.
"""

from django.core.exceptions import ImproperlyConfigured

from poker_room.env import env_bool, env_str

from .base import *  # noqa: F403
from .base import EMAIL_USE_SSL, EMAIL_USE_TLS

SMTP_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
# Backends that keep the mail on this machine: a player asking for a password reset would
# wait for a message that never comes (and the reset link would sit in the logs).
UNDELIVERED_BACKENDS = {
    "django.core.mail.backends.console.EmailBackend",
    "django.core.mail.backends.locmem.EmailBackend",
    "django.core.mail.backends.filebased.EmailBackend",
    "django.core.mail.backends.dummy.EmailBackend",
}

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
# The room's subdomains too, and eligible for the browsers' preload lists: a first visit
# is never made over plain HTTP. (Submitting the domain to hstspreload.org is a choice of
# its owner: every subdomain must then serve HTTPS.)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_SSL
SECURE_HSTS_PRELOAD = SECURE_SSL
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

EMAIL_BACKEND = env_str("EMAIL_BACKEND", SMTP_BACKEND)
if EMAIL_BACKEND in UNDELIVERED_BACKENDS:
    raise ImproperlyConfigured(
        f"EMAIL_BACKEND={EMAIL_BACKEND} does not deliver mail: production needs a real one"
    )
if EMAIL_BACKEND == SMTP_BACKEND:
    # base.py's defaults (localhost, webmaster@localhost) are a developer's: insist on both.
    missing = [name for name in ("EMAIL_HOST", "DEFAULT_FROM_EMAIL") if not env_str(name, "")]
    if missing:
        raise ImproperlyConfigured(f"{' and '.join(missing)} must be set in production (mail)")
    if EMAIL_USE_TLS and EMAIL_USE_SSL:
        raise ImproperlyConfigured("EMAIL_USE_TLS and EMAIL_USE_SSL exclude each other")
    if bool(env_str("EMAIL_HOST_USER", "")) != bool(env_str("EMAIL_HOST_PASSWORD", "")):
        raise ImproperlyConfigured("EMAIL_HOST_USER and EMAIL_HOST_PASSWORD go together")
