"""Steady bots at one table whose players connect to several web processes in turn
(tests/foundation/test_multi_process.py, test_web_process_killed_mid_hand.py)."""

from collections.abc import Sequence

from tables.bots.player import Bot, BotSpec, Role, TableRun, Trace
from tables.bots.report import BotReport
from tables.bots.setup import BOT_PASSWORD
from tables.bots.strategy import PROFILES


def steady_bots(
    names: Sequence[str],
    *,
    run: TableRun,
    processes: Sequence[tuple[str, BotReport]],
    trace: Trace,
) -> list[Bot]:
    """A steady bot per name, in seats 1, 2, ... in order, each connected to the next of
    `processes` (base URL, the report its bots share) in turn: with two, seats 1 and 3 on
    the first, 2 and 4 on the second."""
    bots = []
    for position, name in enumerate(names):
        url, report = processes[position % len(processes)]
        spec = BotSpec(
            username=name,
            password=BOT_PASSWORD,
            seat=position + 1,
            role=Role.STEADY,
            profile=PROFILES[position % len(PROFILES)],
            seed=position,
        )
        bots.append(
            Bot(
                spec=spec,
                run=run,
                report=report,
                http_base=url,
                ws_base=url.replace("http", "ws", 1),
                trace=trace,
            )
        )
    return bots
