"""WSGI entry point, for management tooling only: the room itself is served over ASGI."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")
application = get_wsgi_application()
