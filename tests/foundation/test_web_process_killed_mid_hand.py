"""Issue 46's chaos item: a web process killed mid-hand, two web processes, one table.

Two web fronts (poker_room/serve.py) on two ports, each with one daphne, and one timer
loop, on the test database. Four bots sit at one table: seats 1 and 3 connected to web
process A, 2 and 4 to B. Once a hand has been played and the next is under way, B's
daphne is killed with SIGKILL; its front starts another on the same socket (as in
`make run`). Then:

* A's players keep playing: their sockets never drop (they see no restart and never
  reconnect), and they act in the hands after the kill;
* the hand under way at the kill completes, and so do the run's hands after it;
* B's players, cut off, reconnect once B's daphne is back, and play on from the snapshot;
* no table is paused, every bot leaves with its chips (each checks its own wallet), the
  ledger audit is clean and the chips are conserved (the room holds what its players
  deposited, the rake included: nothing made, nothing lost).
"""

import asyncio
import os
import signal
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import datetime
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.db.models import Sum
from django.utils import timezone

from cashier.audit import ledger_audit
from cashier.models import AccountKind, LedgerAccount
from tables.bots.player import TableRun
from tables.bots.report import BotReport
from tables.bots.setup import BotTimers, bot_tables_open, bot_users_ensure
from tables.models import Hand, HandStatus, Heartbeat, Seat, Table, TableStatus
from tables.timers import HEARTBEAT
from tests.bots_across_processes import steady_bots
from tests.conftest import ROOT, answers, free_port, processes_stop, room_process, wait_until_up
from tests.processes import children_of

# The suite's own timer loop is stopped: this test's is the room's.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("timers_stopped")]
PLAYERS = 4
HANDS = 8
# Long enough that B's players, back within seconds, are not timed out on a loaded
# machine (a timeout would be no fault, but then the run shows the clock, not the kill).
TIMERS = BotTimers(action_seconds=10, time_bank_seconds=0, pause_between_hands_ms=300)


class Web:
    """A web front of one daphne on a port of its own."""

    def __init__(self, name: str, stack: ExitStack) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = ["poker_room.serve", "-b", "127.0.0.1", "-p", str(self.port), "-n", "1"]
        self.log_name = f".pytest-multi-kill-{name}.log"
        self.front = stack.enter_context(room_process(args, log_name=self.log_name))

    def daphne(self) -> int | None:
        children = children_of(self.front.pid)
        return children[0] if len(children) == 1 else None

    def log(self) -> str:
        return (ROOT / self.log_name).read_text(errors="replace")


@pytest.fixture
def two_webs() -> Iterator[tuple[Web, Web]]:
    with ExitStack() as stack:
        since = timezone.now()
        loop = stack.enter_context(
            room_process(["manage", "run_timers"], log_name=".pytest-multi-kill-timers.log")
        )
        webs = (Web("a", stack), Web("b", stack))
        for web in webs:
            wait_until_up(web.front, lambda web=web: answers(f"{web.url}/healthz"), "a web front")
        wait_until_up(
            loop,
            lambda: Heartbeat.objects.filter(name=HEARTBEAT, at__gte=since).exists(),
            "the timer loop leading",
        )
        yield webs
        processes_stop([loop, *(web.front for web in webs)])


def _hands(table_id: int) -> tuple[int, int | None]:
    """Hands finished at the table, and the one in progress."""
    finished = Hand.objects.filter(table_id=table_id, status=HandStatus.FINISHED).count()
    live = Hand.objects.filter(table_id=table_id, status=HandStatus.IN_PROGRESS).first()
    return finished, (live.pk if live else None)


def _outcome(table_id: int, hand_at_kill: int, killed: datetime) -> dict[str, Any]:
    table = Table.objects.get(pk=table_id)
    hand = Hand.objects.get(pk=hand_at_kill)
    return {
        "status": table.status,
        "paused_reason": table.paused_reason,
        "failures": table.failure_count,
        "hand_at_kill": hand.status,
        "hand_at_kill_ended_after_the_kill": hand.ended_at is not None and hand.ended_at > killed,
        "finished_after_kill": Hand.objects.filter(
            table=table, status=HandStatus.FINISHED, pk__gt=hand_at_kill
        ).count(),
        "in_progress": Hand.objects.filter(table=table, status=HandStatus.IN_PROGRESS).count(),
        "seated": Seat.objects.filter(table=table).count(),
    }


