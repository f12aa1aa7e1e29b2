"""Each table's account in the chip ledger, which knows it only by an opaque reference.

The cashier imports nothing of the tables app (``accounts <- cashier <- tables``): its
table movements (`cashier.services.table_buy_in`, `table_top_up`, `table_cash_out`,
`hand_rake_collect`) take the table's `LedgerAccount`, and this module is where the
tables layer finds it: the account of kind ``table`` whose reference is
``table:<table id>`` (unique among table accounts, a database constraint of the
cashier), named after the table when it was opened. The table row names it too
(`Table.ledger_account`, set when it is opened), and is read with every command.
"""

from django.db import DEFAULT_DB_ALIAS

from cashier import services as cashier
from cashier.models import AccountKind, LedgerAccount
from tables.models import Table


def table_ledger_reference(*, table_id: int) -> str:
    """The reference the ledger knows this table's account by."""
    return f"table:{table_id}"


def table_account_ensure(*, table: Table) -> LedgerAccount:
    """The table's ledger account, opened on first use.

    Named by the table row: no query. The account's other columns are read if asked
    for, as `QuerySet.only` defers them: its balance, and its name (a buy-in's or a
    cash-out's memo reads it; the rake's does not)."""
    named = _named_account(table)
    if named is not None:
        return named
    reference = table_ledger_reference(table_id=table.pk)
    account = cashier.table_account_ensure(reference=reference, name=table.name)
    # The row is the command's, locked; not a field of its writes: it never changes again.
    Table.objects.filter(pk=table.pk).update(ledger_account=account)
    table.ledger_account = account
    return account


def table_account_get(*, table: Table) -> LedgerAccount | None:
    """The table's ledger account, or None before any chips went to the table (named by
    the table row, as in `table_account_ensure`, or else looked up)."""
    named = _named_account(table)
    if named is not None:
        return named
    reference = table_ledger_reference(table_id=table.pk)
    return LedgerAccount.objects.filter(kind=AccountKind.TABLE, reference=reference).first()


def _named_account(table: Table) -> LedgerAccount | None:
    """The account the table row names, its other columns deferred; None if it names none."""
    if table.ledger_account_id is None:
        return None
    return LedgerAccount.from_db(
        DEFAULT_DB_ALIAS,
        ["id", "kind", "reference"],
        [table.ledger_account_id, AccountKind.TABLE, table_ledger_reference(table_id=table.pk)],
    )
