"""Pages of the accounts app: sign-up, log-in, an auditor's API tokens. Thin: forms and
services do the work. (The profile page shows the wallet and the hands too, so it lives
where it may depend on every app: poker_room/views.py.)

Sign-up is limited per client address (an IPv6 client's /64, as the log-in throttle
counts it): settings.SIGNUP_PER_ADDRESS accounts in SIGNUP_WINDOW_SECONDS (5 an hour),
counted in the Redis cache by every process; past it the page answers 429 with the
reason, before any form work. A household or an office behind one address shares the
allowance. While Redis is down sign-up is not limited (poker_room.throttling).
"""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts.forms import LoginForm, SignUpForm, client_address
from accounts.selectors import api_token_list, user_is_auditor
from accounts.services import (
    ApiTokenError,
    ScreenNameUnavailable,
    api_token_create,
    api_token_revoke,
    user_sign_up,
)
from poker_room.throttling import CacheWindowLimit


def _sign_up_limit() -> CacheWindowLimit:
    return CacheWindowLimit(
        scope="signup", limit=settings.SIGNUP_PER_ADDRESS, window=settings.SIGNUP_WINDOW_SECONDS
    )


def sign_up_throttled_message() -> str:
    minutes = settings.SIGNUP_WINDOW_SECONDS // 60
    return (
        "Too many accounts were created from your network lately. "
        f"Try again in {minutes} minutes at most, or log in to an account you have."
    )


class RoomLoginView(LoginView):
    authentication_form = LoginForm


@require_http_methods(["GET", "POST"])
def sign_up(request: HttpRequest) -> HttpResponse:
    limit, address = _sign_up_limit(), client_address(request)
    if request.method == "POST" and limit.reached(address):
        context = {"form": SignUpForm(), "throttled": sign_up_throttled_message()}
        return render(request, "accounts/signup.html", context, status=429)
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = user_sign_up(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password1"],
                email=form.cleaned_data.get("email", ""),
            )
        except ScreenNameUnavailable:
            # Someone took the name (or a look-alike) between the form's check and the insert.
            form.add_error("username", "That screen name was just taken; choose another.")
        else:
            limit.record(address)
            login(request, user)
            messages.success(request, f"Welcome to the room, {user.username}!")
            return redirect("profile")
    return render(request, "accounts/signup.html", {"form": form})


def _auditor_only(request: HttpRequest) -> None:
    if not user_is_auditor(user=request.user):
        raise PermissionDenied("API tokens are for auditors.")


@never_cache  # the answer to "create" holds the token: no cache may keep it
@login_required
@require_http_methods(["GET", "POST"])
def api_tokens(request: HttpRequest) -> HttpResponse:
    """An auditor's API tokens: list them; POST makes one and shows it, this once only."""
    _auditor_only(request)
    new_token = None
    status = 200
    if request.method == "POST":
        try:
            _instance, new_token = api_token_create(user=request.user)
        except ApiTokenError as error:
            messages.error(request, str(error))
            status = 409
    context = {
        "tokens": api_token_list(user=request.user),
        "new_token": new_token,
        "ttl_days": settings.API_TOKEN_TTL_DAYS,
    }
    return render(request, "accounts/tokens.html", context, status=status)


@login_required
@require_POST
def api_token_revoke_view(request: HttpRequest, digest: str) -> HttpResponse:
    _auditor_only(request)
    try:
        api_token_revoke(user=request.user, digest=digest)
    except ApiTokenError as error:
        raise Http404(str(error)) from error
    messages.success(request, "The token is revoked: it no longer opens the API.")
    return redirect("api-tokens")
