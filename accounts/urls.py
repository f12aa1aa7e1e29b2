"""Sign-up, profile, an auditor's API tokens, and Django's own auth views (log-in
throttled, log-out, passwords)."""

from django.urls import include, path

from accounts import views

urlpatterns = [
    # Before django.contrib.auth.urls, so that this throttled log-in wins.
    path("login/", views.RoomLoginView.as_view(), name="login"),
    path("signup/", views.sign_up, name="signup"),
    path("profile/", views.profile, name="profile"),
    path("tokens/", views.api_tokens, name="api-tokens"),
    path("tokens/<str:digest>/revoke/", views.api_token_revoke_view, name="api-token-revoke"),
    path("", include("django.contrib.auth.urls")),
]
