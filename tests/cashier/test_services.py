"""The cashier services: every movement, its refusals, idempotency, and atomicity."""

import pytest
from django.db import DatabaseError, connection, transaction
from django.test import override_settings

from cashier.exceptions import (
    DepositDeclined,
    DepositLimitExceeded,
    IdempotencyKeyReused,
    InsufficientFunds,
    InvalidAmount,
    UnbalancedTransaction,
    WithdrawalNotFound,
    WithdrawalNotPending,
)
from cashier.gateways import Charge
from cashier.models import (
    AccountKind,
    LedgerAccount,
    LedgerTransaction,
    TransactionKind,
    WithdrawalStatus,
)
from cashier.selectors import wallet_balance
from cashier.services import (
    MAX_AMOUNT,
    AccountsNotFound,
    Leg,
    _posting_parameters,
    _posting_sql,
    deposit_create,
    hand_rake_collect,
    ledger_post,
    system_account_ensure,
    table_account_ensure,
    table_buy_in,
    table_cash_out,
    table_top_up,
    wallet_ensure,
    withdrawal_approve,
    withdrawal_cancel,
    withdrawal_reject,
    withdrawal_request,
)
from poker_room.postgres.prepared import numbered, prepared_name
from tests.cashier.conftest import ledger_consistent

pytestmark = pytest.mark.django_db

BAD_AMOUNTS = [0, -1, -500, 1.5, 100.0, "100", "abc", None, True, MAX_AMOUNT + 1]


class DecliningGateway:
    name = "declining"

    def charge(self, *, user, amount, idempotency_key):
        return Charge(approved=False, reference="", reason="Card declined by the bank.")


def balance_of(kind: AccountKind) -> int:
    return LedgerAccount.objects.get(kind=kind).balance


def test_deposit_moves_chips_from_clearing_to_the_wallet(player):
    txn = deposit_create(user=player, amount=2_500, idempotency_key="d1")
    assert txn.kind == TransactionKind.DEPOSIT
    assert txn.external_reference.startswith("sandbox-")
    assert sorted(txn.entries.values_list("amount", flat=True)) == [-2_500, 2_500]
    assert wallet_balance(user=player) == 2_500
    assert balance_of(AccountKind.CLEARING) == -2_500
    assert ledger_consistent()


def test_a_retried_deposit_moves_money_once_and_returns_the_original(player):
    first = deposit_create(user=player, amount=1_000, idempotency_key="same")
    again = deposit_create(user=player, amount=1_000, idempotency_key="same")
    assert again.pk == first.pk
    assert wallet_balance(user=player) == 1_000
    assert LedgerTransaction.objects.count() == 1


def test_a_key_reused_with_other_parameters_is_refused(player, other_player, ledger_state):
    deposit_create(user=player, amount=1_000, idempotency_key="k")
    before = ledger_state()
    with pytest.raises(IdempotencyKeyReused):
        deposit_create(user=player, amount=2_000, idempotency_key="k")
    with pytest.raises(IdempotencyKeyReused):
        deposit_create(user=other_player, amount=1_000, idempotency_key="k")
    with pytest.raises(IdempotencyKeyReused):
        withdrawal_request(user=player, amount=1_000, idempotency_key="k")
    assert ledger_state() == before


@override_settings(CASHIER_DEPOSIT_DAILY_LIMIT=5_000)
def test_the_daily_deposit_limit_counts_the_last_24_hours(player, ledger_state):
    deposit_create(user=player, amount=3_000, idempotency_key="a")
    before = ledger_state()
    with pytest.raises(DepositLimitExceeded, match="2000 cents more"):
        deposit_create(user=player, amount=2_001, idempotency_key="b")
    assert ledger_state() == before
    deposit_create(user=player, amount=2_000, idempotency_key="c")
    assert wallet_balance(user=player) == 5_000


@override_settings(CASHIER_PAYMENT_GATEWAY="tests.cashier.test_services.DecliningGateway")
def test_a_declined_charge_credits_nothing(player, ledger_state):
    before = ledger_state()
    with pytest.raises(DepositDeclined, match="declined by the bank"):
        deposit_create(user=player, amount=1_000, idempotency_key="x")
    assert ledger_state() == before


