"""PostgreSQL's CPU for a table command's statements and a chip movement's, prepared (as
poker_room/postgres/prepared.py runs them) against the same planned at every call.

Creates a throwaway database beside the configured one, plays a few hands at a table of
six through the real services (bench/queries.py), deals one more, then runs, in
alternating rounds, each command's two queries as the room sends them: the lock's read
(table, seats, hand) and an action's writes (hand, table, one event), and the ledger's
movement of a cent between a player's wallet and the table (`cashier.services`, the
statement of every buy-in, top-up, cash-out and rake), each in a committed transaction.
Run it from a checkout with PostgreSQL and Redis running:

    python bench/prepared.py [--calls 400] [--rounds 7]

It prints, per query and way, the median over the rounds of the PostgreSQL backend's
CPU per transaction (from /proc, so on this machine only) and of this process's.
"""

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.test")
    os.environ.setdefault("TEST_DATABASE_NAME", "bench_prepared")
    import django

    django.setup()
    import queries
    from django.db import connection

    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        queries.measure(3)
        results = measure(args.calls, args.rounds)
    finally:
        connection.close()
        connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)
    print("| query | way | CPU ms, PostgreSQL | CPU ms, this process |")
    print("|---|---|---:|---:|")
    for (query, way), rounds in results.items():
        server = statistics.median(r[0] for r in rounds)
        client = statistics.median(r[1] for r in rounds)
        print(f"| {query} | {way} | {server:.3f} | {client:.3f} |")
    return 0


def measure(calls: int, rounds: int) -> dict[tuple[str, str], list[tuple[float, float]]]:
    import queries
    from django.db import connection, transaction

    from cashier.models import LedgerTransaction, TransactionKind
    from cashier.services import Leg, _posting_parameters, _posting_sql, wallet_ensure
    from poker_room.postgres import prepared
    from tables import rows
    from tables.ledger import table_account_ensure
    from tables.models import Hand, HandEvent, HandStatus, Seat, Table
    from tables.services.command import HAND_FIELDS_CHANGING
    from tables.services.hands import hand_start_due

    table = Table.objects.get()
    Table.objects.filter(pk=table.pk).update(next_hand_at=None)
    hand_start_due(table_id=table.id)
    hand = Hand.objects.get(table=table, status=HandStatus.IN_PROGRESS)
    account = table_account_ensure(table=table)
    wallet = wallet_ensure(user=Seat.objects.filter(table=table).first().player)
    seq = [10_000]

    def writes() -> rows.Writes:
        seq[0] += 1
        batch = rows.Writes()
        batch.update(hand, HAND_FIELDS_CHANGING)
        batch.update(table, ["event_seq"])
        batch.insert([HandEvent(hand=hand, seq=seq[0], type="probe", data={})])
        return batch

    def planned(statements) -> None:  # type: ignore[no-untyped-def]
        with connection.cursor() as cursor:
            cursor.execute(
                ";\n".join(sql for sql, _ in statements),
                [value for _, params in statements for value in params],
            )

    def run_prepared(statements, first=None) -> None:  # type: ignore[no-untyped-def]
        with connection.cursor() as cursor:
            prepared.execute(cursor, statements, first=first)

    def posting() -> list[tuple[str, list[object]]]:
        # One cent to the table and back, by turns, under a new key each time.
        seq[0] += 1
        legs = [Leg(account=wallet, amount=-1), Leg(account=account, amount=1)]
        if seq[0] % 2:
            legs = [Leg(account=leg.account, amount=-leg.amount) for leg in legs]
        row = LedgerTransaction(
            kind=TransactionKind.TOP_UP, memo="bench", idempotency_key=f"bench-{seq[0]}"
        )
        return [(_posting_sql(), _posting_parameters(row, legs))]

    timeout = (rows._LOCK_TIMEOUT_SQL, ["5000"])
    lock = rows._locked_sql(table.pk)
    ways = {
        ("lock's read", "prepared"): lambda: run_prepared(lock, first=timeout),
        ("lock's read", "planned each time"): lambda: planned([timeout, *lock]),
        ("action's writes", "prepared"): lambda: writes().send(),
        ("action's writes", "planned each time"): lambda: planned(writes()._statements),
        ("a chip movement", "prepared"): lambda: run_prepared(posting()),
        ("a chip movement", "planned each time"): lambda: planned(posting()),
    }
    results: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for _ in range(rounds):
        for key, way in ways.items():
            with transaction.atomic():
                way()  # connected, and prepared
            server, client = queries.backend_cpu_seconds(connection), time.process_time()
            for _ in range(calls):
                with transaction.atomic():
                    way()
            results[key].append(
                (
                    (queries.backend_cpu_seconds(connection) - server) * 1000 / calls,
                    (time.process_time() - client) * 1000 / calls,
                )
            )
    return results


if __name__ == "__main__":
    sys.exit(main())
