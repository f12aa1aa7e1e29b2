"""A cancelled channel-layer receive ends: the hang that stopped CI (poker_room.channel_layer).

On Python 3.11 a cancel that lands while redis-py reads a reply under `asyncio.timeout`
can come out as redis's `TimeoutError`; redis-py's retry, or the layer's own wait for
Redis, swallowed it, and channels-redis's receive loop of blocking pops then ran for ever.
The consumer's receive task never finished, and the event loop closing after a test (in
production: daphne's, on every disconnect) waited for it for ever. The race is a few
milliseconds wide, so the test searches it: it cancels receives at every delay across the
window, and every one must end within one blocking pop.
"""

import asyncio
import uuid

import pytest

from poker_room.channel_layer import RefreshingRedisChannelLayer

# Seconds one blocking pop waits (channels-redis's default is 5): a swallowed cancel is
# noticed when the pop returns. A quarter of a second (Redis takes fractions) finds the
# hang as often as a whole one did, with the fix reverted, and a cancel that lands in a
# pop costs that much each time.
POP_SECONDS = 0.25
# Cancel after 0, 0.25, ... 6 ms: the window covers connecting, the clean-up script and
# the start of the pop, where the conversion was seen.
DELAYS = [i / 4000 for i in range(25)]


async def test_a_receive_cancelled_at_any_moment_ends_within_one_pop(settings):
    hosts = settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"]
    prefix = (
        f"{settings.CHANNEL_LAYERS['default']['CONFIG']['prefix']}-cancel-{uuid.uuid4().hex[:6]}"
    )
    hung = []
    for round_ in range(2):
        for delay in DELAYS:
            layer = RefreshingRedisChannelLayer(hosts=hosts, prefix=prefix)
            layer.brpop_timeout = POP_SECONDS
            channel = await layer.new_channel()
            receive = asyncio.create_task(layer.receive(channel))
            await asyncio.sleep(delay)
            receive.cancel()
            done, _ = await asyncio.wait([receive], timeout=POP_SECONDS + 2)
            if not done:
                hung.append((round_, delay))
                while not receive.done():  # free the loop for the rest of the suite
                    receive.cancel()
                    await asyncio.wait([receive], timeout=0.1)
            else:
                assert receive.cancelled(), f"cancelled at {delay * 1000:.2f} ms: {receive!r}"
            await layer.close_pools()
    assert not hung, f"receives still running after their cancel (round, delay s): {hung}"


async def test_a_receive_waiting_out_a_redis_outage_stops_when_cancelled():
    # Nothing listens on port 9: the layer waits for Redis with backoff until cancelled.
    layer = RefreshingRedisChannelLayer(hosts=["redis://127.0.0.1:9/0"])
    receive = asyncio.create_task(layer.receive(await layer.new_channel()))
    await asyncio.sleep(1.0)
    assert not receive.done()
    receive.cancel()
    done, _ = await asyncio.wait([receive], timeout=3)
    assert done and receive.cancelled()
    await layer.close_pools()


pytestmark = pytest.mark.timeout(120)
