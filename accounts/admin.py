from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.models import User


@admin.register(User)
class RoomUserAdmin(UserAdmin):
    fieldsets = (
        *UserAdmin.fieldsets,
        ("Table preferences", {"fields": ("auto_muck", "chop_blinds", "four_color_deck")}),
    )
