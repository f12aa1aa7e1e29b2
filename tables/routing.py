"""WebSocket routes of the tables app."""

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
