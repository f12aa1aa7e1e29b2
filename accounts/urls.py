"""Sign-up, an auditor's API tokens, and Django's own auth views (log-in throttled,
log-out, passwords). The profile page, under /accounts/ too, is routed by poker_room.urls."""

from django.urls import include, path

from accounts import views

urlpatterns = [
    # Before django.contrib.auth.urls, so that this throttled log-in wins.
    path("login/", views.RoomLoginView.as_view(), name="login"),
    path("signup/", views.sign_up, name="signup"),
    path("tokens/", views.api_tokens, name="api-tokens"),
    path("tokens/<str:digest>/revoke/", views.api_token_revoke_view, name="api-token-revoke"),
    path("", include("django.contrib.auth.urls")),
]
