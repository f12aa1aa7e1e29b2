"""Every API error is JSON `{"detail", "code"}`; a database that cannot serve is a 503.

`api_exception_handler` is DRF's EXCEPTION_HANDLER: DRF's own answers get a `code`, and an
exception DRF does not know becomes a JSON 500 (logged with its traceback) instead of
Django's HTML page, in development too. `ApiErrorMiddleware` does the same for what is
raised outside DRF's handler (views that bring their own handler, such as the cashier's,
re-raise what they do not know) under /api/, and turns a connection-pool timeout or an
unreachable database on any page into a 503 with Retry-After instead of a 500 or a hang.
"""

import logging
from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from psycopg_pool import PoolTimeout, TooManyRequests
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"
RETRY_AFTER = "5"
BUSY = {"detail": "The room is busy; try again in a few seconds.", "code": "busy"}
DATABASE_DOWN = {
    "detail": "The room's database cannot serve this now; try again in a few seconds.",
    "code": "database_unavailable",
}
NOT_FOUND = {"detail": "There is no such API endpoint.", "code": "not_found"}
SERVER_ERROR = {"detail": "Something went wrong on our side.", "code": "server_error"}


def unavailable_body(exc: BaseException) -> dict[str, str] | None:
    """The 503 body for an exception meaning the database cannot serve now, else None."""
    if isinstance(exc, PoolTimeout | TooManyRequests) or isinstance(
        exc.__cause__, PoolTimeout | TooManyRequests
    ):
        return BUSY
    # A lost or refused connection, a restarting server, a cancelled statement or a
    # deadlock: all worth a retry, none is the request's fault.
    if isinstance(exc, OperationalError | InterfaceError):
        return DATABASE_DOWN
    return None


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = exception_handler(exc, context)
    if response is not None:
        if isinstance(exc, exceptions.APIException) and isinstance(response.data, dict):
            detail = exc.detail
            if not isinstance(detail, dict | list) and "code" not in response.data:
                response.data["code"] = getattr(detail, "code", "error")
        return response
    set_rollback()
    body = unavailable_body(exc)
    if body is not None:
        logger.warning("API request refused, database unavailable: %r", exc)
        return Response(body, status=503, headers={"Retry-After": RETRY_AFTER})
    view = context.get("view")
    logger.exception("unexpected error in API view %s", type(view).__name__ if view else "?")
    return Response(SERVER_ERROR, status=500)


class ApiErrorMiddleware:
    """JSON for what escapes a view under /api/; 503 for an unavailable database anywhere."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        # An unknown URL under /api/ never reaches DRF: Django answers it with its HTML
        # 404 page (the debug one in development). API clients get JSON.
        if (
            response.status_code == 404
            and request.path.startswith(API_PREFIX)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            return JsonResponse(NOT_FOUND, status=404)
        return response

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        body = unavailable_body(exc)
        if body is not None:
            logger.warning("request to %s refused, database unavailable: %r", request.path, exc)
            response = JsonResponse(body, status=503)
            response["Retry-After"] = RETRY_AFTER
            return response
        if request.path.startswith(API_PREFIX):
            logger.error("unexpected error at %s", request.path, exc_info=exc)
            return JsonResponse(SERVER_ERROR, status=500)
        return None  # Django's own 500 page (the debug page in development)