@pytest.mark.parametrize("amount", BAD_AMOUNTS)
def test_every_service_refuses_a_bad_amount(player, table_account, fund, ledger_state, amount):
    fund(player, 10_000)
    table_buy_in(user=player, account=table_account, amount=5_000, idempotency_key="seat")
    before = ledger_state()
    calls = [
        lambda: deposit_create(user=player, amount=amount, idempotency_key="k1"),
        lambda: withdrawal_request(user=player, amount=amount, idempotency_key="k2"),
        lambda: table_buy_in(
            user=player, account=table_account, amount=amount, idempotency_key="k3"
        ),
        lambda: table_top_up(
            user=player, account=table_account, amount=amount, idempotency_key="k4"
        ),
        lambda: table_cash_out(
            user=player, account=table_account, amount=amount, idempotency_key="k5"
        ),
    ]
    if amount != 0:  # a hand without rake is fine
        calls.append(lambda: hand_rake_collect(account=table_account, amount=amount, hand_id=1))
    for call in calls:
        with pytest.raises(InvalidAmount):
            call()
    assert ledger_state() == before


def test_a_withdrawal_holds_the_amount_until_approved(player, fund):
    fund(player, 10_000)
    withdrawal = withdrawal_request(user=player, amount=4_000, idempotency_key="w")
    assert withdrawal.status == WithdrawalStatus.PENDING
    assert wallet_balance(user=player) == 6_000
    assert balance_of(AccountKind.HOLD) == 4_000

    staff = player.__class__.objects.create_user(username="cashier-staff", is_staff=True)
    paid = withdrawal_approve(withdrawal=withdrawal, decided_by=staff)
    assert paid.status == WithdrawalStatus.PAID
    assert paid.decided_by == staff
    assert paid.settle_transaction.kind == TransactionKind.WITHDRAWAL_PAID
    assert balance_of(AccountKind.HOLD) == 0
    assert balance_of(AccountKind.CLEARING) == -6_000
    assert wallet_balance(user=player) == 6_000
    # Approving again changes nothing; rejecting a paid withdrawal is refused.
    assert withdrawal_approve(withdrawal=withdrawal, decided_by=staff).pk == paid.pk
    with pytest.raises(WithdrawalNotPending):
        withdrawal_reject(withdrawal=withdrawal, decided_by=staff)
    assert ledger_consistent()


def test_rejecting_or_cancelling_a_withdrawal_releases_it(player, other_player, fund):
    fund(player, 10_000)
    rejected = withdrawal_request(user=player, amount=3_000, idempotency_key="w1")
    cancelled = withdrawal_request(user=player, amount=2_000, idempotency_key="w2")
    assert wallet_balance(user=player) == 5_000

    withdrawal_reject(withdrawal=rejected, decided_by=other_player)
    with pytest.raises(WithdrawalNotFound):
        withdrawal_cancel(withdrawal=cancelled, user=other_player)
    withdrawal_cancel(withdrawal=cancelled, user=player)
    withdrawal_cancel(withdrawal=cancelled, user=player)  # a repeat is a no-op

    assert wallet_balance(user=player) == 10_000
    assert balance_of(AccountKind.HOLD) == 0
    cancelled.refresh_from_db()
    assert cancelled.status == WithdrawalStatus.CANCELLED
    with pytest.raises(WithdrawalNotPending):
        withdrawal_approve(withdrawal=cancelled, decided_by=other_player)
    assert ledger_consistent()


def test_a_retried_withdrawal_request_returns_the_same_withdrawal(player, fund):
    fund(player, 10_000)
    first = withdrawal_request(user=player, amount=1_000, idempotency_key="w")
    again = withdrawal_request(user=player, amount=1_000, idempotency_key="w")
    assert again.pk == first.pk
    assert wallet_balance(user=player) == 9_000


def test_no_withdrawal_beyond_the_balance(player, fund, ledger_state):
    fund(player, 1_000)
    before = ledger_state()
    with pytest.raises(InsufficientFunds, match="holds 1000 cents"):
        withdrawal_request(user=player, amount=1_001, idempotency_key="w")
    assert ledger_state() == before


