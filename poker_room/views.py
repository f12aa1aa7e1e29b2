"""Project-level views: the health check."""

from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from poker_room.health import health_report_recent


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks = health_report_recent()
    healthy = all(check["ok"] for check in checks.values())
    failing = [name for name, check in checks.items() if not check["ok"]]
    body = {"status": "ok" if healthy else "unavailable", "failing": failing, "checks": checks}
    return JsonResponse(body, status=200 if healthy else 503)
