"""ASGI entry point: HTTP goes to Django, WebSockets to the Channels consumers.

WebSockets are session-authenticated and origin-checked: scheme, host and port must be
the site's own (poker_room/websocket_origin.py).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")
# Django must be set up before the consumers (and the models they import) are loaded.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from poker_room.routing import websocket_urlpatterns  # noqa: E402
from poker_room.websocket_origin import SameOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
