"""The ledger's invariants hold in PostgreSQL itself, for writes behind the services' back.

These tests commit for real (`transaction=True`): the balance trigger is deferred to
commit, which a test wrapped in a rolled-back transaction would never reach.
"""

import pytest
from django.db import IntegrityError, transaction

from cashier.models import AccountKind, LedgerAccount, LedgerEntry, LedgerTransaction
from cashier.services import deposit_create, system_account_ensure, wallet_ensure
from tests.kit import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def wallet():
    user = UserFactory()
    deposit_create(user=user, amount=1_000, idempotency_key="seed")
    return wallet_ensure(user=user)


def raw_transaction(key: str) -> LedgerTransaction:
    return LedgerTransaction.objects.create(kind="deposit", idempotency_key=key, fingerprint="x")


def test_the_trigger_rejects_an_unbalanced_transaction_at_commit(wallet):
    house = system_account_ensure(kind=AccountKind.HOUSE)
    with pytest.raises(IntegrityError, match="unbalanced"), transaction.atomic():
        txn = raw_transaction("behind-the-back")
        LedgerEntry.objects.create(transaction=txn, account=wallet, amount=-100)
        LedgerEntry.objects.create(transaction=txn, account=house, amount=99)
    assert not LedgerTransaction.objects.filter(idempotency_key="behind-the-back").exists()
    assert LedgerEntry.objects.count() == 2  # the seed deposit's legs only


def test_the_trigger_rejects_a_transaction_without_legs_and_a_lone_leg(wallet):
    with pytest.raises(IntegrityError, match="0 legs"), transaction.atomic():
        raw_transaction("no-legs")
    with pytest.raises(IntegrityError, match="1 legs"), transaction.atomic():
        LedgerEntry.objects.create(transaction=raw_transaction("one"), account=wallet, amount=5)
    assert LedgerTransaction.objects.count() == 1


def test_a_leg_added_later_to_a_balanced_transaction_is_rejected(wallet):
    seed = LedgerTransaction.objects.get(idempotency_key="seed")
    with pytest.raises(IntegrityError, match="unbalanced"), transaction.atomic():
        LedgerEntry.objects.create(transaction=seed, account=wallet, amount=50)
    assert seed.entries.count() == 2


def test_a_balanced_transaction_written_by_hand_is_accepted(wallet):
    house = system_account_ensure(kind=AccountKind.HOUSE)
    with transaction.atomic():
        txn = raw_transaction("by-hand")
        LedgerEntry.objects.create(transaction=txn, account=wallet, amount=-100)
        LedgerEntry.objects.create(transaction=txn, account=house, amount=100)
    assert txn.entries.count() == 2


def test_a_zero_leg_is_refused(wallet):
    zero_leg_refused = pytest.raises(IntegrityError, match="cashier_entry_amount_non_zero")
    with zero_leg_refused, transaction.atomic():
        LedgerEntry.objects.create(transaction=raw_transaction("z"), account=wallet, amount=0)


def test_legs_and_transactions_are_append_only(wallet):
    leg = LedgerEntry.objects.filter(account=wallet).get()
    with pytest.raises(IntegrityError, match="append-only: UPDATE refused"):
        LedgerEntry.objects.filter(pk=leg.pk).update(amount=2_000)
    with pytest.raises(IntegrityError, match="append-only: DELETE refused"):
        LedgerEntry.objects.filter(pk=leg.pk).delete()
    with pytest.raises(IntegrityError, match="append-only"):
        LedgerTransaction.objects.filter(pk=leg.transaction_id).update(memo="edited")
    leg.refresh_from_db()
    assert leg.amount == 1_000


def test_the_check_rejects_a_negative_balance_but_not_on_clearing(wallet):
    with pytest.raises(IntegrityError, match="cashier_account_balance_non_negative"):
        LedgerAccount.objects.filter(pk=wallet.pk).update(balance=-1)
    wallet.refresh_from_db()
    assert wallet.balance == 1_000
    clearing = system_account_ensure(kind=AccountKind.CLEARING)
    assert clearing.balance == -1_000


def test_one_wallet_per_player_and_one_house(wallet):
    with pytest.raises(IntegrityError):
        LedgerAccount.objects.create(kind=AccountKind.WALLET, user=wallet.user)
    system_account_ensure(kind=AccountKind.HOUSE)
    with pytest.raises(IntegrityError):
        LedgerAccount.objects.create(kind=AccountKind.HOUSE)
    with pytest.raises(IntegrityError):
        LedgerAccount.objects.create(kind=AccountKind.WALLET)  # a wallet needs a player


def test_a_table_account_has_one_reference_and_only_table_accounts_have_one(wallet):
    LedgerAccount.objects.create(kind=AccountKind.TABLE, reference="table:1", name="One")
    with pytest.raises(IntegrityError, match="cashier_account_one_per_table_reference"):
        LedgerAccount.objects.create(kind=AccountKind.TABLE, reference="table:1")
    with pytest.raises(IntegrityError, match="cashier_account_table_has_reference"):
        LedgerAccount.objects.create(kind=AccountKind.TABLE)
    with pytest.raises(IntegrityError, match="cashier_account_table_has_reference"):
        LedgerAccount.objects.filter(pk=wallet.pk).update(reference="table:2")
