"""Django admin for stake levels, tables, (read-only) hands and the tables' chat.

A hand in progress shows none of its secrets (state, deck, salt, hole cards) to anyone,
superusers included, until it is finished (see HandAdmin).

A stake level is checked by the engine's own configuration check, so an admin is told in
words what is wrong with a combination (a kill pot on a pot-limit table, say).

The rake accounting is read-only too: contributions are written when a hand settles,
reports by the daily task (tables/rake.py).
"""

import json

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest

from cashier.admin import ReadOnlyAdmin
from tables.engine.errors import ConfigError
from tables.engine.events import EVENT_TYPES, Event
from tables.engine.state import HandState
from tables.exceptions import TableError
from tables.models import (
    ChatMessage,
    Hand,
    HandEvent,
    HandPlayer,
    HandStatus,
    RakeContribution,
    RakeReport,
    RakeReportPlayer,
    RakeReportTable,
    Seat,
    StakeLevel,
    Table,
    TableStatus,
)
from tables.services.admin import table_status_set
from tables.services.config import stake_config

AMOUNTS_WITH_DEFAULTS = ("small_blind", "small_bet", "big_bet", "buy_in_min", "buy_in_max")


class StakeLevelForm(forms.ModelForm):
    """The admin supplies the model and fields; this fills the amounts left empty with
    RULES.md's defaults (`StakeLevel.defaults_fill`) and adds the engine's check."""

    def clean(self) -> dict:
        cleaned = super().clean()
        if self.errors:
            return cleaned
        candidate = StakeLevel(**{k: v for k, v in cleaned.items() if k != "id"})
        candidate.defaults_fill()
        for name in AMOUNTS_WITH_DEFAULTS:  # show the admin what was filled in
            cleaned[name] = getattr(candidate, name)
        try:
            stake_config(stake=candidate).validate()
        except ConfigError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return cleaned


@admin.register(StakeLevel)
class StakeLevelAdmin(admin.ModelAdmin):
    form = StakeLevelForm
    list_display = ("name", "game", "structure", "small_blind", "big_blind", "rake_percent_bp")
    list_filter = ("game", "structure")
    fieldsets = (
        (None, {"fields": ("name", "game", "structure")}),
        (
            "Stakes (cents)",
            {"fields": ("small_blind", "big_blind", "small_bet", "big_bet", "ante")},
        ),
        ("Spread limit (cents)", {"fields": ("spread_min", "spread_max")}),
        ("Buy-in (cents)", {"fields": ("buy_in_min", "buy_in_max", "rathole_minutes")}),
        (
            "Rake",
            {
                "fields": (
                    "rake_percent_bp",
                    "rake_cap_2",
                    "rake_cap_3_4",
                    "rake_cap_5_plus",
                    "no_flop_no_drop",
                )
            },
        ),
        (
            "Optional rules",
            {
                "fields": (
                    "min_bet_doubles_late",
                    "allow_straddle",
                    "allow_chop",
                    "kill",
                    "kill_min_pot",
                    "killer_acts_last",
                    "allow_overblind",
                    "run_it_twice",
                    "allin_protection",
                    "allin_protection_per_day",
                )
            },
        ),
    )


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    can_delete = False
    readonly_fields = ("number", "player", "stack", "status", "sat_down_at")
    fields = readonly_fields

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


