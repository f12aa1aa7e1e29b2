"""Content-Security-Policy: django-csp's middleware, plus the page's own WebSocket URL.

The policy is `CONTENT_SECURITY_POLICY` in settings/base.py. A table page opens
`ws(s)://<its own host>/ws/tables/<id>/`; CSP Level 3 lets `'self'` match that, but older
browsers (Safari before 15.4) do not, and a bare `ws:`/`wss:` would allow any host. So
`connect-src` names the request's own host (with its port), as Django validated it
against ALLOWED_HOSTS.
"""

from csp.middleware import CSPMiddleware, PolicyParts
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponseBase


def websocket_sources(*, request: HttpRequest) -> list[str]:
    """`ws://host[:port]` and `wss://host[:port]` of this request, or none for a bad Host."""
    try:
        host = request.get_host()
    except DisallowedHost:  # the 400 answer needs no WebSocket
        return []
    return [f"ws://{host}", f"wss://{host}"]


class RoomCSPMiddleware(CSPMiddleware):
    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        sources = websocket_sources(request=request)
        if sources:
            # A view's own @csp_update (if any) is kept; this adds to its connect-src.
            update = dict(parts.update or {})
            own = update.get("connect-src") or []
            update["connect-src"] = [*([own] if isinstance(own, str) else own), *sources]
            parts.update = update
        return parts
