"""WebSocket URL routes of every app, gathered for the ASGI router."""

from tables.routing import websocket_urlpatterns as table_routes

websocket_urlpatterns = [*table_routes]
