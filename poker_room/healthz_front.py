"""/healthz answered on the event loop, ahead of the HTTP concurrency limit and Django.

A flood of /healthz must not slow players. Through Django each request took a place in
the queue of poker_room.http_limit (behind which players' requests wait their turn), a
thread and the whole middleware stack, even to be refused 429: a burst of 300 from one
address made a player's wallet read take 1.9 s instead of 25 ms. Here a request is
counted and answered by the event loop itself: the throttle's look-up, or the probes'
kept answers (poker_room/health.py; a probe under way is polled, no thread waits on
it). Nothing else of Django runs, so neither ALLOWED_HOSTS nor the HTTPS redirect stands
between a load balancer's plain-HTTP probe and its answer.

Other methods go on to Django's view (405), which gives the same answers to the test
client and a WSGI server (poker_room/views.py).
"""

import json
from typing import Any

from poker_room.health import (
    HealthzAnswer,
    healthz_refusal,
    healthz_verdict,
    process_readiness_async,
)

HEALTHZ_PATH = "/healthz"


class HealthzFront:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] != HEALTHZ_PATH
            or scope["method"] not in {"GET", "HEAD"}
        ):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        answer = healthz_refusal(str(client[0]) if client else "unknown")
        if answer is None:
            answer = healthz_verdict(await process_readiness_async())
        await _send(send, answer, body=scope["method"] == "GET")


async def _send(send: Any, answer: HealthzAnswer, *, body: bool) -> None:
    content = json.dumps(answer.body).encode()
    headers = {
        "Content-Type": "application/json",
        "Content-Length": str(len(content)),
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
        **answer.headers,
    }
    await send(
        {
            "type": "http.response.start",
            "status": answer.status,
            "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        }
    )
    await send({"type": "http.response.body", "body": content if body else b""})
