"""SQL statements, feed publishes and CPU per table command (issue #15: "queries per
action, counted"; "one channel-layer send per event instead of one per command"; "find
where the milliseconds go").

Creates a throwaway database beside the configured one, seats six players at a table,
deals and plays hands through the real services, and counts the statements each command
sends (`CaptureQueriesContext`: every statement, savepoints included; an `act` that ends
a hand is counted apart, as `settle`), then drops the database. Run it from a checkout
with its services running (PostgreSQL, Redis):

    python bench/queries.py [--hands 20]

It prints, per command, the statements of the median and the worst call (as Django logs
them: its BEGIN and COMMIT are logged whether or not psycopg sent them), the round trips
to PostgreSQL of the median call (the queries psycopg sent, each waited for), the median
wall time (what the thread serving a web process's table commands spends on one), the
median CPU of this process (the command as a web process or worker runs it, its publish included)
and of its PostgreSQL backend (from /proc), the WAL it wrote (the server's, so with the
machine otherwise idle: unlike the CPU, the same from run to run), and the statements
of the median `act` by kind (SELECT / INSERT / UPDATE / other), and how many updates of
the hands, tables and seats PostgreSQL made in place (HOT: no index entry written, the
old version pruned from the page). `--profile N` adds the N costliest functions of all
the `act` calls (`--profile-of deal`: of the deals), from cProfile. `--history N` gives
the table N earlier hands first (finished, each with a state of a real one's size), so
that a deal is measured on a table with a long past: it should cost what it costs on a
new table (a deal once read every hand its table had dealt).
"""

