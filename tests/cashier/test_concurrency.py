"""Many threads, one wallet: no overdraft, no lost update, one movement per key.

Each thread has its own database connection (Django opens one per thread) and closes it
at the end; the test commits for real so the threads see each other's work.
"""

import threading
import time
from collections import Counter
from collections.abc import Callable

import pytest
from django.db import connection, transaction

from cashier.exceptions import CashierError, IdempotencyKeyReused, InsufficientFunds
from cashier.models import LedgerTransaction
from cashier.selectors import wallet_balance
from cashier.services import (
    Posting,
    deposit_create,
    table_account_ensure,
    table_buy_in,
    table_cash_out,
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


def waiting_for_a_lock() -> None:
    """Return once another connection to the test database waits for a lock."""
    deadline = time.monotonic() + 10
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            # The activity is read once a transaction, and this one is open: read afresh.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.01)
    raise AssertionError("no connection came to wait for a lock")


def test_a_debit_that_waited_for_a_credit_to_its_wallet_is_paid_from_the_credited_balance():
    """The wallet holds 20; a cash-out of 30 to it holds its lock a while; a buy-in of 40
    waits for that lock. It must be paid from the 50 the wallet then holds: the funds'
    check and the new balance both come from the locked, latest row, not from the
    balance the statement's snapshot saw (20 - 40, below zero: refused by the database's
    CHECK before the update moved on to the latest row)."""
    player = UserFactory()
    here = table_account_ensure(reference="table:here", name="Here")
    there = table_account_ensure(reference="table:there", name="There")
    deposit_create(user=player, amount=50, idempotency_key="seed")
    table_buy_in(user=player, account=there, amount=30, idempotency_key="there")
    credited = threading.Event()

    def cash_out_slowly() -> object:
        with transaction.atomic():
            posted = table_cash_out(user=player, account=there, amount=30, idempotency_key="c")
            credited.set()
            waiting_for_a_lock()  # the buy-in below, for the wallet's
        return posted

    def buy_in_once_credited() -> object:
        credited.wait(timeout=10)
        return table_buy_in(user=player, account=here, amount=40, idempotency_key="here")

    results = run_together([cash_out_slowly, buy_in_once_credited])

    assert not [r for r in results if isinstance(r, Exception)], results
    assert isinstance(results[1], Posting) and results[1].created
    assert wallet_balance(user=player) == 10
    assert ledger_consistent()
