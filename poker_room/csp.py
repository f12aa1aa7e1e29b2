"""Content-Security-Policy: django-csp's middleware, plus the page's own WebSocket URL.

The policy is `CONTENT_SECURITY_POLICY` in settings/base.py. A table page opens
`ws(s)://<its own host>/ws/tables/<id>/`; CSP Level 3 lets `'self'` match that, but older
browsers (Safari before 15.4) do not, and a bare `ws:`/`wss:` would allow any host. So
`connect-src` names the request's own host (with its port), as Django validated it
against ALLOWED_HOSTS.

DRF's browsable API pages (HTML answers of the API, for a person with a session) lay out
a few elements with `style="..."` attributes in DRF's own templates, and add a <style>
block of Pygments' CSS when Pygments is installed. Those pages alone get
`style-src-attr 'unsafe-inline'` (style attributes only) and that one block's SHA-256
hash: never an inline script, another <style> block or another page. Django admin and
the Swagger UI page need no exception.
"""

import base64
import functools
import hashlib

from csp.constants import SELF
from csp.middleware import CSPMiddleware, PolicyParts
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponseBase
from django.utils.html import escape
from rest_framework.compat import pygments_css
from rest_framework.renderers import BrowsableAPIRenderer


@functools.cache
def browsable_api_sources() -> dict[str, list[str]]:
    """What DRF's browsable API pages add to the policy (see above)."""
    sources = {"style-src-attr": ["'unsafe-inline'"]}
    css = pygments_css(BrowsableAPIRenderer.code_style)
    if css:
        # The template writes `<style>{{ code_style }}</style>`: autoescaped, so hash that.
        digest = hashlib.sha256(escape(css).encode()).digest()
        sources["style-src-elem"] = [SELF, f"'sha256-{base64.b64encode(digest).decode()}'"]
    return sources


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
        # A view's own @csp_update (if any) is kept; this adds to it.
        update = dict(parts.update or {})
        sources = websocket_sources(request=request)
        if sources:
            own = update.get("connect-src") or []
            update["connect-src"] = [*([own] if isinstance(own, str) else own), *sources]
        if isinstance(getattr(response, "accepted_renderer", None), BrowsableAPIRenderer):
            update.update(browsable_api_sources())
        parts.update = update or None
        return parts