def _set_status(status: TableStatus, label: str):
    def action(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
        done = 0
        for table in queryset:
            try:
                table_status_set(table_id=table.id, status=status)
            except TableError as exc:  # busy (its lock held by a stuck command), or gone
                modeladmin.message_user(request, f"{table}: {exc.message}", messages.ERROR)
            else:
                done += 1
        if done:
            modeladmin.message_user(request, f"{done} table(s) {label}.", messages.SUCCESS)

    action.__name__ = f"table_{status}"
    return admin.action(description=f"{label.capitalize()} the selected tables")(action)


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    list_display = ("name", "stake_level", "seats", "status", "paused_reason")
    list_filter = ("status", "stake_level")
    # Why a table stopped by itself (commands failing in a row): opening it clears this.
    readonly_fields = (
        "status",
        "paused_reason",
        "failure_count",
        "event_seq",
        "button_seat",
        "next_hand_at",
        "created_at",
    )
    inlines = [SeatInline]
    actions = [
        _set_status(TableStatus.OPEN, "opened"),
        _set_status(TableStatus.PAUSED, "paused"),
        _set_status(TableStatus.CLOSED, "closed"),
    ]


# Event types every spectator sees; the others (hole cards) are private to one seat, and
# a type the engine does not know is treated as private.
PUBLIC_EVENT_TYPES = frozenset(
    name for name, cls in EVENT_TYPES.items() if cls.visible_to is Event.visible_to
)
# What the admin hides of a hand in progress: the engine state (every hole card and the
# deck) and the salt (with the commitment it would let anyone check a guessed deck).
HAND_SECRET_FIELDS = ("state", "salt")


def _hand_finished(hand: Hand | None) -> bool:
    return hand is not None and hand.status == HandStatus.FINISHED


class _ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class HandEventInline(_ReadOnlyInline):
    """Every event of a finished hand, hole cards included."""

    model = HandEvent
    readonly_fields = ("seq", "type", "data", "created_at")
    fields = readonly_fields


class PublicHandEventInline(HandEventInline):
    """The events of a hand in progress that a spectator sees: no hole cards."""

    verbose_name_plural = "hand events (public ones only until the hand is finished)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[HandEvent]:
        return super().get_queryset(request).filter(type__in=PUBLIC_EVENT_TYPES)


class HandPlayerInline(_ReadOnlyInline):
    """Who was dealt in at each seat (by user; the screen name as it was then)."""

    model = HandPlayer
    readonly_fields = ("seat", "user", "screen_name")
    fields = readonly_fields


@admin.register(Hand)
class HandAdmin(ReadOnlyAdmin):
    """Hands, read-only. A hand in progress shows none of its secrets (RULES §9): not
    its engine state (every hole card and the deck), not its salt, no hole-card event;
    a spectator's view of the table stands in for the state. Once the hand is finished
    everything is shown."""

    list_display = ("__str__", "status", "button", "rake", "started_at", "ended_at")
    list_filter = ("status", "table")

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        # Django lets a list URL filter on any column of the model: `?state__contains=`
        # or `?salt__startswith=` would list a live hand only when its hidden state holds
        # the card asked for, an oracle for every hole card. The secrets are not filters.
        if lookup.split(LOOKUP_SEP, 1)[0] in HAND_SECRET_FIELDS:
            return False
        return super().lookup_allowed(lookup, value, request)

    def get_inlines(self, request: HttpRequest, obj: Hand | None) -> list:
        events = HandEventInline if _hand_finished(obj) else PublicHandEventInline
        return [HandPlayerInline, events]

    def get_fields(self, request: HttpRequest, obj: Hand | None = None) -> list[str]:
        return list(self.get_readonly_fields(request, obj))

    def get_readonly_fields(self, request: HttpRequest, obj: Hand | None = None) -> list[str]:
        names = [f.name for f in Hand._meta.fields]
        if _hand_finished(obj):
            return names
        return [name for name in names if name not in HAND_SECRET_FIELDS] + ["public_view"]

    @admin.display(description="what a spectator sees (the state is hidden until the end)")
    def public_view(self, obj: Hand) -> str:
        return json.dumps(HandState.from_dict(obj.state).view(None), indent=1, sort_keys=True)


@admin.register(ChatMessage)
class ChatMessageAdmin(ReadOnlyAdmin):
    """Every line written at every table, for staff; nobody edits or deletes one."""

    list_display = ("created_at", "table", "seat", "author", "text")
    list_filter = ("table",)
    search_fields = ("author__username", "text", "table__name")
    date_hierarchy = "created_at"
    readonly_fields = ("table", "author", "seat", "text", "created_at")


@admin.register(RakeContribution)
class RakeContributionAdmin(ReadOnlyAdmin):
    list_display = ("id", "hand", "seat", "player", "amount", "created_at")
    list_select_related = ("hand__table", "player")
    search_fields = ("player__username", "hand__table__name")
    raw_id_fields = ("hand", "player")


class RakeReportTableInline(_ReadOnlyInline):
    model = RakeReportTable
    fields = ("stake_level", "table", "hands", "raked_hands", "rake", "average_rake")
    readonly_fields = fields


class RakeReportPlayerInline(_ReadOnlyInline):
    model = RakeReportPlayer
    fields = ("player", "raked_hands", "rake")
    readonly_fields = fields


@admin.register(RakeReport)
class RakeReportAdmin(ReadOnlyAdmin):
    list_display = ("date", "hands", "raked_hands", "rake", "average_rake", "built_at")
    date_hierarchy = "date"
    inlines = [RakeReportTableInline, RakeReportPlayerInline]
