"""The CPU a table socket's frame costs in its viewer's budget (tables/viewer_limits.py),
before and after the budget was shared by the room's processes in Redis (issue #46).

Before, each web process kept each viewer's token bucket in its memory: a frame cost a
dict lookup and a bucket's refill (`before`, the code as it was, kept here). Now the
bucket is in Redis and a process leases its tokens a few at a time (`LEASE_TOKENS`): a
frame spends one leased already, or awaits a round trip for the next few. Measured on
the real Redis (settings.REDIS_URL), this process's CPU per frame, the median of
`--rounds` rounds of `--frames` frames, before and after taking turns, for:

* `within`: a viewer within their budget (the budget raised so that every frame is let
  through: the cost of the leases, a round trip every LEASE_TOKENS frames);
* `flood`: a viewer sending far past it (the room's budget, 40 at once and 20 a second;
  after the first, frames are refused without asking Redis until a token can be there);
* `seats`: what each stream message sent to a socket now costs besides (whether it is a
  `seats` message: tables/consumers.py, `seated_in`), for a typical message.

    python bench/viewer_budget.py [--frames 20000] [--rounds 5]   # the dev settings' Redis
"""

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")

import django

django.setup()

from django.conf import settings  # noqa: E402

from tables.consumers import seated_in  # noqa: E402
from tables.viewer_limits import TokenBucket, ViewerLimits  # noqa: E402

ACTED = (
    '{"v": 41, "hand": 1207, "type": "acted", "seat": 3, "player": "cmdbot003", '
    '"action": "call", "amount": 100, "to": 100, "stack": 9800, "pot_total": 350}'
)


class Before:
    """The per-process budget as it was (tables/viewer_limits.py before issue #46)."""

    def __init__(self) -> None:
        self.viewers: dict[tuple[str, int], TokenBucket] = {}

    def take(self, viewer: tuple[str, int]) -> bool:
        bucket = self.viewers.get(viewer)
        if bucket is None:
            bucket = self.viewers[viewer] = TokenBucket(
                capacity=settings.TABLE_VIEWER_BURST, rate=settings.TABLE_VIEWER_PER_SECOND
            )
        return bucket.take(time.monotonic())


async def before(frames: int) -> float:
    limits, viewer = Before(), ("user", 1)
    start = time.process_time()
    for _ in range(frames):
        limits.take(viewer)
    return (time.process_time() - start) / frames * 1e6


async def after(frames: int) -> float:
    limits = ViewerLimits(namespace=f":bench-{uuid.uuid4().hex[:8]}")
    place = await limits.socket_opens(None, maybe_signed_in=True)
    if place is None or not await place.identify(1):
        raise RuntimeError("the bench's viewer was refused a socket")
    start = time.process_time()
    for _ in range(frames):
        # As the consumer asks (TableConsumer._viewer_token).
        here = place.take_here()
        if here is None:
            await place.take()
    spent = (time.process_time() - start) / frames * 1e6
    await place.release()
    return spent


def seats_check(frames: int) -> float:
    start = time.process_time()
    for _ in range(frames):
        seated_in(ACTED)
    return (time.process_time() - start) / frames * 1e6


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    figures: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for case, burst, rate in (("within", 1e12, 1e12), ("flood", 40.0, 20.0)):
            settings.TABLE_VIEWER_BURST, settings.TABLE_VIEWER_PER_SECOND = burst, rate
            figures.setdefault(f"{case} before", []).append(await before(args.frames))
            figures.setdefault(f"{case} after", []).append(await after(args.frames))
        figures.setdefault("seats check", []).append(seats_check(args.frames))
    print(f"CPU per frame, this process, median of {args.rounds} rounds of {args.frames}:")
    for name, values in figures.items():
        print(f"  {name:14s} {statistics.median(values):7.2f} us")


if __name__ == "__main__":
    asyncio.run(main())
