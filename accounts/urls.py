"""Log-in, log-out and password views (Django's own auth views)."""

from django.urls import include, path

urlpatterns = [
    path("", include("django.contrib.auth.urls")),
]
