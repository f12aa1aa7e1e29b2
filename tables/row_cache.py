"""A web process's copies of the rows its table commands left, so that its next command
on a table can skip the lock's read (issue #15).

Every table command reads the table under its lock, with its seats, players and hand in
progress (tables/rows.py, `table_locked`): a round trip of its own, about a third of
PostgreSQL's CPU for an action and a quarter of the process's (bench/queries.py). A
command that ends with nothing written but what its instances hold leaves a copy of
those rows here (`rows.RowsCopy`, with each row's version). The next command on that
table in this process starts from the copy, and checks it in the same query as its
writes: that query first locks the table row and fails unless every row read still has
the version copied (`rows.check_statements`). One round trip where there were two. If
the command needs the database before its writes (a chip movement, say), the check runs
first, on its own (tables/services/command.py).

The copy is never trusted. A row written by anyone since (another process's command, an
admin, a player's settings) has a new version, the check fails, nothing is written,
and the command runs again from a fresh read. The database decides; this module only
guesses when a copy is worth trying:

* only for tables whose feed this process reads (tables/feed.py), which says when the
  table moved on: a copy older than the newest message heard is out of date, and not
  tried (a player acts once their process has shown them the previous action, so with
  several web processes most out-of-date copies are known as such before they are
  tried);
* at most `MAX_TABLES` copies, none older than `MAX_AGE` seconds;
* each copy is taken by one command (a thread's), and put back by it once committed.

Processes without a feed (the timer loop, Celery workers) never keep copies.
"""

import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # the feed imports this module, before Django's models are ready
    from tables.rows import RowsCopy

MAX_TABLES = 2000
# A copy is checked against versions that are transaction ids; far within their reuse.
MAX_AGE = 600.0


class _Copy(NamedTuple):
    rows: "RowsCopy"
    event_seq: int  # the table's stream version when the copy was made
    made: float  # monotonic


_lock = threading.Lock()
_copies: dict[int, _Copy] = {}  # by table id, oldest first
_followed: Counter[int] = Counter()  # table id -> this process's feeds reading it
_heard: dict[int, int] = {}  # table id -> the newest stream version its feed delivered


def following(table_id: object) -> bool:
    """Whether this process reads the table's feed: only then are copies kept."""
    return bool(_followed.get(table_id))  # type: ignore[call-overload]


def take(table_id: int) -> "RowsCopy | None":
    """The copy of the table's rows, if one is kept and not known to be out of date; it is
    no longer kept (a command that commits puts its own back)."""
    with _lock:
        copy = _copies.pop(table_id, None)
        if copy is None or not _current(table_id, copy.event_seq):
            return None
        if time.monotonic() - copy.made > MAX_AGE:
            return None
        return copy.rows


def put(table_id: int, rows: "RowsCopy", *, event_seq: int) -> None:
    """Keep the rows a committed command left (its table's stream at `event_seq`)."""
    with _lock:
        if not _followed.get(table_id) or not _current(table_id, event_seq):
            return
        _copies.pop(table_id, None)
        _copies[table_id] = _Copy(rows, event_seq, time.monotonic())
        while len(_copies) > MAX_TABLES:
            del _copies[next(iter(_copies))]


def _current(table_id: int, event_seq: int) -> bool:
    return event_seq >= _heard.get(table_id, 0)


def heard(table_id: int, version: int) -> None:
    """The table's feed delivered its stream's message `version`."""
    if version > _heard.get(table_id, 0):
        with _lock:
            if version > _heard.get(table_id, 0):
                _heard[table_id] = version


def follow(table_id: int) -> None:
    """A feed of this process started reading the table's stream."""
    with _lock:
        _followed[table_id] += 1


def unfollow(table_id: int) -> None:
    """A feed of this process stopped reading the table's stream."""
    with _lock:
        _followed[table_id] -= 1
        if _followed[table_id] <= 0:
            del _followed[table_id]
            _copies.pop(table_id, None)
            _heard.pop(table_id, None)


def forget() -> None:
    """Drop every copy: the feed lost its connection, and may not hear what moved on."""
    with _lock:
        _copies.clear()
