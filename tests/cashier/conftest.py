"""Fixtures of the cashier tests: players, a table, and a way to fund a wallet."""

import uuid
from collections.abc import Callable

import pytest

from accounts.models import User
from accounts.services import auditor_create
from cashier.models import LedgerEntry, LedgerTransaction
from cashier.selectors import wallet_balance
from cashier.services import deposit_create
from tables.models import Table
from tests.factories import TableFactory, UserFactory


@pytest.fixture
def player(db) -> User:
    return UserFactory()


@pytest.fixture
def other_player(db) -> User:
    return UserFactory()


@pytest.fixture
def auditor(db) -> User:
    user, _password, _token = auditor_create(username=f"auditor-{uuid.uuid4().hex[:8]}")
    return user


@pytest.fixture
def table(db) -> Table:
    return TableFactory()


@pytest.fixture
def fund(db) -> Callable[[User, int], None]:
    def fund(user: User, amount: int) -> None:
        deposit_create(user=user, amount=amount, idempotency_key=f"fund:{uuid.uuid4()}")

    return fund


@pytest.fixture
def ledger_state() -> Callable[[], tuple[int, int, dict[int, int]]]:
    """Counts of transactions and legs, and every user's wallet balance: to prove that
    a refused request changed nothing."""

    def state() -> tuple[int, int, dict[int, int]]:
        balances = {user.pk: wallet_balance(user=user) for user in User.objects.all()}
        return LedgerTransaction.objects.count(), LedgerEntry.objects.count(), balances

    return state


def ledger_consistent() -> bool:
    """The ledger audit, less the tables' check that table accounts match seated stacks:
    these tests move chips to table accounts without seating anyone."""
    from cashier.audit import ledger_audit

    report = ledger_audit()
    return not [d for d in report.discrepancies if d.check != "table_accounts_match_seats"]
