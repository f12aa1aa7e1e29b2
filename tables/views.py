"""Pages of the tables app: the lobby (the home page), its JSON feed, a table, hand history.

Thin views: the lobby rows come from `tables.lobby`, everything live at a table arrives
over the WebSocket (`tables/consumers.py`); the table page only hands the browser what
it needs to connect (table id, the viewer's name and card-colour preference).
"""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from accounts.selectors import user_can_play
from cashier.selectors import wallet_balance
from tables.lobby import buy_in_label, lobby_tables, stakes_label
from tables.models import Table

LOBBY_POLL_SECONDS = 5


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """The lobby: every table a player can join, refreshed by `static/js/lobby.js`."""
    context = {"tables": lobby_tables(), "poll_seconds": LOBBY_POLL_SECONDS}
    return render(request, "tables/lobby.html", context)


@never_cache
@require_GET
def lobby_json(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"tables": lobby_tables()})


@require_GET
def table_page(request: HttpRequest, table_id: int) -> HttpResponse:
    """A table: players play, anyone may watch. The page fills itself from the socket."""
    table = get_object_or_404(Table.objects.select_related("stake_level"), pk=table_id)
    user = request.user
    stake = table.stake_level
    config = {
        "tableId": table.id,
        "wsPath": f"/ws/tables/{table.id}/",
        "username": user.username if user.is_authenticated else None,
        "userId": user.id if user.is_authenticated else None,
        "canPlay": user_can_play(user=user),
        "loginUrl": f"{reverse('login')}?{urlencode({'next': request.path})}",
        "cashierUrl": reverse("cashier"),
        "fourColor": bool(getattr(user, "four_color_deck", False)),
        "balance": wallet_balance(user=user) if user.is_authenticated else None,
    }
    context = {
        "table": table,
        "stake": stake,
        "stakes_label": stakes_label(stake),
        "buy_in_label": buy_in_label(stake),
        "config": config,
    }
    return render(request, "tables/table.html", context)


@login_required
@require_GET
def hands_page(request: HttpRequest) -> HttpResponse:
    """The player's recent hands, replayed street by street from the hand-history API."""
    return render(request, "tables/hands.html")
