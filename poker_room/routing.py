"""WebSocket URL routes of every app, gathered for the ASGI router.

The last route takes every path no app claims (`/ws/tables/abc/`, `/ws/nothing/`) and
refuses it with close code 4404, as an unknown table is; without it the router raises and
the server answers 500.
"""

from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import re_path

from tables.routing import websocket_urlpatterns as table_routes


class NoSuchRoute(AsyncWebsocketConsumer):
    """Refuse the handshake of a path no app serves (close code 4404)."""

    async def connect(self) -> None:
        await self.close(code=4404)


websocket_urlpatterns = [*table_routes, re_path(r"", NoSuchRoute.as_asgi())]
