"""Forms of the accounts pages: sign-up, log-in with throttling, preferences."""

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from accounts.models import User
from accounts.services import (
    LoginThrottled,
    login_failure_record,
    login_success_clear,
    login_throttle_check,
)


class SignUpForm(UserCreationForm):
    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")
        labels = {"username": "Screen name", "email": "Email (for password resets)"}

    def clean_username(self) -> str:
        username = self.cleaned_data["username"]
        # The database refuses it too (a unique index on lower(username)); this is the
        # friendly word for the common case.
        if User.objects.filter(username__iexact=username).exists():
            raise ValidationError(
                "The screen name “%(name)s” is taken (screen names ignore case).",
                code="screen_name_taken",
                params={"name": username},
            )
        return username


class ThrottledLoginMixin:
    """Refuse log-ins past the failure limit (see accounts.services), and count failures."""

    request: HttpRequest | None
    cleaned_data: dict

    def clean(self) -> dict:
        username = self.cleaned_data.get("username") or ""
        address = client_address(self.request)
        try:
            login_throttle_check(username=username, address=address)
        except LoginThrottled as exc:
            raise ValidationError(str(exc), code="throttled") from exc
        try:
            cleaned = super().clean()  # type: ignore[misc]
        except ValidationError:
            login_failure_record(username=username, address=address)
            raise
        login_success_clear(username=username, address=address)
        return cleaned


class LoginForm(ThrottledLoginMixin, AuthenticationForm):
    pass


class AdminLoginForm(ThrottledLoginMixin, AdminAuthenticationForm):
    pass


class PreferencesForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ("auto_muck", "chop_blinds", "four_color_deck")
        labels = {
            "auto_muck": "Auto-muck losing hands",
            "chop_blinds": "Chop the blinds",
            "four_color_deck": "Four-colour deck",
        }


def client_address(request: HttpRequest | None) -> str:
    return (request.META.get("REMOTE_ADDR") if request else None) or "unknown"
