"""The cyclic garbage collector of the room's long-running processes (the web processes,
`poker_room/asgi.py`; the timer loop, `run_timers`): start-up objects out of its way, and
its thresholds from the settings.

A full collection (CPython's generation 2) walks every container object the process
holds, and the process stands still meanwhile: at 500 tables of six each web process
held about 390,000, and its full collections took 230 to 520 ms, every 15 to 40 s
(measured with a `gc.callbacks` probe; README, "Speed"). Every command and broadcast of
that process waited them out: they were the tail of the latency on other players'
sockets. Two things shorten and space them:

* Some 150,000 of those objects are the start-up's (Django, the apps, the URL conf, the
  compiled templates): they live as long as the process and are never garbage, yet every
  full collection walked them again. `gc.freeze()` moves them to the permanent
  generation, which collections skip. What the process builds later (sockets, hands) is
  collected as before.
* A full collection comes once enough objects have outlived two younger collections
  (CPython runs it when those promoted since the last one reach a quarter of the objects
  it kept). A young collection comes every `GC_THRESHOLDS[0]` container objects
  allocated (net of those freed), and whatever is alive at that moment is promoted: a
  command's or a message's objects in flight, which die a moment later in the old
  generation and count towards the next full collection all the same. Spacing the young
  collections further apart catches fewer of them in flight (settings, `GC_THRESHOLDS`).
"""

import gc


def tune_collector(thresholds: tuple[int, int, int]) -> None:
    """Collect what start-up left as garbage (frozen, it would be kept for good), freeze
    the rest, so that every collection from now on skips it, and set the thresholds."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