def test_buy_in_top_up_rake_and_cash_out(player, table_account, fund):
    fund(player, 50_000)
    table_buy_in(user=player, account=table_account, amount=20_000, idempotency_key="b")
    table_top_up(user=player, account=table_account, amount=5_000, idempotency_key="t")
    table_account.refresh_from_db()
    assert table_account.balance == 25_000
    assert wallet_balance(user=player) == 25_000

    rake = hand_rake_collect(account=table_account, amount=300, hand_id=77)
    assert rake.hand_id == 77
    assert rake.entries.get(amount=-300).account_id == table_account.pk
    assert hand_rake_collect(account=table_account, amount=300, hand_id=77).pk == rake.pk
    with pytest.raises(IdempotencyKeyReused):
        hand_rake_collect(account=table_account, amount=200, hand_id=77)
    assert hand_rake_collect(account=table_account, amount=0, hand_id=78) is None

    table_cash_out(user=player, account=table_account, amount=24_700, idempotency_key="c")
    table_account.refresh_from_db()
    assert table_account.balance == 0
    assert balance_of(AccountKind.HOUSE) == 300
    assert wallet_balance(user=player) == 49_700
    assert ledger_consistent()


@pytest.mark.parametrize("stale", ["gone", "another kind"])
def test_a_house_account_remembered_from_a_rolled_back_database_is_looked_up_again(
    player, table_account, fund, stale
):
    """The rake remembers the house's id (one query less a raked hand); an id not, or no
    longer, the house's (a test database rolled back, its ids reused) posts nothing, and
    the rake looks the house up again."""
    from cashier import services

    fund(player, 1_000)
    table_buy_in(user=player, account=table_account, amount=1_000, idempotency_key="b")
    wallet = wallet_ensure(user=player)
    wrong = LedgerAccount(id=10**12 if stale == "gone" else wallet.pk, kind=AccountKind.HOUSE)
    services._houses[connection.settings_dict["NAME"]] = wrong
    rake = hand_rake_collect(account=table_account, amount=30, hand_id=5)
    house = LedgerAccount.objects.get(kind=AccountKind.HOUSE)
    assert {(e.account_id, e.amount) for e in rake.entries.all()} == {
        (table_account.pk, -30),
        (house.pk, 30),
    }
    assert services._houses[connection.settings_dict["NAME"]].pk == house.pk
    assert wallet_balance(user=player) == 0 and house.balance == 30
    assert ledger_consistent()


def test_a_movement_naming_an_account_not_in_the_ledger_writes_nothing(player, ledger_state):
    before = ledger_state()
    house = system_account_ensure(kind=AccountKind.HOUSE)
    legs = [Leg(account=house, amount=-5), Leg(account=wallet_ensure(user=player), amount=5)]
    ghost = [legs[0], Leg(account=LedgerAccount(id=10**12, kind=AccountKind.WALLET), amount=5)]
    with pytest.raises(AccountsNotFound, match="2 accounts to post to, 1 found"):
        ledger_post(kind=TransactionKind.RAKE, legs=ghost, idempotency_key="g")
    # An account of another kind than the leg says is not the leg's account either.
    house_as_wallet = LedgerAccount(id=house.pk, kind=AccountKind.WALLET)
    with pytest.raises(AccountsNotFound):
        ledger_post(
            kind=TransactionKind.RAKE,
            legs=[Leg(account=house_as_wallet, amount=-5), legs[1]],
            idempotency_key="g",
        )
    assert ledger_state() == before
    assert not LedgerTransaction.objects.filter(idempotency_key="g").exists()


def test_table_movements_take_a_table_account_only(player, fund, ledger_state):
    fund(player, 1_000)
    wallet = wallet_ensure(user=player)
    before = ledger_state()
    with pytest.raises(ValueError, match="not a table account"):
        table_buy_in(user=player, account=wallet, amount=100, idempotency_key="w")
    with pytest.raises(ValueError, match="not a table account"):
        hand_rake_collect(account=wallet, amount=100, hand_id=9)
    with pytest.raises(ValueError, match="needs a reference"):
        table_account_ensure(reference="", name="nameless")
    assert ledger_state() == before


