"""Top-level URL routes."""

from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from poker_room.api.status import RoomStatusView
from poker_room.views import admin_room_status, healthz, profile

urlpatterns = [
    path("admin/status/", admin.site.admin_view(admin_room_status), name="admin-room-status"),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("accounts/profile/", profile, name="profile"),
    path("accounts/", include("accounts.urls")),
    path("cashier/", include("cashier.urls")),
    path("api/", include("cashier.api.urls")),
    path("api/", include("tables.api.urls")),
    path("api/status/", RoomStatusView.as_view(), name="api-status"),
    # The schema and the docs are for staff and auditors only (SPECTACULAR_SETTINGS'
    # SERVE_PERMISSIONS); the docs page sends a visitor who is not signed in to log in.
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Swagger UI from our own static files (drf-spectacular-sidecar), no CDN. The split view
    # serves its init script at ?script (no inline script), and our template moves its
    # inline <style> to static/css/swagger.css: the page keeps the room's strict CSP.
    path(
        "api/docs/",
        login_required(
            SpectacularSwaggerSplitView.as_view(
                url_name="api-schema", template_name="api/swagger_ui.html"
            )
        ),
        name="api-docs",
    ),
    path("", include("tables.urls")),
]
