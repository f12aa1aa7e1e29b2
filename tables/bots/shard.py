"""One shard of a sharded load test: some of the run's tables, played in a process of its own.

A new process (multiprocessing's spawn: a fresh interpreter, no event loop or database
connection inherited) imports this module before Django is set up, so it imports no
model: `shard_main` sets Django up, then unpickles its tables, plays them
(tables.bots.runner.bots_play) and puts its report on the queue for the parent to merge.
The bots need no database; Django is set up only because the command classes they send
import the models.
"""

import asyncio
import pickle
from multiprocessing.queues import Queue
from typing import Any


def shard_main(payload: bytes, results: "Queue[Any]") -> None:
    """Play the pickled `(setups, url, options, clock)`; put the `BotReport` on `results`."""
    import django

    django.setup()
    from tables.bots.runner import bots_play

    setups, url, options, clock = pickle.loads(payload)  # noqa: S301 - from our parent
    report = asyncio.run(bots_play(setups, url=url, options=options, clock=clock))
    results.put(report)
