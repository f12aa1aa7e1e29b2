"""The cost of borrowing a pooled connection for one command, with Django's check on
every loan against the room's (poker_room/postgres: a round trip only for a connection
idle for more than a second).

Each command is what a web process's database thread does for a table command, minus
the command: borrow a connection (Django's close_old_connections), run one statement in
a durable transaction, give it back. Run from a checkout with PostgreSQL running:

    python bench/pool_loan.py [--commands 3000]

It prints the CPU of this process and of the PostgreSQL backend per command, and the
wall time, for each check (median of five rounds).
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def backend_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=3000)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.test")
    import django

    django.setup()
    from django.db import close_old_connections, connection, transaction
    from psycopg_pool import ConnectionPool

    from poker_room.postgres import base as postgres

    connection.settings_dict["NAME"] = "postgres"  # any database: one statement

    def command() -> int:
        close_old_connections()
        with transaction.atomic(durable=True), connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            (pid,) = cursor.fetchone()
        close_old_connections()
        return pid

    pool = connection.pool
    pool.resize(min_size=1, max_size=1)  # one connection, so one backend to read
    print("| check on loan | CPU ms, this process | CPU ms, PostgreSQL | wall ms |")
    print("|---|---:|---:|---:|")
    checks = {
        "Django's (every loan)": ConnectionPool.check_connection,
        "the room's (idle > 1 s)": postgres.connection_check,
    }
    for name, check in checks.items():
        pool._check = check  # the pool keeps its check here; a benchmark may swap it
        pid = command()
        rounds = []
        per_round = args.commands // 5
        for _ in range(5):
            server, client = backend_cpu_seconds(pid), time.process_time()
            wall = time.perf_counter()
            for _ in range(per_round):
                command()
            rounds.append(
                (
                    (time.process_time() - client) * 1000 / per_round,
                    (backend_cpu_seconds(pid) - server) * 1000 / per_round,
                    (time.perf_counter() - wall) * 1000 / per_round,
                )
            )
        client_ms, server_ms, wall_ms = (statistics.median(r[i] for r in rounds) for i in range(3))
        print(f"| {name} | {client_ms:.3f} | {server_ms:.3f} | {wall_ms:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
