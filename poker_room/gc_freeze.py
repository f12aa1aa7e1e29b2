"""Start-up objects out of the cyclic garbage collector's way, in the room's long-running
processes (the web processes, `poker_room/asgi.py`; the timer loop, `run_timers`).

A full collection (CPython's generation 2) walks every container object the process
holds, and the process stands still meanwhile: at 500 tables of six each web process
held about 390,000, and its full collections took 230 to 520 ms, every 15 to 40 s
(measured with a `gc.callbacks` probe; README, "Speed"). Every command and broadcast of
that process waited them out: they were the tail of the latency on other players'
sockets. Some 150,000 of those objects are the start-up's (Django, the apps, the URL
conf, the compiled templates): they live as long as the process and are never garbage,
yet every full collection walked them again. `gc.freeze()` moves them to the permanent
generation, which collections skip. What the process builds later (sockets, hands) is
collected as before.
"""

import gc


def freeze_startup_objects() -> None:
    """Collect what start-up left as garbage (frozen, it would be kept for good), then
    freeze the rest: every collection from now on skips it."""
    gc.collect()
    gc.freeze()
