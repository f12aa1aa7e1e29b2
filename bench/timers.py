"""Turn-timeout lateness and the CPU of what runs the timers (issue #15: "turn timeouts
firing p99 < 1 s after their deadline", on two cores).

N tables (`action_seconds` 1, no time bank, one second between hands) with two players
each who never act, on a throwaway database; beside it runs the process that times the
turns out and deals the hands:

* `--runner timers`: `manage.py run_timers` (tables/timers.py, the deadlines in the
  database);
* `--runner celery`: a Celery worker as the Procfile runs it (prefork, two children), for
  a checkout from before the timer loop, whose services sent one ETA task per turn and
  per deal (run this script from such a checkout: copy it there).

`--with-worker` (timers runner) runs such a Celery worker beside the loop, as the room
does for its room-wide jobs, and reports its CPU too: no table sends it anything now.

For each turn timed out while the load runs, the lateness is the `timed_out` event's
time (`created_at`, written in the timeout's transaction just before it commits) minus
the turn's deadline, which this script samples from the hands in progress every 20 ms
(a turn lives a second). It prints lateness p50 / p99 / max, and the runner's CPU (its
process and children, from /proc) in CPU-seconds per second: idle (the tables, nobody
seated) and loaded, and per timeout (the deals between them included).

A trigger in the throwaway database keeps the players playing: RULES §5 sits out a
player who timed out twice in a row, which would stop the load after two hands.

    python bench/timers.py [--runner timers|celery] [--tables 50] [--seconds 30]
                           [--tables-at-once 4] [--with-worker]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NEVER_SIT_OUT = """
CREATE FUNCTION bench_never_sit_out() RETURNS trigger AS $$
BEGIN
    NEW.consecutive_timeouts := 0;
    NEW.sit_out_after_hand := false;
    IF NEW.status = 'sitting_out' AND NEW.stack > 0 THEN
        NEW.status := 'active';
    END IF;
    RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER bench_never_sit_out BEFORE UPDATE ON tables_seat
    FOR EACH ROW EXECUTE FUNCTION bench_never_sit_out();
"""


def cpu_seconds(root: int) -> float:
    """CPU time (user + system) of a process and its live descendants, from /proc."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        times[pid] = (int(fields[11]) + int(fields[12])) / tick
    tree = {root}
    grew = True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        grew = bool(more)
        tree |= more
    return sum(times.get(pid, 0.0) for pid in tree)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def runner_start(
    runner: str, at_once: int, env: dict[str, str], log: Path
) -> tuple[subprocess.Popen, str]:
    node = f"bench-{uuid.uuid4().hex[:6]}@{os.uname().nodename}"
    if runner == "timers":
        args = [sys.executable, "manage.py", "run_timers", f"--tables-at-once={at_once}"]
    else:
        args = [sys.executable, "-m", "celery", "-A", "poker_room", "worker", "--loglevel=INFO",
                "--concurrency=2", "--without-gossip", "--without-mingle",
                "-Q", env["CELERY_TASK_DEFAULT_QUEUE"], "-n", node]  # fmt: skip
    with open(log, "w") as out:
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    return proc, node


class Runners:
    """The runner under test, and a Celery worker beside the timer loop if asked for."""

    def __init__(self, args: argparse.Namespace, env: dict[str, str]) -> None:
        self.procs: dict[str, tuple[subprocess.Popen, str]] = {}
        names = [args.runner] + (["celery"] if args.with_worker and args.runner == "timers" else [])
        for name in names:
            log = ROOT / f".bench-timers-{name}.log"
            self.procs[name] = runner_start(name, args.tables_at_once, env, log)
        for name, (_proc, node) in self.procs.items():
            wait(lambda n=name, d=node: runner_up(n, d), seconds=60, what=f"the {name} runner")

    def cpu(self) -> dict[str, float]:
        return {name: cpu_seconds(proc.pid) for name, (proc, _node) in self.procs.items()}

    def stop(self) -> None:
        for proc, _node in self.procs.values():
            proc.terminate()
        for proc, _node in self.procs.values():
            proc.wait(timeout=30)


def runner_up(runner: str, node: str) -> bool:
    if runner == "timers":
        from tables.models import Heartbeat

        return Heartbeat.objects.filter(name="timers").exists()
    from poker_room.celery import app

    return bool(app.control.ping(destination=[node], timeout=0.5))


