"""A WebSocket consumer's loop over one queue: the socket's frames and the messages the
process hands it, dispatched one at a time, never beside a handler.

Channels' own loop (`channels.utils.await_many_dispatch`) waits on a task per source
with `asyncio.wait` and makes a new task for every message: every message of a table to
every socket went through it, 0.6-1 ms a decision in `bench/floor.py` (issue #15). Here
the process puts its messages straight into the consumer's queue (the table feed,
tables/feed.py), and one task moves the socket's frames there:

* at most `frames_at_once` at a time: a burst (daphne hands over every frame of a read at
  once, hundreds) is handled a few frames at a time, the process's other tasks running
  in between, and cannot crowd the other messages out of a bounded queue;
* none after `websocket.disconnect`, the last (a server may answer any later read at once);
* a `receive` that fails ends the loop with its error, as Channels' loop did.

Nothing is read from the channel layer: the caller reads it no more (its channel may
still count the consumer in a group).
"""

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

Message = dict[str, Any]

# What the frames task puts in the queue when the server's `receive` fails.
_RECEIVE_FAILED = "socket_loop.receive_failed"


async def dispatch_from_queue(
    *,
    receive: Callable[[], Awaitable[Message]],
    queue: "asyncio.Queue[Message]",
    dispatch: Callable[[Message], Awaitable[None]],
    frames_at_once: int,
) -> None:
    """Dispatch the socket's frames (from `receive`) and whatever else arrives in `queue`,
    in the order they reach the queue, one at a time, until a handler raises (Channels'
    `StopConsumer` included, which the caller catches)."""
    room = asyncio.Semaphore(frames_at_once)  # frames in the queue at most

    async def frames_to_queue() -> None:
        try:
            while True:
                await room.acquire()
                message = await receive()
                await queue.put(message)
                if message["type"] == "websocket.disconnect":
                    return
        except Exception as exc:
            await queue.put({"type": _RECEIVE_FAILED, "error": exc})

    frames = asyncio.get_running_loop().create_task(frames_to_queue())
    try:
        while True:
            message = await queue.get()
            kind = message["type"]
            if kind == _RECEIVE_FAILED:
                raise message["error"]
            if kind.startswith("websocket."):
                room.release()
            await dispatch(message)
    finally:
        frames.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await frames
