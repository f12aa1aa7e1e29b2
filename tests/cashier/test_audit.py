"""The ledger audit: clean books pass; every kind of damage is found and reported."""

import logging

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from cashier import audit
from cashier.audit import audit_check, ledger_audit
from cashier.models import AccountKind, LedgerAccount, LedgerEntry, LedgerTransaction
from cashier.services import system_account_ensure, wallet_ensure, withdrawal_request
from cashier.tasks import ledger_audit_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def books(player, fund):
    fund(player, 5_000)
    withdrawal_request(user=player, amount=1_000, idempotency_key="w")
    return player


@pytest.fixture
def registry(monkeypatch):
    """Registered checks, restored after the test."""
    monkeypatch.setattr(audit, "_checks", dict(audit._checks))


@pytest.fixture
def balance_trigger_off(books):
    """As if someone had dropped the balance trigger. ALTER TABLE is transactional in
    PostgreSQL: the test's rollback turns it back on."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # run the checks already pending
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for table in ("cashier_ledgerentry", "cashier_ledgertransaction"):
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {table}_balanced")


def write_behind_the_back(legs: list[tuple[LedgerAccount, int]]) -> None:
    """Legs written without the posting service."""
    txn = LedgerTransaction.objects.create(kind="deposit", idempotency_key="evil", fingerprint="")
    for account, amount in legs:
        LedgerEntry.objects.create(transaction=txn, account=account, amount=amount)


def test_clean_books_pass_and_the_command_prints_a_summary(books, capsys):
    report = ledger_audit()
    assert report.ok
    assert report.counts == {"accounts": 3, "transactions": 2, "entries": 4}
    assert report.balances == {"clearing": -5_000, "hold": 1_000, "wallet": 4_000}
    call_command("audit_ledger")
    assert "Ledger audit: OK" in capsys.readouterr().out


def test_a_wrong_cached_balance_is_found(books, capsys):
    wallet = wallet_ensure(user=books)
    LedgerAccount.objects.filter(pk=wallet.pk).update(balance=4_001)
    report = ledger_audit()
    assert [d.check for d in report.discrepancies] == ["cached_balances"]
    assert "caches 4001 but its legs sum to 4000" in report.discrepancies[0].message
    with pytest.raises(CommandError, match="1 discrepancies"):
        call_command("audit_ledger")
    assert "[cached_balances]" in capsys.readouterr().err


def test_an_unbalanced_transaction_and_misplaced_chips_are_found(books, balance_trigger_off):
    house = system_account_ensure(kind=AccountKind.HOUSE)
    hold = system_account_ensure(kind=AccountKind.HOLD)
    write_behind_the_back([(house, 70), (hold, -50)])
    LedgerAccount.objects.filter(pk=house.pk).update(balance=70)
    LedgerAccount.objects.filter(pk=hold.pk).update(balance=950)
    checks = {d.check for d in ledger_audit().discrepancies}
    assert checks == {"transactions_balanced", "hold_mirrors_pending"}


def test_a_clearing_account_out_of_step_with_deposits_is_found(books):
    clearing = system_account_ensure(kind=AccountKind.CLEARING)
    house = system_account_ensure(kind=AccountKind.HOUSE)
    write_behind_the_back([(clearing, -300), (house, 300)])
    LedgerAccount.objects.filter(pk=clearing.pk).update(balance=-5_300)
    LedgerAccount.objects.filter(pk=house.pk).update(balance=300)
    report = ledger_audit()
    assert [d.check for d in report.discrepancies] == ["clearing_mirrors_cash"]
    assert "call for -5000" in report.discrepancies[0].message


def test_other_apps_add_checks_and_a_crashing_check_fails_the_audit(books, registry):
    @audit_check("tables_match_seats")
    def tables_match_seats():
        yield "table 7: ledger 100, seats 90"

    @audit_check("broken")
    def broken():
        raise ZeroDivisionError("oops")

    report = ledger_audit()
    assert "tables_match_seats" in report.checks
    assert [str(d) for d in report.discrepancies] == [
        "[tables_match_seats] table 7: ledger 100, seats 90",
        "[broken] the check crashed: ZeroDivisionError('oops')",
    ]


def test_the_hourly_task_logs_an_error_on_a_discrepancy(books, caplog):
    assert settings.CELERY_BEAT_SCHEDULE["cashier-ledger-audit"] == {
        "task": "cashier.tasks.ledger_audit_task",
        "schedule": 3600.0,
    }
    assert ledger_audit_task() is True
    wallet = wallet_ensure(user=books)
    LedgerAccount.objects.filter(pk=wallet.pk).update(balance=0)
    with caplog.at_level(logging.INFO, logger="cashier.tasks"):
        assert ledger_audit_task() is False
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "[cached_balances]" in errors[0].getMessage()
