"""Admin of users; the admin log-in is throttled like the site's."""

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.forms import AdminLoginForm
from accounts.models import User

admin.site.login_form = AdminLoginForm


@admin.register(User)
class RoomUserAdmin(UserAdmin):
    fieldsets = (
        *UserAdmin.fieldsets,
        ("Table preferences", {"fields": ("auto_muck", "chop_blinds", "four_color_deck")}),
    )
