"""Taking a table's lock: the one writer per table (STYLE §4)."""

from tables.exceptions import TableNotFound
from tables.models import Table


def table_lock(*, table_id: int) -> Table:
    """Lock and return the table row; the caller must be inside a transaction."""
    try:
        return (
            Table.objects.select_for_update(no_key=True, of=("self",))
            .select_related("stake_level")
            .get(pk=table_id)
        )
    except (Table.DoesNotExist, ValueError, TypeError):
        raise TableNotFound(f"There is no table {table_id}.") from None