def wait(condition, *, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting for {what}")
        time.sleep(0.1)


def tables_create(count: int) -> list[int]:
    from tables.models import StakeLevel, Table

    stake = StakeLevel.objects.create(
        name="bench NL 1/2", game="holdem", structure="NL", big_blind=200
    )
    return [
        Table.objects.create(
            name=f"bench {n}",
            stake_level=stake,
            seats=6,
            action_seconds=1,
            time_bank_seconds=0,
            pause_between_hands_ms=1000,
        ).pk
        for n in range(count)
    ]


def players_seat(table_ids: list[int]) -> None:
    from accounts.models import User
    from cashier.services import deposit_create
    from tables.services import seating

    for table_id in table_ids:
        for number in (1, 2):
            user = User.objects.create_user(username=f"bench-{table_id}-{number}")
            deposit_create(user=user, amount=100_000, idempotency_key=f"bench:{user.pk}")
            seating.seat_take(
                table_id=table_id,
                user=user,
                seat_number=number,
                buy_in=20_000,
                idempotency_key=f"bench:{user.pk}:sit",
            )


def deadlines_sample(seconds: float) -> dict[int, set[datetime]]:
    """hand id -> every turn deadline seen, sampling the hands in progress every 20 ms."""
    from tables.models import Hand, HandStatus

    seen: dict[int, set[datetime]] = {}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        live = Hand.objects.filter(status=HandStatus.IN_PROGRESS, turn_deadline__isnull=False)
        for hand_id, deadline in live.values_list("id", "turn_deadline"):
            seen.setdefault(hand_id, set()).add(deadline)
        time.sleep(0.02)
    return seen


def lateness(seen: dict[int, set[datetime]], since: datetime, until: datetime) -> list[float]:
    """Seconds from each timed-out turn's deadline to its `timed_out` event."""
    from tables.models import HandEvent

    late = []
    events = HandEvent.objects.filter(
        type="timed_out", created_at__gte=since, created_at__lte=until
    ).values_list("hand_id", "created_at")
    for hand_id, at in events:
        # The turn timed out is the hand's last one whose deadline had come (a second
        # apart, every one of them sampled).
        passed = [d for d in seen.get(hand_id, ()) if d <= at]
        if passed:
            late.append((at - max(passed)).total_seconds())
    return late


def measure(args: argparse.Namespace) -> None:
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    with connection.cursor() as cursor:
        cursor.execute(NEVER_SIT_OUT)
    db = connection.settings_dict
    env = dict(os.environ)
    where = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
    env["DATABASE_URL"] = f"postgres://{db['USER'] or 'postgres'}@{where}/{db['NAME']}"
    env["CELERY_TASK_DEFAULT_QUEUE"] = settings.CELERY_TASK_DEFAULT_QUEUE
    table_ids = tables_create(args.tables)
    runners = Runners(args, env)
    try:
        time.sleep(2)  # their start-up done
        cpu0 = runners.cpu()
        time.sleep(args.idle_seconds)
        idle = {k: (v - cpu0[k]) / args.idle_seconds for k, v in runners.cpu().items()}
        players_seat(table_ids)
        from tables.models import Hand

        wait(
            lambda: (
                Hand.objects.filter(table_id__in=table_ids).values("table").distinct().count()
                == len(table_ids)
            ),
            seconds=60,
            what="every table dealt",
        )
        since, cpu0, t0 = timezone.now(), runners.cpu(), time.monotonic()
        seen = deadlines_sample(args.seconds)
        spent = time.monotonic() - t0
        loaded = {k: (v - cpu0[k]) / spent for k, v in runners.cpu().items()}
        until = timezone.now()
    finally:
        runners.stop()
    # A timeout due just before `until` may commit just after it: leave out the last turn.
    late = lateness(seen, since, until - timedelta(seconds=1))
    if not late:
        raise SystemExit("no turn timed out: see the runner's log")
    runner = args.runner + (f" --tables-at-once={args.tables_at_once}" * (args.runner == "timers"))
    print(f"runner: {runner}; {args.tables} tables, {len(late)} timeouts in {args.seconds} s")
    print("| lateness p50 | p99 | max |")
    print("|---:|---:|---:|")
    print(
        f"| {statistics.median(late) * 1000:.0f} ms | {percentile(late, 99) * 1000:.0f} ms "
        f"| {max(late) * 1000:.0f} ms |"
    )
    print()
    print("| process | CPU idle | loaded | per timeout |")
    print("|---|---:|---:|---:|")
    for name in idle:
        per_timeout = loaded[name] * spent / len(late) * 1000
        print(
            f"| {name} | {idle[name] * 1000:.1f} ms/s | {loaded[name] * 1000:.0f} ms/s "
            f"| {per_timeout:.1f} ms |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runner", choices=["timers", "celery"], default="timers")
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0, help="Of load, measured.")
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument(
        "--tables-at-once", type=int, default=4, help="run_timers' option (timers runner)."
    )
    parser.add_argument(
        "--with-worker", action="store_true", help="A Celery worker beside the timer loop."
    )
    args = parser.parse_args()
    os.environ["DJANGO_SETTINGS_MODULE"] = "poker_room.settings.test"
    os.environ.setdefault("TEST_DATABASE_NAME", "bench_timers")
    import django

    django.setup()
    from django.db import connection

    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        measure(args)
    finally:
        connection.close()
        connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
