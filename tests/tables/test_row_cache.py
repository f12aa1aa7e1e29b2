"""tables/row_cache.py: a command on a copy of the table's rows sends one query, and the
copy is never trusted: a row anyone wrote since fails the check under the table's lock,
and the command runs again on the rows read, with the outcome the rows read give.

These tests commit (a copy is kept only for a transaction of the command's own), and
follow the table as a web process reading its feed does."""

import asyncio
import json
import random
import threading

import psycopg
import pytest
from django.db import OperationalError, connection, transaction
from django.test.utils import CaptureQueriesContext

from poker_room.postgres import prepared
from tables import feed, row_cache, rows
from tables.engine.state import HandState
from tables.exceptions import NotYourTurn
from tables.models import AutoTopUp, Hand, PlayerSettings, Seat, StakeLevel, Table
from tables.services import play
from tables.services.command import HAND_FIELDS_CHANGING, TableCommand, table_command
from tests.kit import (
    StakeLevelFactory,
    act_passively,
    current,
    deal,
    play_hand,
    rolled_back,
    table_with_players,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def followed():
    """A dealt table of three, followed as a web process that reads its feed does."""
    table, users = table_with_players(StakeLevelFactory(), 3)
    row_cache.follow(table.pk)
    deal(table)
    yield table, {n: user for n, user in enumerate(users, start=1)}
    row_cache.unfollow(table.pk)


def kept(table: Table) -> rows.RowsCopy | None:
    copy = row_cache._copies.get(table.pk)
    return None if copy is None else copy.rows


def fresh(table: Table) -> rows.RowsCopy:
    """The rows as the database has them (read as a command reads them; not counted)."""
    with transaction.atomic():
        return rows.rows_copy(*_read(table.pk, lock_timeout_ms=5000))


_read = rows.table_locked


def act(table: Table, players: dict, *, queries: bool = False) -> list[str]:
    """The player to act checks or calls; `queries`: the statements the action sent."""
    _, state = current(table)
    kind = "check" if state.legal_actions().can_check else "call"
    with CaptureQueriesContext(connection) as captured:
        play.hand_act(table_id=table.pk, user=players[state.actor], kind=kind)
    # Django logs the transaction's BEGIN and COMMIT whether or not psycopg sent them.
    return [q["sql"] for q in captured.captured_queries if q["sql"] not in ("BEGIN", "COMMIT")]


@pytest.fixture
def reads(monkeypatch) -> list[int]:
    """The tables read under their lock (`rows.table_locked`), one entry a read."""
    read, calls = rows.table_locked, []

    def counted(table_id, **kwargs):
        calls.append(table_id)
        return read(table_id, **kwargs)

    monkeypatch.setattr(rows, "table_locked", counted)
    return calls


def statements_sent(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if q["sql"] not in ("BEGIN", "COMMIT")]


def test_an_action_on_a_copy_is_one_query_and_leaves_a_copy_equal_to_the_rows(followed, reads):
    table, players = followed
    act(table, players)  # reads the rows, and leaves a copy of them
    assert reads == [table.pk]
    assert kept(table) == fresh(table)
    (query,) = act(table, players)
    assert reads == [table.pk]  # not read again
    # The lock and the check of the versions come first, in the writes' query.
    lock, check = (prepared.prepared_name(sql) for sql in rows._locked_check_sql())
    hand = prepared.prepared_name(rows._update_sql(Hand, HAND_FIELDS_CHANGING, True)[0])
    order = [query.index(f"EXECUTE {name}") for name in (lock, check, hand)]
    assert order == sorted(order)
    assert kept(table) == fresh(table)


def test_hands_played_on_copies_leave_copies_equal_to_the_rows_after_every_action(
    followed, monkeypatch
):
    """Whole hands, raises and folds, settled and dealt again: after every action the copy
    kept, if any, is the rows as the database has them, their versions included."""
    table, _ = followed
    acts, copies = play.hand_act, []

    def checked(**kwargs):
        result = acts(**kwargs)
        copy = kept(table)
        assert copy is None or copy == fresh(table)
        copies.append(copy is not None)
        return result

    monkeypatch.setattr(play, "hand_act", checked)
    act_passively(table)
    rng = random.Random(7)
    for _ in range(4):
        play_hand(table, rng)
    assert sum(copies) > len(copies) / 2  # most actions left one


@pytest.mark.parametrize(
    "writer",
    [
        "admin edits the table",
        "admin edits the stake level",
        "another process writes a seat",
        "a player changes a setting",
        "a player orders auto top-ups",
        "another process writes the hand",
    ],
)
def test_a_row_written_by_anyone_since_fails_the_check_and_the_command_reads_it(
    followed, reads, writer
):
    table, players = followed
    act(table, players)
    assert kept(table) is not None
    hand, state = current(table)
    actor = Seat.objects.get(table=table, number=state.actor)
    if writer == "admin edits the table":
        Table.objects.filter(pk=table.pk).update(name="renamed")
    elif writer == "admin edits the stake level":
        StakeLevel.objects.filter(pk=table.stake_level_id).update(name="renamed")
    elif writer == "another process writes a seat":
        # What the action resets: on a copy of the seat from before, it would not.
        Seat.objects.filter(pk=actor.pk).update(consecutive_timeouts=1)
    elif writer == "a player changes a setting":
        players[state.actor].auto_muck = not players[state.actor].auto_muck
        players[state.actor].save(update_fields=["auto_muck"])
    elif writer == "a player orders auto top-ups":
        PlayerSettings.objects.create(user=players[state.actor], auto_top_up=AutoTopUp.MAX)
    else:
        Hand.objects.filter(pk=hand.pk).update(turn_bonus_used=True)
    act(table, players)
    assert reads == [table.pk, table.pk]  # the copy was tried, failed its check, and read
    assert Seat.objects.get(pk=actor.pk).consecutive_timeouts == 0
    assert kept(table) == fresh(table)


def test_a_copy_older_than_what_the_feed_heard_is_not_tried(followed, reads):
    table, players = followed
    act(table, players)
    version = Table.objects.get(pk=table.pk).event_seq
    row_cache.heard(table.pk, version + 1)  # another process's command, heard
    sent = act(table, players)
    assert reads == [table.pk, table.pk]
    check = prepared.prepared_name(rows._versions_check_sql())
    assert not any(check in sql for sql in sent)  # not tried
    assert kept(table) == fresh(table)


def test_an_out_of_date_copy_never_decides_either_way(followed, reads):
    """A copy from before another process's action: a refusal made on it is made again on
    the rows read (the action was the player's to make), and an action it allows is
    refused once the check finds the rows moved on."""
    table, players = followed
    act(table, players)
    older = row_cache._copies[table.pk]
    state = HandState.from_dict(json.loads(older.rows.hand[_HAND_FIELDS.index("state")]))
    first, kind = state.actor, "check" if state.legal_actions().can_check else "call"
    act(table, players)  # the copy of it is replaced ...
    # ... and the older one put back, as a process that missed the action would hold it.
    row_cache._copies[table.pk] = older
    turn = current(table)[0].turn_version
    act(table, players)  # the next player acts: refused on the copy ...
    assert current(table)[0].turn_version == turn + 1  # ... and carried out on the rows read
    assert reads == [table.pk] * 2
    while current(table)[1].actor == first:
        act(table, players)
    turn, read = current(table)[0].turn_version, len(reads)
    row_cache._copies[table.pk] = older
    with pytest.raises(NotYourTurn):  # carried out on the copy, refused on the rows read
        play.hand_act(table_id=table.pk, user=players[first], kind=kind)
    assert current(table)[0].turn_version == turn  # nothing was written
    assert len(reads) == read + 1


_HAND_FIELDS = [f.attname for f in Hand._meta.concrete_fields]


@table_command
def _rename_unsaved(cmd: TableCommand) -> None:
    cmd.table.name = "in memory only"


@table_command
def _rename_saved(cmd: TableCommand) -> None:
    cmd.table.name = "saved"
    cmd.save_table("name")


@table_command
def _rename_with_a_query(cmd: TableCommand) -> None:
    Table.objects.filter(pk=cmd.table.pk).update(name="by a query")


@table_command
def _seats_read_by_a_prepared_statement(cmd: TableCommand) -> list[Seat]:
    return rows.seats_with_players(cmd.table)


def test_a_copy_is_kept_only_of_rows_the_command_left_as_its_instances_hold_them(followed, reads):
    table, players = followed
    act(table, players)
    _rename_unsaved(table_id=table.pk)  # on the copy: changed and not written
    assert kept(table) is None
    assert Table.objects.get(pk=table.pk).name == table.name
    _rename_saved(table_id=table.pk)
    assert kept(table) == fresh(table)
    assert Table.objects.get(pk=table.pk).name == "saved"
    with CaptureQueriesContext(connection) as queries:
        _rename_with_a_query(table_id=table.pk)  # on the copy: checked before the query
    check = prepared.prepared_name(rows._versions_check_sql())
    sent = statements_sent(queries)
    assert check in sent[0] and "UPDATE" in sent[1]
    assert kept(table) is None  # the query's writes are not in the instances
    assert Table.objects.get(pk=table.pk).name == "by a query"


def test_a_copy_is_checked_before_a_query_of_prepared_statements_is_made_up(followed):
    """The check goes first in a query of its own, before the body's query of prepared
    statements works out what its connection has prepared: sent from inside that query's
    send, it left the record of the connection's statements wrong, and a later check
    prepared its statements a second time ("already exists")."""
    table, players = followed
    for _ in range(3):
        act(table, players)  # leaves a copy
        with CaptureQueriesContext(connection) as queries:
            assert len(_seats_read_by_a_prepared_statement(table_id=table.pk)) == 3
        check = prepared.prepared_name(rows._versions_check_sql())
        seats = prepared.prepared_name(rows._seats_sql())
        sent = statements_sent(queries)
        assert len(sent) == 2 and check in sent[0] and f"EXECUTE {seats}" in sent[1]
        act(table, players)  # reads, then acts on its copy: the check is sent again
        act(table, players)


def test_no_copy_in_a_transaction_not_the_commands_own_or_of_a_table_not_followed(followed):
    table, players = followed
    with rolled_back():
        act(table, players)
        assert kept(table) is None
    row_cache.unfollow(table.pk)
    try:
        act(table, players)
        assert kept(table) is None
    finally:
        row_cache.follow(table.pk)


def test_the_versions_written_in_python_are_those_the_check_finds(followed):
    table, _ = followed
    with transaction.atomic():
        versions = rows.table_locked(table.pk, lock_timeout_ms=5000).versions
        rows.check_run(rows.check_statements(table.pk, versions, lock_timeout_ms=5000))
    assert versions.hand is not None and len(versions.seats) == 3
    changed = versions._replace(hand=(versions.hand[0], "1"))
    with pytest.raises(rows.RowsChanged), transaction.atomic():
        rows.check_run(rows.check_statements(table.pk, changed, lock_timeout_ms=5000))
    empty = Table.objects.create(name="empty", stake_level=table.stake_level, seats=6)
    with transaction.atomic():
        versions = rows.table_locked(empty.pk, lock_timeout_ms=5000).versions
        assert versions.seats == () and versions.hand is None
        rows.check_run(rows.check_statements(empty.pk, versions, lock_timeout_ms=5000))
    Table.objects.filter(pk=empty.pk).delete()
    with pytest.raises(rows.RowsChanged), transaction.atomic():
        rows.check_run(rows.check_statements(empty.pk, versions, lock_timeout_ms=5000))


def test_a_state_kept_in_a_copy_is_the_one_the_database_gives_back(followed):
    """The copy holds the hand's state as the command wrote it, as text; read back,
    PostgreSQL's JSON gives the same value (no tuple read back as a list, no key as a
    string), and each command on the copy gets a state of its own."""
    table, players = followed
    act(table, players)
    hand = Hand.objects.get(pk=current(table)[0].pk)
    state = json.loads(kept(table).hand[_HAND_FIELDS.index("state")])
    assert state == hand.state
    assert HandState.from_dict(state).to_dict() == hand.state
    copy = kept(table)
    assert rows.locked_of(copy).hand.state is not rows.locked_of(copy).hand.state


@table_command
def _state_changed_in_place(cmd: TableCommand) -> None:
    # A body that edits the JSON value it was given, and does not save it.
    cmd.hand.state["to_match"] += 1


def test_a_json_value_changed_in_place_and_not_written_leaves_no_copy(followed):
    table, players = followed
    act(table, players)
    assert kept(table) is not None
    _state_changed_in_place(table_id=table.pk)
    assert kept(table) is None


def test_a_row_written_meanwhile_without_the_tables_lock_is_not_merged_into_a_copy(followed):
    """Someone writes a seat without the table's lock (an operator in psql), and commits
    while a command on a copy waits for that seat's row to update it: merged with the
    command's writes, the row would hold both, at the command's version, and the copy
    only the command's. The update is for the version read only: the command runs again
    on the rows read, and the copy it leaves holds the operator's write."""
    table, players = followed
    act(table, players)
    assert kept(table) is not None
    user = players[1]
    seat = Seat.objects.get(table=table, player=user)
    settings_ = connection.settings_dict
    with psycopg.connect(
        host=settings_["HOST"] or "127.0.0.1",
        port=settings_["PORT"] or 5432,
        user=settings_["USER"],
        dbname=settings_["NAME"],
    ) as operator:
        operator.execute("UPDATE tables_seat SET leave_after_hand = true WHERE id = %s", [seat.pk])
        threading.Timer(0.5, operator.commit).start()
        play.seat_disconnected(table_id=table.pk, user=user)  # waits for the seat's row
    assert Seat.objects.get(pk=seat.pk).leave_after_hand is True
    assert kept(table) == fresh(table)


CALLS: list[bool] = []


@table_command
def _outage(cmd: TableCommand) -> None:
    CALLS.append(cmd.checked)
    raise OperationalError("the database is away")


def test_an_outage_on_a_copy_is_not_tried_again(followed):
    """It would wait as long again, on the thread that serves every table's commands."""
    table, players = followed
    act(table, players)
    CALLS.clear()
    with pytest.raises(OperationalError):
        _outage(table_id=table.pk)
    assert CALLS == [False]


async def test_the_feed_says_which_tables_are_followed_and_what_was_heard():
    table_id = 987_321
    inbox = feed.new_inbox()
    await feed.table_feed().join(table_id, inbox)
    try:
        assert row_cache.following(table_id)
        await asyncio.to_thread(
            feed.publish, table_id, [{"version": 41, "public": "{}", "private": {}}]
        )
        async with asyncio.timeout(5):
            await inbox.get()
        assert row_cache._heard[table_id] == 41
    finally:
        await feed.table_feed().leave(table_id, inbox)
    assert not row_cache.following(table_id) and table_id not in row_cache._heard