def test_no_buy_in_beyond_the_wallet_nor_cash_out_beyond_the_table(player, table_account, fund):
    fund(player, 1_000)
    with pytest.raises(InsufficientFunds):
        table_buy_in(user=player, account=table_account, amount=1_001, idempotency_key="b")
    table_buy_in(user=player, account=table_account, amount=1_000, idempotency_key="b2")
    with pytest.raises(InsufficientFunds):
        table_cash_out(user=player, account=table_account, amount=1_001, idempotency_key="c")
    with pytest.raises(InsufficientFunds):
        hand_rake_collect(account=table_account, amount=1_001, hand_id=5)


def test_a_movement_replayed_with_the_wallet_empty_is_answered_as_the_first_time(
    player, table_account, fund, ledger_state
):
    """Funds that fall short are a refusal only for a key not taken: a replay is answered
    as the first time (the wallet emptied by its own first request), and a refusal
    claims no key."""
    fund(player, 1_000)
    with pytest.raises(InsufficientFunds):
        table_buy_in(user=player, account=table_account, amount=1_001, idempotency_key="b")
    first = table_buy_in(user=player, account=table_account, amount=1_000, idempotency_key="b")
    assert first.created and wallet_balance(user=player) == 0
    after = ledger_state()
    replay = table_buy_in(user=player, account=table_account, amount=1_000, idempotency_key="b")
    assert not replay.created and replay.transaction.pk == first.transaction.pk
    with pytest.raises(IdempotencyKeyReused):
        table_buy_in(user=player, account=table_account, amount=999, idempotency_key="b")
    assert ledger_state() == after


# The balances are the posting's last write: a trigger that fails it fails the statement
# after the transaction row and its legs were written.
POWER_CUT = """
CREATE FUNCTION test_power_cut() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'the server lost power'; END; $$;
CREATE TRIGGER test_power_cut BEFORE UPDATE OF balance ON cashier_ledgeraccount
    FOR EACH ROW EXECUTE FUNCTION test_power_cut();
"""
POWER_BACK = "DROP TRIGGER test_power_cut ON cashier_ledgeraccount; DROP FUNCTION test_power_cut()"


@pytest.mark.django_db(transaction=True)
def test_a_failure_in_the_middle_leaves_nothing_half_done(
    player, table_account, fund, ledger_state
):
    """Outside any transaction of the caller's (autocommit), as the API's views call it:
    the posting is one statement, its own transaction."""
    fund(player, 10_000)
    before = ledger_state()
    with connection.cursor() as cursor:
        cursor.execute(POWER_CUT)
    try:
        with pytest.raises(DatabaseError, match="the server lost power"):
            table_buy_in(user=player, account=table_account, amount=4_000, idempotency_key="b")
    finally:
        with connection.cursor() as cursor:
            cursor.execute(POWER_BACK)
    assert ledger_state() == before
    assert not LedgerTransaction.objects.filter(idempotency_key="b").exists()
    table_buy_in(user=player, account=table_account, amount=4_000, idempotency_key="b")
    assert wallet_balance(user=player) == 6_000
    assert ledger_consistent()


def test_inside_the_callers_transaction_a_refusal_writes_nothing_and_it_goes_on(
    player, table_account, fund, django_assert_max_num_queries
):
    """No savepoint: the funds are checked before anything is written, in the statement
    that would write it (one query a movement, its wallet looked up apart)."""
    fund(player, 1_000)
    with transaction.atomic():
        table_buy_in(user=player, account=table_account, amount=600, idempotency_key="b1")
        with pytest.raises(InsufficientFunds), django_assert_max_num_queries(3) as queries:
            table_buy_in(user=player, account=table_account, amount=600, idempotency_key="b2")
        assert not [q for q in queries.captured_queries if "SAVEPOINT" in q["sql"]]
        table_top_up(user=player, account=table_account, amount=400, idempotency_key="b3")
    assert wallet_balance(user=player) == 0
    assert not LedgerTransaction.objects.filter(idempotency_key="b2").exists()
    assert ledger_consistent()


def test_ledger_post_refuses_unbalanced_legs(player):
    wallet = wallet_ensure(user=player)
    house = system_account_ensure(kind=AccountKind.HOUSE)
    for legs in (
        [Leg(account=wallet, amount=100)],
        [Leg(account=wallet, amount=-100), Leg(account=house, amount=99)],
        [Leg(account=wallet, amount=0), Leg(account=house, amount=0)],
        [Leg(account=wallet, amount=-1), Leg(account=wallet, amount=1)],
    ):
        with pytest.raises(UnbalancedTransaction):
            ledger_post(kind=TransactionKind.RAKE, legs=legs, idempotency_key="u")
    assert not LedgerTransaction.objects.exists()


