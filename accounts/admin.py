"""Admin of users; the admin log-in is throttled like the site's.

Adding or renaming a user in the admin refuses a screen name that is taken or looks like
a taken one, as the sign-up does (accounts.forms.ScreenNameCheckMixin).
"""

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.forms import AdminLoginForm, AdminUserChangeForm, AdminUserCreationForm
from accounts.models import User

admin.site.login_form = AdminLoginForm


@admin.register(User)
class RoomUserAdmin(UserAdmin):
    form = AdminUserChangeForm
    add_form = AdminUserCreationForm
    fieldsets = (
        *UserAdmin.fieldsets,
        ("Table preferences", {"fields": ("auto_muck", "chop_blinds", "four_color_deck")}),
    )
