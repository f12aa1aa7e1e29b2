"""At most N HTTP requests inside Django at once per process; the rest wait their turn.

Under daphne Django runs each HTTP request's sync code in a thread of its own (asgiref's
ThreadSensitiveContext): neither ASGI_THREADS nor anything else bounds how many run at
once, and each holds a database connection. 150 parallel requests were 150 threads and
150 PostgreSQL connections. This ASGI wrapper lets `limit` requests in (settings
HTTP_CONCURRENCY, one less than the connection pool's DB_POOL_MAX by default: the
WebSocket consumers' database work runs in one more thread), so that a running request
never waits for a connection. The others wait in the event loop, which costs nothing but
memory; one that waited `queue_timeout` seconds gets a JSON 503 with Retry-After instead
of hanging.
"""

import asyncio
import json
import logging
from typing import Any

logger = logging.getLogger(__name__)

BUSY_BODY = json.dumps(
    {"detail": "The room is busy; try again in a few seconds.", "code": "busy"}
).encode()


class HttpConcurrencyLimit:
    def __init__(self, app: Any, *, limit: int, queue_timeout: float) -> None:
        if limit < 1:
            raise ValueError("the HTTP concurrency limit must be at least 1")
        self.app = app
        self.limit = limit
        self.queue_timeout = queue_timeout
        self._semaphore: asyncio.Semaphore | None = None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.limit)
        try:
            await asyncio.wait_for(self._semaphore.acquire(), timeout=self.queue_timeout)
        except TimeoutError:
            logger.warning(
                "HTTP %s %s refused: %d requests running, waited %.0f s",
                scope.get("method"),
                scope.get("path"),
                self.limit,
                self.queue_timeout,
            )
            await send_busy(send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._semaphore.release()


async def send_busy(send: Any) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"application/json"),
                (b"retry-after", b"5"),
                (b"content-length", str(len(BUSY_BODY)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": BUSY_BODY})