def test_a_buy_in_costs_a_fixed_number_of_queries(
    player, table_account, fund, django_assert_num_queries
):
    fund(player, 10_000)
    # 1 wallet look-up (the caller passes the table's account) and 1 statement that locks
    # both accounts, claims the key by the insert of the transaction, and writes both
    # legs and both balances; no savepoint.
    with django_assert_num_queries(2):
        table_buy_in(user=player, account=table_account, amount=1_000, idempotency_key="b")


def test_a_movement_runs_as_a_statement_prepared_once_on_the_connection(
    player, table_account, fund, django_assert_num_queries
):
    """The movement's statement is planned once per connection (poker_room/postgres/
    prepared.py), then run by name: a second movement prepares nothing, and both post."""
    fund(player, 10_000)
    table_buy_in(user=player, account=table_account, amount=1_000, idempotency_key="b1")
    name = prepared_name(_posting_sql())
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE name = %s", [name])
        assert cursor.fetchone() == (1,)
    with django_assert_num_queries(2) as captured:
        table_buy_in(user=player, account=table_account, amount=1_000, idempotency_key="b2")
    posting = captured.captured_queries[-1]["sql"]
    assert posting.startswith(f"EXECUTE {name}(") and "PREPARE" not in posting
    assert wallet_balance(user=player) == 8_000
    assert LedgerAccount.objects.get(pk=table_account.pk).balance == 2_000
    assert ledger_consistent()


def test_a_value_too_long_for_its_column_is_refused_not_cut_short(player, fund, ledger_state):
    """A prepared statement's values are cast to their columns' types, but a text's length
    is left to the column: a memo past its 200 characters fails the movement, whole."""
    fund(player, 1_000)
    before = ledger_state()
    house = system_account_ensure(kind=AccountKind.HOUSE)
    legs = [Leg(account=wallet_ensure(user=player), amount=-5), Leg(account=house, amount=5)]
    with pytest.raises(DatabaseError, match="too long"), transaction.atomic():
        ledger_post(kind=TransactionKind.RAKE, legs=legs, idempotency_key="m", memo="x" * 201)
    assert ledger_state() == before
    posting = ledger_post(kind=TransactionKind.RAKE, legs=legs, idempotency_key="m", memo="x" * 200)
    assert posting.created and posting.transaction.memo == "x" * 200


def test_a_movements_generic_plan_finds_its_accounts_by_key(player, table_account):
    """Prepared, the movement comes to run on PostgreSQL's generic plan, made without its
    parameters: it must still find the legs' accounts through the key, not read the whole
    accounts table (one per player, and the table's) to join them to the legs. With a
    thousand accounts the statement without the ids' `= ANY` read them all, twice; a
    plan made then is kept until the table is analyzed again, while it grows."""
    LedgerAccount.objects.bulk_create(
        LedgerAccount(kind=AccountKind.TABLE, reference=f"table:plan-{n}", name=f"plan {n}")
        for n in range(1_000)
    )
    wallet = wallet_ensure(user=player)
    row = LedgerTransaction(kind=TransactionKind.BUY_IN, idempotency_key="plan")
    legs = [Leg(account=wallet, amount=-1), Leg(account=table_account, amount=1)]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE cashier_ledgeraccount")
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute(f"PREPARE plan_probe AS {numbered(_posting_sql())}")
        try:
            parameters = _posting_parameters(row, legs)
            arguments = ", ".join(["%s"] * len(parameters))
            cursor.execute(f"EXPLAIN (COSTS OFF) EXECUTE plan_probe({arguments})", parameters)
            plan = "\n".join(line for (line,) in cursor.fetchall())
        finally:
            cursor.execute("DEALLOCATE plan_probe")
    assert "Seq Scan on cashier_ledgeraccount" not in plan, plan
    assert plan.count("Index Scan using cashier_ledgeraccount_pkey") == 2, plan
