"""Statements prepared on the server, once per connection, run by name: several in one query.

PostgreSQL plans a statement every time it is sent as text; prepared, it is planned once
per connection (a generic plan, or a custom one while those come out cheaper) and each
run only binds its parameters. For the room's hot statements that planning was about
half of PostgreSQL's CPU for a table command's read under its lock (bench/prepared.py),
and about half of a chip movement's (`cashier.services._posting_sql`, a statement of
six parts; bench/prepared.py measures both).

`execute` sends a list of statements in one query (client-side binding, Django's way
with psycopg 3: one round trip for all of them), each as `EXECUTE name(...)` of a
statement prepared on that connection, preparing in the same query those it has not
prepared yet. The tables' rows (tables/rows.py) and the cashier's postings use it.
Prepared statements live in the server's session, so the room needs connections of its
own (PostgreSQL directly, or a pooler in session mode, never one in transaction mode).
A statement's parameters must have types PostgreSQL can infer where they stand (a
column compared, a value inserted, or a cast written in the SQL).
"""

import contextlib
import functools
import hashlib
import re
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg.errors
from django.db import OperationalError

# At most this many statements are prepared on a connection; any more run as written. Each
# holds its plan in the server's memory for the connection's life, and the statements
# vary (an update's fields, an insert's number of rows): the common ones come first.
PREPARED_AT_MOST = 48

# What each connection has prepared: (generation, names); None: not known (after a query
# that failed), so its next query starts afresh.
_prepared: "weakref.WeakKeyDictionary[Any, tuple[int, set[str]] | None]" = (
    weakref.WeakKeyDictionary()
)
# Raised when a prepared statement no longer fits the schema (a migration changed a column
# it returns): every connection of the process then prepares afresh, not each after a
# failure of its own.
_generation = 0


def execute(
    cursor: Any,
    statements: Sequence[tuple[str, Sequence[Any]]],
    *,
    first: tuple[str, Sequence[Any]] | None = None,
    last: str | None = None,
) -> None:
    """Run `statements` (SQL with %s placeholders, and their parameters), in order, in one
    query, each as a statement prepared on the connection; the cursor is left at the
    first one's result, as `execute` leaves it.

    `first` runs before anything else, as written: the lock's timeout, which must hold
    before a PREPARE, whose parsing waits for the locks of the tables it names. A
    statement not yet prepared on this connection is prepared in the same query, before
    the statements run. After a query that failed, what the connection has is not known
    (PREPARE is not undone by a rollback; a statement may be gone from the server), and
    its next query drops them all and prepares afresh. A statement that no longer fits
    the schema fails its command as an outage would (an `OperationalError`, not the
    table's fault), and every connection prepares afresh. A query that is its
    transaction's first begins it, ahead of all that (`_transaction_begun_by_query`).
    `last`, a statement without parameters, runs after everything else (the COMMIT of
    `Writes.send`; PostgreSQL cannot prepare a COMMIT)."""
    global _generation
    connection_ = cursor.connection  # psycopg's, the server session's
    generation = _generation
    entry = _prepared.get(connection_, (generation, set()))
    preparing: list[str] = []
    if entry is None or entry[0] != generation:
        preparing.append("DEALLOCATE ALL")
        known: set[str] = set()
    else:
        known = set(entry[1])  # the connection's own only once the query has run
    head, values = ([], []) if first is None else ([first[0]], list(first[1]))
    begins = _begins_transaction(connection_)
    if begins:
        head.insert(0, connection_._get_tx_start_command().decode())
    runs = []
    for sql, params in statements:
        name = prepared_name(sql)
        if name not in known and len(known) < PREPARED_AT_MOST:
            preparing.append(f"PREPARE {name} AS {numbered(sql)}")
            known.add(name)
        if name in known:
            arguments = f"({', '.join(['%s'] * len(params))})" if params else ""
            runs.append(f"EXECUTE {name}{arguments}")
        else:
            runs.append(sql)
        values.extend(params)
    try:
        with _transaction_begun_by_query(connection_, begins):
            tail = [] if last is None else [last]
            cursor.execute(";\n".join(head + preparing + runs + tail), values)
    except BaseException as exc:  # interrupted too: what ran of the query is not known
        _prepared[connection_] = None
        if isinstance(exc, Exception) and _no_longer_fits(exc):
            _generation += 1
            raise OperationalError(
                f"A prepared statement no longer fits the schema ({exc}); the room's "
                "connections prepare their statements again."
            ) from exc
        raise
    _prepared[connection_] = (generation, known)
    for _ in range(len(head) + len(preparing)):
        cursor.nextset()


def _begins_transaction(connection_: Any) -> bool:
    """Whether this query is the first of a transaction (one not in autocommit mode, with
    none open on the server yet): psycopg would send its BEGIN on its own first."""
    return (
        not connection_.autocommit
        and connection_.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    )


@contextlib.contextmanager
def _transaction_begun_by_query(connection_: Any, begins: bool) -> Iterator[None]:
    """While the query that begins the transaction itself runs, keep psycopg from sending
    its BEGIN first, as a round trip of its own: a table command's first statement is
    the lock's read, and that round trip was one in five of every command's (PostgreSQL's
    and the process's CPU, and the database thread's time waiting). psycopg sends it when
    a query starts while the connection is out of autocommit and the server has no
    transaction open; with the flag set for the query, it leaves it to the query, whose
    first statement is that BEGIN (`_get_tx_start_command`, with the connection's
    isolation level). The server's transaction status then says the rest, as for a
    transaction psycopg began (commit, rollback). A query that fails before its BEGIN runs
    (a value psycopg refuses, SQL the server cannot parse) ran nothing, and leaves no
    transaction open, where psycopg's BEGIN would have left an aborted one: the command
    fails either way. tests/tables/test_rows.py follows the protocol's messages to hold
    psycopg (pinned) to this, and interrupts the query in the ways a command can fail."""
    if not begins:
        yield
        return
    try:
        connection_._autocommit = True
        yield
    finally:
        connection_._autocommit = False


def _no_longer_fits(exc: Exception) -> bool:
    cause = exc.__cause__
    return isinstance(cause, psycopg.errors.InvalidSqlStatementName) or (
        isinstance(cause, psycopg.errors.FeatureNotSupported) and "cached plan" in str(cause)
    )


@functools.cache
def prepared_name(sql: str) -> str:
    # From the text: the same in every thread and connection, with no registry to share.
    return "prepared_" + hashlib.blake2b(sql.encode(), digest_size=10).hexdigest()


@functools.cache
def numbered(sql: str) -> str:
    """`sql` with its %s placeholders as PostgreSQL's numbered parameters."""
    if "%%" in sql or "$" in sql:
        raise ValueError(f"cannot number the parameters of {sql!r}")
    numbers = iter(range(1, sql.count("%s") + 1))
    return re.sub("%s", lambda _: f"${next(numbers)}", sql)
