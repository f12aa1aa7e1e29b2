"""Project-level views: the health check, and the pages that show several apps at once.

The profile page shows the player's preferences (accounts), wallet (cashier) and recent
hands (tables): it lives here, above the apps, so that no app imports a higher one.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from accounts.forms import PreferencesForm
from accounts.services import user_preferences_update
from cashier.selectors import wallet_balance, wallet_entry_list, withdrawal_pending_total
from poker_room.health import health_report_recent
from tables.history_selectors import recent_hands_for

RECENT_MOVEMENTS = 10


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks = health_report_recent()
    healthy = all(check["ok"] for check in checks.values())
    failing = [name for name, check in checks.items() if not check["ok"]]
    body = {"status": "ok" if healthy else "unavailable", "failing": failing, "checks": checks}
    return JsonResponse(body, status=200 if healthy else 503)


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
