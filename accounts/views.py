"""Pages of the accounts app: sign-up, log-in, an auditor's API tokens. Thin: forms and
services do the work. (The profile page shows the wallet and the hands too, so it lives
where it may depend on every app: poker_room/views.py.)"""

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

from accounts.forms import LoginForm, SignUpForm
from accounts.selectors import api_token_list, user_is_auditor
from accounts.services import (
    ApiTokenError,
    ScreenNameUnavailable,
    api_token_create,
    api_token_revoke,
    user_sign_up,
)


class RoomLoginView(LoginView):
    authentication_form = LoginForm


@require_http_methods(["GET", "POST"])
def sign_up(request: HttpRequest) -> HttpResponse:
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
