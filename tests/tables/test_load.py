"""The load test's parts: the /proc CPU reader, and a human-pace run against a live room.

The live run uses the suite's `live_room` (daphne and a Celery worker on the test
database): bots set up without the log-in form, thinking before they act, letting turns
time out, leaving and coming back, sharded over two processes; the report must hold
sane figures of every kind, and the chips must all be back in the wallets.
"""

import json
import os
import subprocess
import sys
import time
from collections import Counter
from urllib.parse import urlsplit

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import connection

from cashier.models import AccountKind, LedgerAccount
from tables.bots.cpu import CpuSampler, group_of, process_cpu, room_processes, room_root
from tables.bots.player import Pace
from tables.bots.report import BotReport
from tables.bots.runner import run_bots
from tables.bots.setup import BotTimers
from tests.tables.test_play_bots import _played

BURN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass"


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_the_cpu_reader_sees_this_process_use_cpu():
    before = process_cpu(os.getpid())
    _burn(0.3)
    after = process_cpu(os.getpid())
    assert before is not None and after is not None
    assert after.parent == os.getppid()
    assert "python" in after.command or "pytest" in after.command
    # Clock ticks (1/100 s here): the reading is as fine as the kernel keeps it.
    assert 0.25 <= after.own - before.own <= 0.5
    assert after.children >= before.children >= 0
    assert process_cpu(2**22 + 1) is None  # above the kernel's pid_max: no such process


def test_a_process_that_ends_inside_the_window_counts_up_to_its_last_reading():
    child = subprocess.Popen([sys.executable, "-c", BURN.format(seconds=1.6)])
    sampler = CpuSampler(root_pids=set(), database="", generator_pids={child.pid})
    sampler.window(time.monotonic(), time.monotonic() + 60)
    child.wait()
    time.sleep(0.5)  # reaped: gone from /proc
    sampler.finish()
    used = sampler.seconds()
    # Read at least once a second while it ran: at most the last second is missed.
    assert 0.6 <= used["generator"] <= 1.8
    assert sampler.processes()["generator"] == 1
    assert sampler.stopped - sampler.started < 30  # `finish()` closed it early


@pytest.mark.parametrize(
    ("command", "group"),
    [
        ("/v/bin/python /v/bin/daphne -b 127.0.0.1 -p 8000 poker_room.asgi:application", "web"),
        ("/v/bin/python -m poker_room.serve -p 8711 -n 2", "web"),
        ("/v/bin/python /v/bin/granian --interface asgi --workers 2 poker_room.asgi:app", "web"),
        ("/v/bin/python /v/bin/celery -A poker_room worker --concurrency=2", "worker"),
        ("/v/bin/python /v/bin/celery -A poker_room beat --schedule .run/s", "beat"),
        ("/v/bin/python manage.py run_timers", "timer"),
        ("/v/bin/python /v/bin/honcho start -f Procfile -p 8000", "other"),
    ],
)
def test_room_processes_are_grouped_by_their_command(command, group):
    assert group_of(command) == group


@pytest.mark.django_db
def test_the_room_processes_are_this_tree_its_database_backends_and_redis():
    connection.ensure_connection()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        found = room_processes(
            root_pids={os.getpid()}, database=settings.DATABASES["default"]["NAME"]
        )
    finally:
        child.kill()
        child.wait()
    assert found[child.pid][0] == "other"
    assert found[os.getpid()][0] == "other"
    backend = connection.connection.info.backend_pid
    assert found[backend][0] == "postgres"
    assert {group for group, _ in found.values()} >= {"other", "postgres", "redis"}


@pytest.mark.django_db(transaction=True)
async def test_a_human_pace_run_reports_every_figure_and_the_chips_go_home(live_room):
    root = room_root(urlsplit(live_room).port or 80)
    assert root is not None
    report = await run_bots(
        live_room,
        2,
        3,
        None,
        prefix="humanbot",
        seed=5,
        misbehave=False,
        timers=BotTimers(action_seconds=1, time_bank_seconds=1),
        pace=Pace(think=(0.05, 0.2), timeout_share=0.25, leave_share=0.25, away=(0.5, 1.5)),
        duration=12,
        warmup=2,
        quick=True,
        room_pids=frozenset({root}),
        database=settings.DATABASES["default"]["NAME"],
        procs=2,
        timeout_seconds=90,
    )
    print(report.render(), report.render_load(), sep="\n")  # shown with -s

    assert report.ok, report.render()
    assert report.procs == 2 and report.bots == 6
    assert 11 <= report.window_seconds <= 13.5
    assert report.decisions >= 10
    for samples in (report.latencies, report.broadcasts, report.timeout_lateness):
        assert samples and all(-0.05 <= s < 5 for s in samples), samples
    # Several sockets see each action: more broadcasts than acks.
    assert len(report.broadcasts) > len(report.latencies)
    assert report.deliberate_timeouts >= 1 and report.breaks >= 1
    assert report.cpu["web"] > 0 and report.cpu["postgres"] > 0
    assert report.generator_cpu > 0
    figures = json.loads(json.dumps(report.figures()))
    assert figures["decisions_per_second"] > 0
    assert figures["cpu_ms_per_decision"]["room_total"] > 0

    # Set up without the form or the cashier API: a session each, wallets funded in bulk.
    assert report.deposits == 0
    sessions = await database_sync_to_async(Session.objects.count)()
    assert sessions >= 6
    played = await database_sync_to_async(_played)([table.id for table in report.tables])
    assert played["seated"] == 0
    assert played["table_chips"] == 0
    wallets = await database_sync_to_async(
        lambda: LedgerAccount.objects.filter(
            kind=AccountKind.WALLET, user__username__startswith="humanbot", balance__gt=0
        ).count()
    )()
    assert wallets == 6


def test_shard_reports_add_up_and_the_figures_are_per_decision():
    first = BotReport(bots=6, decisions=10, latencies=[0.01], errors_unexpected=Counter(stale=1))
    second = BotReport(bots=6, decisions=30, latencies=[0.03], errors_unexpected=Counter(stale=2))
    first.seconds, second.seconds = 5.0, 7.0
    first.merge(second)
    assert (first.bots, first.decisions, first.seconds) == (12, 40, 7.0)
    assert first.latencies == [0.01, 0.03]
    assert first.errors_unexpected == Counter(stale=3)

    first.cpu = {"web": 0.2, "worker": 0.1, "postgres_exited": 5.0}
    first.generator_cpu = 0.04
    first.window_seconds = 4.0
    per = first.cpu_ms_per_decision()
    assert per["web"] == pytest.approx(5.0)
    # Every database's exited backends are shown, not added to the room's total.
    assert per["room_total"] == pytest.approx(7.5)
    assert per["generator"] == pytest.approx(1.0)
    figures = first.figures()
    assert figures["decisions_per_second"] == 10.0
    assert figures["act_to_ack_ms"]["p99"] == pytest.approx(30.0)
    assert "room total" in first.render_load()
