"""Pages of the accounts app: sign-up, log-in, profile with preferences. Thin: forms and
services do the work."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts.forms import LoginForm, PreferencesForm, SignUpForm
from accounts.services import ScreenNameUnavailable, user_preferences_update, user_sign_up
from cashier.selectors import wallet_balance, wallet_entry_list, withdrawal_pending_total
from tables.history_selectors import recent_hands_for

RECENT_MOVEMENTS = 10


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


@login_required
@require_http_methods(["GET", "POST"])
def profile(request: HttpRequest) -> HttpResponse:
    form = PreferencesForm(request.POST or None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        user_preferences_update(user=request.user, **form.cleaned_data)
        messages.success(request, "Your preferences are saved.")
        return redirect("profile")
    context = {
        "form": form,
        "balance": wallet_balance(user=request.user),
        "pending": withdrawal_pending_total(user=request.user),
        "movements": wallet_entry_list(user=request.user)[:RECENT_MOVEMENTS],
        "recent_hands": recent_hands_for(user=request.user),
    }
    return render(request, "accounts/profile.html", context)
