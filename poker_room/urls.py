"""Top-level URL routes."""

from django.contrib import admin
from django.urls import include, path

from poker_room.views import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("accounts/", include("accounts.urls")),
    path("cashier/", include("cashier.urls")),
    path("api/", include("cashier.api.urls")),
    path("", include("tables.urls")),
]
