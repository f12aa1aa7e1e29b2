"""WebSocket URL routes of every app, gathered for the ASGI router.

The last route takes every path no app claims (`/ws/tables/abc/`, `/ws/nothing/`) and
closes it with code 4404 once accepted, as an unknown table is (a refused handshake would
show a browser only 1006); without it the router raises and the server answers 500.
"""

from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import re_path

from tables.routing import websocket_urlpatterns as table_routes


class NoSuchRoute(AsyncWebsocketConsumer):
    """Close a socket to a path no app serves with code 4404."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=4404)


websocket_urlpatterns = [*table_routes, re_path(r"", NoSuchRoute.as_asgi())]
