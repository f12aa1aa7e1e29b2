"""Forms of the accounts pages: sign-up, log-in with throttling, preferences; the admin's
user forms (look-alike screen names refused everywhere a name is chosen)."""

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AdminUserCreationForm as BaseAdminUserCreationForm
from django.contrib.auth.forms import AuthenticationForm, UserChangeForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from accounts.models import User
from accounts.selectors import user_name_conflict
from accounts.services import (
    LoginThrottled,
    login_failure_record,
    login_success_clear,
    login_throttle_check,
)
from poker_room.addresses import address_group


class ScreenNameCheckMixin:
    """Refuse a screen name that is taken or looks like a taken one (accounts.names).

    Used by the sign-up form and by the admin's add and change forms (a rename must not
    take a look-alike either). The database refuses it too (unique indexes on
    lower(username) and on `name_skeleton`); this is the friendly word.
    """

    cleaned_data: dict
    instance: User

    def clean_username(self) -> str:
        username = self.cleaned_data["username"]
        taken = user_name_conflict(username=username, exclude_id=self.instance.pk)
        if taken is None:
            return username
        if taken.username.lower() == username.lower():
            raise ValidationError(
                "The screen name “%(name)s” is taken (screen names ignore case).",
                code="screen_name_taken",
                params={"name": username},
            )
        # Not naming the look-alike: it would be shown to whoever typed the name.
        raise ValidationError(
            "The screen name “%(name)s” looks too much like one that is taken "
            "(letters from other alphabets, digits for letters); choose another.",
            code="screen_name_look_alike",
            params={"name": username},
        )


class SignUpForm(ScreenNameCheckMixin, UserCreationForm):
    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")
        labels = {"username": "Screen name", "email": "Email (for password resets)"}


class AdminUserCreationForm(ScreenNameCheckMixin, BaseAdminUserCreationForm):
    class Meta(BaseAdminUserCreationForm.Meta):
        model = User


class AdminUserChangeForm(ScreenNameCheckMixin, UserChangeForm):
    class Meta(UserChangeForm.Meta):
        model = User


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
    """The client's address as the log-in throttle counts it (an IPv6 client's /64)."""
    return address_group((request.META.get("REMOTE_ADDR") if request else None) or "unknown")
