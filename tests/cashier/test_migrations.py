"""The boundary migrations keep every row: table accounts get their reference and name
(cashier 0004), and the rake accounting changes app with its rows, ids, permissions and
sequences (tables 0009, cashier 0005); tables name their accounts (tables 0019).

The test migrates its database back to before them, writes rows with the models of that
time, migrates forward again and reads the rows with today's models.
"""

import datetime

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor

from accounts.models import User
from cashier.models import AccountKind, LedgerAccount, LedgerTransaction
from cashier.selectors import wallet_entry_list
from tables.ledger import table_account_get
from tables.models import RakeContribution, RakeReport, RakeReportPlayer, RakeReportTable, Table

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("cashier", "0003_rake_accounting"), ("tables", "0008_stake_level_defaults")]
DAY = datetime.date(2026, 11, 30)


def migrate(targets=None):
    """Migrate to `targets` (every app's latest by default); the models of that state."""
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    targets = targets or latest
    executor.migrate(targets)
    ContentType.objects.clear_cache()
    moved = {app for app, _name in targets}
    nodes = [*targets, *(node for node in latest if node[0] not in moved)]
    return MigrationExecutor(connection).loader.project_state(nodes).apps


def rows_of_before(old) -> dict[str, int]:
    """A player, a table with its ledger account, a buy-in, a raked hand and its report."""
    user = old.get_model("accounts", "User").objects.create(
        username="olive", name_skeleton="olive", password="-"
    )
    stake = old.get_model("tables", "StakeLevel").objects.create(
        name="NL 1/2",
        game="holdem",
        structure="NL",
        small_blind=100,
        big_blind=200,
        small_bet=200,
        big_bet=400,
        buy_in_min=4_000,
        buy_in_max=20_000,
    )
    table = old.get_model("tables", "Table").objects.create(name="Oak", stake_level=stake)
    empty = old.get_model("tables", "Table").objects.create(name="Elm", stake_level=stake)
    hand = old.get_model("tables", "Hand").objects.create(
        table=table, number=1, status="finished", config={}, state={}, button=1, rake=30
    )
    Account = old.get_model("cashier", "LedgerAccount")
    Txn = old.get_model("cashier", "LedgerTransaction")
    Entry = old.get_model("cashier", "LedgerEntry")
    with transaction.atomic():  # the legs must balance by the end of each transaction
        clearing = Account.objects.create(kind="clearing", balance=-1_000)
        wallet = Account.objects.create(kind="wallet", user=user, balance=600)
        at_table = Account.objects.create(kind="table", table=table, balance=400)
        deposit = Txn.objects.create(kind="deposit", idempotency_key="d", user=user)
        Entry.objects.create(transaction=deposit, account=clearing, amount=-1_000)
        Entry.objects.create(transaction=deposit, account=wallet, amount=1_000)
        buy_in = Txn.objects.create(kind="buy_in", idempotency_key="b", user=user, table=table)
        Entry.objects.create(transaction=buy_in, account=wallet, amount=-400)
        Entry.objects.create(transaction=buy_in, account=at_table, amount=400)
    share = old.get_model("cashier", "RakeContribution").objects.create(
        hand=hand, player=user, seat=1, amount=30
    )
    report = old.get_model("cashier", "RakeReport").objects.create(
        date=DAY, hands=1, raked_hands=1, rake=30
    )
    old.get_model("cashier", "RakeReportTable").objects.create(
        report=report, table=table, stake_level=stake, hands=1, raked_hands=1, rake=30
    )
    old.get_model("cashier", "RakeReportPlayer").objects.create(
        report=report, player=user, raked_hands=1, rake=30
    )
    view = Permission.objects.get(content_type__app_label="cashier", codename="view_rakereport")
    return {
        "user": user.pk,
        "table": table.pk,
        "empty table": empty.pk,
        "hand": hand.pk,
        "account": at_table.pk,
        "share": share.pk,
        "report": report.pk,
        "permission": view.pk,
    }


def test_table_accounts_and_rake_rows_survive_the_boundary_migrations():
    try:
        ids = rows_of_before(migrate(BEFORE))
    finally:
        migrate()

    table = Table.objects.get(pk=ids["table"])
    account = table_account_get(table=table)
    assert account is not None and account.pk == ids["account"]
    # tables 0019: the table row names its account.
    assert table.ledger_account_id == account.pk
    assert Table.objects.get(pk=ids["empty table"]).ledger_account_id is None
    assert (account.kind, account.reference, account.name, account.balance) == (
        AccountKind.TABLE,
        f"table:{table.pk}",
        "Oak",
        400,
    )
    assert LedgerAccount.objects.count() == 3 and LedgerTransaction.objects.count() == 2
    movements = list(wallet_entry_list(user=User.objects.get(pk=ids["user"])))
    assert [(m.amount, m.place) for m in movements] == [(-400, "Oak"), (1_000, None)]

    share = RakeContribution.objects.get(pk=ids["share"])
    assert (share.hand_id, share.player_id, share.seat, share.amount) == (
        ids["hand"],
        ids["user"],
        1,
        30,
    )
    report = RakeReport.objects.get(pk=ids["report"])
    assert (report.date, report.rake) == (DAY, 30)
    assert RakeReportTable.objects.get(report=report).table_id == table.pk
    assert RakeReportPlayer.objects.get(report=report).player_id == ids["user"]
    # Staff granted a permission on the reports keep it: it followed its model.
    assert Permission.objects.get(pk=ids["permission"]).content_type.app_label == "tables"
    # The renamed tables' id sequences go on where they were.
    later = RakeReport.objects.create(
        date=DAY + datetime.timedelta(days=1), hands=0, raked_hands=0, rake=0
    )
    assert later.pk > report.pk
