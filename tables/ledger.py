"""Each table's account in the chip ledger, which knows it only by an opaque reference.

The cashier imports nothing of the tables app (``accounts <- cashier <- tables``): its
table movements (`cashier.services.table_buy_in`, `table_top_up`, `table_cash_out`,
`hand_rake_collect`) take the table's `LedgerAccount`, and this module is where the
tables layer finds it: the account of kind ``table`` whose reference is
``table:<table id>`` (unique among table accounts, a database constraint of the
cashier), named after the table when it was opened.
"""

from cashier import services as cashier
from cashier.models import AccountKind, LedgerAccount
from tables.models import Table


def table_ledger_reference(*, table_id: int) -> str:
    """The reference the ledger knows this table's account by."""
    return f"table:{table_id}"


def table_account_ensure(*, table: Table) -> LedgerAccount:
    """The table's ledger account, opened on first use."""
    return cashier.table_account_ensure(
        reference=table_ledger_reference(table_id=table.pk), name=table.name
    )


def table_account_get(*, table: Table) -> LedgerAccount | None:
    """The table's ledger account, or None before any chips went to the table."""
    reference = table_ledger_reference(table_id=table.pk)
    return LedgerAccount.objects.filter(kind=AccountKind.TABLE, reference=reference).first()
