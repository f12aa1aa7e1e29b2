"""Run calls at once, in threads of their own, for the tests of races on committed data.

Each thread has its own database connection (Django opens one per thread) and closes it
when its call is done, so the tests using this commit for real
(`django_db(transaction=True)`) and the threads see each other's work and locks.
"""

import threading
from collections.abc import Callable

from django.db import connection


def run_together(jobs: list[Callable[[], object]]) -> list[object]:
    """Run the jobs in threads released at once (one connection each); results or errors.

    Returns, in the jobs' order, what each job returned or the exception it raised: the
    test inspects every outcome.
    """
    barrier = threading.Barrier(len(jobs))
    results: list[object] = [None] * len(jobs)

    def work(index: int, job: Callable[[], object]) -> None:
        try:
            barrier.wait()
            results[index] = job()
        except Exception as exc:  # the test inspects every outcome
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(i, job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    return results