def _chips() -> dict[str, int]:
    """What the room holds, by kind of account, and what came in from outside."""
    held = dict(LedgerAccount.objects.values_list("kind").annotate(total=Sum("balance")).order_by())
    return {kind: held.get(kind, 0) for kind in AccountKind.values}


async def test_a_web_process_killed_mid_hand(two_webs):
    web_a, web_b = two_webs
    names = await database_sync_to_async(bot_users_ensure)(count=PLAYERS, prefix="kill")
    (plan,) = await database_sync_to_async(bot_tables_open)(count=1, players=PLAYERS, timers=TIMERS)
    run = TableRun(plan=plan, target_hands=HANDS, assigned=set(range(1, PLAYERS + 1)))
    reports = {"a": BotReport(bots=PLAYERS // 2), "b": BotReport(bots=PLAYERS // 2)}
    acts_after_kill = {"a": 0, "b": 0}
    killed_at: list[datetime] = []

    def trace(bot: str, direction: str, frame: dict[str, Any]) -> None:
        if direction == "send" and frame.get("cmd") == "act" and killed_at:
            acts_after_kill["a" if names.index(bot) % 2 == 0 else "b"] += 1

    processes = [(web.url, reports[web.name]) for web in (web_a, web_b)]
    # Seats 1 and 3 on A, 2 and 4 on B.
    bots = steady_bots(names, run=run, processes=processes, trace=trace)

    async def kill_mid_hand() -> tuple[int, int]:
        """Once a hand is finished and the next under way: kill B's daphne."""
        while True:
            finished, live = await database_sync_to_async(_hands)(plan.id)
            if finished >= 1 and live is not None:
                break
            await asyncio.sleep(0.05)
        victim = web_b.daphne()
        assert victim is not None
        os.kill(victim, signal.SIGKILL)
        killed_at.append(timezone.now())
        return victim, live

    async with asyncio.timeout(240):
        playing = asyncio.gather(*(bot.run() for bot in bots))
        victim, hand_at_kill = await kill_mid_hand()
        await playing
    successor = web_b.daphne()
    outcome = await database_sync_to_async(_outcome)(plan.id, hand_at_kill, killed_at[0])
    audit = await database_sync_to_async(ledger_audit)()
    chips = await database_sync_to_async(_chips)()
    for name, report in reports.items():
        print(f"web process {name}: {report.render()}")  # shown with -s
    print(f"acts after the kill {acts_after_kill}; {outcome}")

    # A's players never lost their sockets, and played on.
    assert reports["a"].ok, reports["a"].render()
    assert (reports["a"].restarts_seen, reports["a"].reconnects) == (0, 0), reports["a"].render()
    assert acts_after_kill["a"] > 0
    # B's players were cut off, came back to B's new daphne and played on.
    assert reports["b"].ok, reports["b"].render()
    assert reports["b"].restarts_seen == PLAYERS // 2, reports["b"].render()
    assert acts_after_kill["b"] > 0
    assert successor not in (None, victim) and web_b.front.poll() is None
    assert f"daphne {victim} killed by SIGKILL" in web_b.log()
    # The hands went on to the end; no table paused; every chip accounted for.
    assert outcome["hand_at_kill"] == HandStatus.FINISHED
    assert outcome["hand_at_kill_ended_after_the_kill"]
    assert outcome["finished_after_kill"] >= 1
    assert outcome["status"] == TableStatus.OPEN and outcome["in_progress"] == 0
    assert (outcome["paused_reason"], outcome["failures"]) == ("", 0)
    assert outcome["seated"] == 0
    assert audit.ok, audit.summary()
    # Everything deposited (the clearing account's debit) is in the wallets or the rake.
    assert chips[AccountKind.TABLE] == 0 and chips[AccountKind.HOLD] == 0, chips
    held = chips[AccountKind.WALLET] + chips[AccountKind.HOUSE]
    assert held == -chips[AccountKind.CLEARING] > 0, chips
