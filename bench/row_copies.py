"""CPU of an action worked on a copy of the table's rows (tables/row_cache.py) against
the same action on the rows read under the lock, in one process, rounds alternating.

Creates a throwaway database beside the configured one, seats six players at a table
through the real services (bench/queries.py), then plays rounds of ten hands, everyone
checking or calling: every other round with the table followed as a web process that
reads its feed follows it (its actions find the copy the previous one left: one query,
the lock and the check ahead of the writes), the rounds between without (each action
reads the rows first: two queries). Run it from a checkout with PostgreSQL and Redis
running:

    python bench/row_copies.py [--rounds 20]

It prints each round's CPU per action of this process and of its PostgreSQL backend
(from /proc, so on this machine only), then the medians of each way.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.test")
    os.environ.setdefault("TEST_DATABASE_NAME", "bench_row_copies")
    import django

    django.setup()
    import queries
    from django.db import connection

    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        queries.measure(1)
        results = measure(args.rounds)
    finally:
        connection.close()
        connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)
    print("| way | CPU ms an action, this process (median) | CPU ms, PostgreSQL (median) |")
    print("|---|---:|---:|")
    for way, rounds in results.items():
        client = statistics.median(r[0] for r in rounds)
        server = statistics.median(r[1] for r in rounds)
        print(f"| {way} | {client:.3f} | {server:.3f} |")
    return 0


def measure(rounds: int) -> dict[str, list[tuple[float, float]]]:
    import queries
    from django.db import connection

    from tables import row_cache
    from tables.engine.state import HandState
    from tables.models import Hand, HandStatus, Seat, Table
    from tables.services import play
    from tables.services.hands import hand_start_due

    table = Table.objects.get()
    results: dict[str, list[tuple[float, float]]] = {"on copies": [], "on the rows read": []}
    for n in range(rounds):
        copies = n % 2 == 0
        if copies:
            row_cache.follow(table.pk)
        client = server = 0.0
        actions = 0
        for _ in range(10):
            Table.objects.filter(pk=table.pk).update(next_hand_at=None)
            hand_start_due(table_id=table.id)
            while hand := Hand.objects.filter(table=table, status=HandStatus.IN_PROGRESS).first():
                state = HandState.from_dict(hand.state)
                seat = Seat.objects.select_related("player").get(table=table, number=state.actor)
                kind = "check" if state.legal_actions().can_check else "call"
                pg, cpu = queries.backend_cpu_seconds(connection), time.process_time()
                play.hand_act(
                    table_id=table.id, user=seat.player, kind=kind, turn=hand.turn_version
                )
                client += time.process_time() - cpu
                server += queries.backend_cpu_seconds(connection) - pg
                actions += 1
        if copies:
            row_cache.unfollow(table.pk)
        way = "on copies" if copies else "on the rows read"
        mine, its = client / actions * 1000, server / actions * 1000
        results[way].append((mine, its))
        print(f"round {n + 1}, {way}: {mine:.3f} ms, PostgreSQL {its:.3f} ms")
    return results


if __name__ == "__main__":
    sys.exit(main())
