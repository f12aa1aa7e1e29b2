"""Fixtures of the cashier tests: a table's ledger account (the cashier knows a table
only by its account's opaque reference). Players, auditors, `fund` and `ledger_state`
are the suite's (tests/conftest.py, tests/kit.py)."""

import pytest

from cashier.models import LedgerAccount
from cashier.services import table_account_ensure


@pytest.fixture
def table_account(db) -> LedgerAccount:
    return table_account_ensure(reference="table:test", name="Test table")


def ledger_consistent() -> bool:
    """The ledger audit, less the tables' check that table accounts match seated stacks:
    these tests move chips to table accounts without seating anyone."""
    from cashier.audit import ledger_audit

    report = ledger_audit()
    return not [d for d in report.discrepancies if d.check != "table_accounts_match_seats"]
