"""Fixtures for the table layer: a table of the real database (built with tests/kit.py),
and the ledger audit after every test of the folder."""

import pytest

from tests.kit import StakeLevelFactory, TableFactory


@pytest.fixture
def stake(db):
    return StakeLevelFactory()


@pytest.fixture
def table(stake):
    return TableFactory(stake_level=stake, seats=6)


@pytest.fixture(autouse=True)
def ledger_audited(request):
    """After any test of this folder that touched the database, the ledger audit passes."""
    marker = request.node.get_closest_marker("django_db")
    uses_db = marker is not None or {"db", "transactional_db"} & set(request.fixturenames)
    if not uses_db:
        yield
        return
    transactional = marker is not None and marker.kwargs.get("transaction", False)
    request.getfixturevalue("transactional_db" if transactional else "db")
    yield
    from cashier.audit import ledger_audit

    report = ledger_audit()
    assert report.ok, [str(d) for d in report.discrepancies]
