"""Many threads, one wallet: no overdraft, no lost update, one movement per key.

Each thread has its own database connection (Django opens one per thread) and closes it
at the end; the test commits for real so the threads see each other's work.
"""

from collections import Counter
from collections.abc import Callable

import pytest

from cashier.exceptions import CashierError, IdempotencyKeyReused, InsufficientFunds
from cashier.models import LedgerTransaction
from cashier.selectors import wallet_balance
from cashier.services import (
    Posting,
    deposit_create,
    table_account_ensure,
    table_buy_in,
    withdrawal_request,
)
from tests.cashier.conftest import ledger_consistent
from tests.concurrency import run_together
from tests.kit import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8


def test_concurrent_withdrawals_and_buy_ins_never_overdraw_the_wallet():
    player = UserFactory()
    table = table_account_ensure(reference="table:threads", name="Threads")
    deposit_create(user=player, amount=1_000, idempotency_key="seed")

    def job(i: int) -> Callable[[], object]:
        if i % 2:
            return lambda: withdrawal_request(user=player, amount=300, idempotency_key=f"w{i}")
        return lambda: table_buy_in(user=player, account=table, amount=300, idempotency_key=f"b{i}")

    results = run_together([job(i) for i in range(THREADS)])

    outcomes = Counter(type(result).__name__ for result in results)
    assert outcomes["InsufficientFunds"] == THREADS - 3, results
    assert not [
        r for r in results if isinstance(r, Exception) and not isinstance(r, InsufficientFunds)
    ]
    assert wallet_balance(user=player) == 100
    assert ledger_consistent()


def test_concurrent_deposits_and_buy_ins_lose_no_update():
    player = UserFactory()
    table = table_account_ensure(reference="table:threads", name="Threads")
    deposit_create(user=player, amount=10_000, idempotency_key="seed")

    jobs: list[Callable[[], object]] = []
    for i in range(THREADS):
        jobs.append(lambda i=i: deposit_create(user=player, amount=100, idempotency_key=f"d{i}"))
        jobs.append(
            lambda i=i: table_buy_in(
                user=player, account=table, amount=250, idempotency_key=f"b{i}"
            )
        )
    results = run_together(jobs)

    assert not [r for r in results if isinstance(r, Exception)], results
    assert wallet_balance(user=player) == 10_000 + THREADS * 100 - THREADS * 250
    assert ledger_consistent()


def test_one_key_sent_by_many_threads_moves_money_once():
    player = UserFactory()
    deposit_create(user=player, amount=5_000, idempotency_key="seed")

    results = run_together(
        [
            lambda: withdrawal_request(user=player, amount=1_000, idempotency_key="retry")
            for _ in range(THREADS)
        ]
    )

    assert not [r for r in results if isinstance(r, CashierError)], results
    assert len({result.pk for result in results}) == 1
    assert LedgerTransaction.objects.filter(idempotency_key="retry").count() == 1
    assert wallet_balance(user=player) == 4_000
    assert ledger_consistent()


def test_one_key_sent_at_once_for_movements_sharing_no_account_moves_money_once():
    """No lock in common: the first insert claims the key, the others wait for it to
    commit and are then refused as a key reused, with nothing moved."""
    players = [UserFactory() for _ in range(THREADS)]
    tables = [
        table_account_ensure(reference=f"table:key{i}", name=f"Key {i}") for i in range(THREADS)
    ]
    for i, player in enumerate(players):
        deposit_create(user=player, amount=1_000, idempotency_key=f"seed{i}")

    results = run_together(
        [
            lambda i=i: table_buy_in(
                user=players[i], account=tables[i], amount=400, idempotency_key="one key"
            )
            for i in range(THREADS)
        ]
    )

    winners = [r for r in results if isinstance(r, Posting)]
    assert len(winners) == 1 and winners[0].created, results
    assert all(isinstance(r, IdempotencyKeyReused) for r in results if r not in winners), results
    assert sorted(wallet_balance(user=p) for p in players) == [600] + [1_000] * (THREADS - 1)
    assert LedgerTransaction.objects.filter(idempotency_key="one key").count() == 1
    assert ledger_consistent()