import argparse
import os
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--profile-of", choices=("act", "deal", "sit"), default="act")
    parser.add_argument("--history", type=int, default=0, metavar="N")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.test")
    os.environ.setdefault("TEST_DATABASE_NAME", "bench_queries")
    import django

    django.setup()
    from django.db import connection

    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        counts, kinds, cpu = measure(
            args.hands, profile_top=args.profile, profiled=args.profile_of, history=args.history
        )
        in_place = updates_in_place(connection)
    finally:
        connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)
    print(
        "| command | calls | statements, median | worst | round trips, median "
        "| feed publishes, mean | wall ms (median) | CPU ms, this process (median) "
        "| CPU ms, PostgreSQL (mean) | WAL bytes (median) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, values in counts.items():
        if name.endswith((" sends", " trips")):
            continue
        mean_sends = statistics.mean(counts[f"{name} sends"])
        # The backend's clock ticks every 10 ms: a mean of its readings, not a median.
        client = statistics.median(cpu[f"{name} client"])
        server = statistics.mean(cpu[f"{name} pg"])
        wal = statistics.median(cpu[f"{name} wal"])
        trips = statistics.median(counts[f"{name} trips"])
        wall = statistics.median(cpu[f"{name} wall"])
        row = (
            f"{len(values)} | {statistics.median(values):g} | {max(values)} | {trips:g}"
            f" | {mean_sends:.2f} | {wall:.2f} | {client:.2f} | {server:.2f} | {wal:,.0f}"
        )
        print(f"| {name} | {row} |")
    print()
    print("median `act` by kind:", dict(kinds))
    print()
    for table, (updates, hot) in in_place.items():
        print(f"{table}: {hot:,} of {updates:,} row updates in place (HOT, no index entry written)")
    return 0


def updates_in_place(connection) -> dict[str, tuple[int, int]]:  # type: ignore[no-untyped-def]
    """Row updates and those made in place (HOT) of the tables every command writes."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")  # this backend's counts, now
        cursor.execute(
            "SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables"
            " WHERE relname IN ('tables_hand', 'tables_table', 'tables_seat') ORDER BY relname"
        )
        return {name: (updates, hot) for name, updates, hot in cursor.fetchall()}


def backend_cpu_seconds(connection) -> float:  # type: ignore[no-untyped-def]
    """User + system CPU so far of this connection's PostgreSQL backend (same machine)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wal_position(connection) -> str:  # type: ignore[no-untyped-def]
    """Where the server's write-ahead log is being written now (an LSN)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()::text")
        return cursor.fetchone()[0]


def wal_bytes_since(connection, start: str) -> int:  # type: ignore[no-untyped-def]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), %s::pg_lsn)", [start])
        return int(cursor.fetchone()[0])


def history_insert(connection, table_id: int, hands: int) -> None:  # type: ignore[no-untyped-def]
    """`hands` finished hands of the table, numbered from 1, turns numbered on from hand to
    hand; their state is padding of a real state's size (about 2 KB of JSON): nothing in
    a deal of a table without kills reads it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO tables_hand (table_id, number, status, state, button, deck_commitment,"
            " salt, turn_version, turn_bonus_used, events_logged, rake, started_at, ended_at)"
            " SELECT %s, n, 'finished', jsonb_build_object('padding', repeat('x', 2000)), 1,"
            " '', '', n * 12, false, 0, 0, now(), now() FROM generate_series(1, %s) AS n",
            [table_id, hands],
        )
        cursor.execute("ANALYZE tables_hand")


def round_trips_counted() -> list[int]:
    """A counter of the queries psycopg (pinned) sends: a cursor's, and those it sends on
    its own (its BEGIN before a transaction's first query, its COMMIT and ROLLBACK).
    Counted where psycopg sends them, since Django's log names a COMMIT it never sent."""
    from psycopg._connection_base import BaseConnection
    from psycopg._cursor_base import BaseCursor
    from psycopg.client_cursor import ClientCursorMixin

    sent = [0]

    def counting(cls: type, name: str) -> None:
        original = getattr(cls, name)

        def count(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            sent[0] += 1
            return original(self, *args, **kwargs)

        setattr(cls, name, count)

    counting(BaseConnection, "_exec_command")
    # Client-side binding (Django's default) has a send of its own.
    counting(BaseCursor, "_execute_send")
    counting(ClientCursorMixin, "_execute_send")
    return sent


def measure(
    hands: int, *, profile_top: int = 0, profiled: str = "act", history: int = 0
) -> tuple[dict[str, list[int]], Counter[str], dict[str, list[float]]]:
    import cProfile
    import pstats
    import time
    from datetime import timedelta

    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from accounts.models import User
    from cashier.services import deposit_create
    from tables import feed
    from tables.engine.state import HandState
    from tables.models import Hand, HandStatus, Seat, StakeLevel, Table
    from tables.services import play, seating
    from tables.services.hands import hand_start_due

    stake = StakeLevel.objects.create(
        name="bench PLO", game="omaha", structure="PL", small_blind=50, big_blind=100
    )
    table = Table.objects.create(name="bench", stake_level=stake, seats=6)
    Table.objects.filter(pk=table.pk).update(next_hand_at=timezone.now() + timedelta(hours=1))
    counts: dict[str, list[int]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    acts: list[list[str]] = []
    profile = cProfile.Profile() if profile_top else None

    publish = feed.publish
    sends = [0]

    def counting_publish(*args, **kwargs):  # type: ignore[no-untyped-def]
        sends[0] += 1
        return publish(*args, **kwargs)

    feed.publish = counting_publish
    trips = round_trips_counted()

    def counted(name: str, call):  # type: ignore[no-untyped-def]
        sends[0] = 0
        profiling = profile is not None and name == profiled
        # The PostgreSQL figure includes one `SELECT pg_backend_pid()` of the reading.
        server = backend_cpu_seconds(connection)
        wal = wal_position(connection)
        client, wall, sent = time.process_time(), time.perf_counter(), trips[0]
        with CaptureQueriesContext(connection) as captured:
            if profiling:
                profile.enable()
            result = call()
            if profiling:
                profile.disable()
        cpu[f"{name} wall"].append((time.perf_counter() - wall) * 1000)
        sent = trips[0] - sent
        cpu[f"{name} client"].append((time.process_time() - client) * 1000)
        counts[f"{name} trips"].append(sent)
        cpu[f"{name} pg"].append((backend_cpu_seconds(connection) - server) * 1000)
        cpu[f"{name} wal"].append(wal_bytes_since(connection, wal))
        counts[name].append(len(captured.captured_queries))
        counts[f"{name} sends"].append(sends[0])
        if name == "act":
            acts.append([q["sql"].split(None, 1)[0].upper() for q in captured.captured_queries])
        return result

    for n in range(6):
        user = User.objects.create_user(username=f"bench{n}", password=None)
        deposit_create(user=user, amount=100_000, idempotency_key=f"bench-deposit-{n}")
        counted(
            "sit",
            lambda user=user, n=n: seating.seat_take(
                table_id=table.id,
                user=user,
                seat_number=n + 1,
                buy_in=stake.buy_in_max,
                idempotency_key=f"bench-sit-{n}",
            ),
        )
    if history:
        history_insert(connection, table.pk, history)
    for _ in range(hands):
        Table.objects.filter(pk=table.pk).update(next_hand_at=None)
        counted("deal", lambda: hand_start_due(table_id=table.id))
        while hand := Hand.objects.filter(table=table, status=HandStatus.IN_PROGRESS).first():
            state = HandState.from_dict(hand.state)
            seat = Seat.objects.select_related("player").get(table=table, number=state.actor)
            kind = "check" if state.legal_actions().can_check else "call"
            counted(
                "act",
                lambda seat=seat, kind=kind, hand=hand: play.hand_act(
                    table_id=table.id, user=seat.player, kind=kind, turn=hand.turn_version
                ),
            )
            if Hand.objects.filter(pk=hand.pk, status=HandStatus.FINISHED).exists():
                # The act that ended the hand settled it too (stacks, rake, top-ups).
                for figures in (counts, cpu):
                    for key in [key for key in figures if key.startswith("act")]:
                        figures[key.replace("act", "settle", 1)].append(figures[key].pop())
                acts.pop()
    median = sorted(acts, key=len)[len(acts) // 2]
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(profile_top)
    return counts, Counter(median), cpu


if __name__ == "__main__":
    sys.exit(main())
