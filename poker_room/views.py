"""Project-level views: the health check, the room's status in the admin, and the pages
that show several apps at once.

The profile page shows the player's preferences (accounts), wallet (cashier) and recent
hands (tables): it lives here, above the apps, so that no app imports a higher one.
"""

from django.contrib import admin, messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_safe

from accounts.forms import PreferencesForm
from accounts.services import user_preferences_update
from cashier.selectors import wallet_balance, wallet_entry_list, withdrawal_pending_total
from poker_room.health import healthz_refusal, healthz_verdict, process_readiness
from poker_room.room_status import room_status_recent
from tables.history_selectors import recent_hands_for

RECENT_MOVEMENTS = 10


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Whether this process can serve (poker_room/health.py): 200, or 503 naming the
    service it cannot reach; 429 past the per-address limit. Under daphne a GET is
    answered before Django (poker_room/healthz_front.py); this view gives the same answers
    to the test client and to a WSGI server."""
    answer = healthz_refusal(request.META.get("REMOTE_ADDR") or "unknown")
    if answer is None:
        answer = healthz_verdict(process_readiness())
    return JsonResponse(answer.body, status=answer.status, headers=answer.headers)


@require_GET
def admin_room_status(request: HttpRequest) -> HttpResponse:
    """The room's alarms (poker_room/room_status.py) as an admin page; staff only (routed
    through admin.site.admin_view). Auditors read the same at /api/status/."""
    context = {
        **admin.site.each_context(request),
        "title": "Room status",
        "report": room_status_recent(),
    }
    return render(request, "admin/room_status.html", context)


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
