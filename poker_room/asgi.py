"""ASGI entry point: HTTP goes to Django, WebSockets to the Channels consumers.

WebSockets are session-authenticated (poker_room/socket_auth.py) and origin-checked:
scheme, host and port must be the site's own (poker_room/websocket_origin.py).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")
# Django must be set up before the consumers (and the models they import) are loaded.
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from poker_room.collector import tune_collector  # noqa: E402
from poker_room.framing import framing_debug_plain  # noqa: E402
from poker_room.healthz_front import HealthzFront  # noqa: E402
from poker_room.http_limit import HttpConcurrencyLimit  # noqa: E402
from poker_room.routing import websocket_urlpatterns  # noqa: E402
from poker_room.socket_auth import socket_auth  # noqa: E402
from poker_room.websocket_origin import SameOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        # /healthz on the event loop, queued behind nothing; then no more requests in
        # Django at once than the database pool can serve.
        "http": HealthzFront(
            HttpConcurrencyLimit(
                django_asgi_app,
                limit=settings.HTTP_CONCURRENCY,
                queue_timeout=settings.HTTP_QUEUE_TIMEOUT,
            )
        ),
        "websocket": SameOriginValidator(socket_auth(URLRouter(websocket_urlpatterns))),
    }
)

framing_debug_plain()

# Everything built so far lives as long as the process: out of the collector's way.
tune_collector(settings.GC_THRESHOLDS)
