"""tables/rows.py: the table command's hand-written statements read and write exactly what
the ORM's own would, on the real PostgreSQL."""

import threading
from collections.abc import Iterator

import psycopg
import psycopg.sql
import pytest
import redis
from django.conf import settings
from django.db import (
    DatabaseError,
    DataError,
    IntegrityError,
    OperationalError,
    connection,
    connections,
    models,
    transaction,
)
from django.db.models.signals import post_init
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext, isolate_apps

from cashier.audit import ledger_audit
from cashier.models import AccountKind, LedgerEntry, LedgerTransaction
from cashier.services import system_account_ensure, table_top_up
from poker_room.postgres import prepared
from tables import feed, rows
from tables.engine.state import HandState
from tables.events import messages_from_group
from tables.exceptions import TableBusy, TableError
from tables.ledger import table_account_ensure
from tables.messages import TableStatusChanged
from tables.models import (
    AutoTopUp,
    Hand,
    HandEvent,
    HandPlayer,
    HandStatus,
    PlayerSettings,
    RakeContribution,
    Seat,
    Table,
)
from tables.services import play, seating
from tables.services.command import TableCommand, room_command, table_command
from tables.services.hands import hand_start_due
from tests.conftest import database_url_for
from tests.kit import (
    StakeLevelFactory,
    TableFactory,
    UserFactory,
    current,
    deal,
    funded_player,
    play_passively,
    sit,
    table_with_players,
    wallet,
)

pytestmark = pytest.mark.django_db


def fields_of(instance) -> dict:
    """Every concrete field's value, as the instance holds it."""
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


@pytest.fixture
def dealt():
    table, users = table_with_players(StakeLevelFactory(), 3)
    hand = deal(table)
    assert hand is not None
    return Table.objects.get(pk=table.pk), users, hand


def test_the_locked_table_and_its_stake_level_are_the_orms(dealt):
    table, _, _ = dealt
    with transaction.atomic():
        locked = rows.table_locked(table.pk, lock_timeout_ms=5000).table
    orm = Table.objects.select_related("stake_level").get(pk=table.pk)
    assert fields_of(locked) == fields_of(orm)
    assert fields_of(locked.stake_level) == fields_of(orm.stake_level)
    assert not locked._state.adding and locked._state.db == "default"


def test_the_lock_reads_the_seats_and_the_hand_as_their_own_statements_do_in_one_query(dealt):
    table, _, hand = dealt
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        locked = rows.table_locked(table.pk, lock_timeout_ms=5000)
    assert len(queries) == 1
    assert [fields_of(s) for s in locked.seats] == [
        fields_of(s) for s in rows.seats_with_players(table)
    ]
    assert [fields_of(s.player) for s in locked.seats] == [
        fields_of(s.player) for s in rows.seats_with_players(table)
    ]
    assert all(s.table is locked.table for s in locked.seats)
    assert fields_of(locked.hand) == fields_of(rows.hand_in_progress(table)) != {}
    assert locked.hand.pk == hand.pk and locked.hand.table is locked.table
    empty = TableFactory()
    with transaction.atomic():
        assert rows.table_locked(empty.pk, lock_timeout_ms=5000)[1:] == ([], None, {})


def test_the_lock_reads_the_seated_players_auto_top_up_orders_and_only_those(dealt):
    """A settled hand carries the orders out without a query of its own; a player with
    the order off, or no settings at all, has none; nor has anyone not seated here."""
    table, users, _ = dealt
    PlayerSettings.objects.create(user=users[0], auto_top_up=AutoTopUp.MAX)
    PlayerSettings.objects.create(user=users[1], auto_top_up=AutoTopUp.BELOW, auto_top_up_below=30)
    PlayerSettings.objects.create(user=UserFactory(), auto_top_up=AutoTopUp.MAX)
    with transaction.atomic():
        orders = rows.table_locked(table.pk, lock_timeout_ms=5000).top_up_orders
    assert set(orders) == {users[0].pk, users[1].pk}
    for user_id, order in orders.items():
        assert fields_of(order) == fields_of(PlayerSettings.objects.get(user_id=user_id))
    PlayerSettings.objects.filter(user=users[0]).update(auto_top_up=AutoTopUp.OFF)
    with transaction.atomic():
        assert set(rows.table_locked(table.pk, lock_timeout_ms=5000).top_up_orders) == {users[1].pk}


@pytest.mark.parametrize("table_id", ["x", None, 2**63, -(2**64), 10**30, 3.5j, [1]])
def test_an_id_that_names_no_table_finds_none_and_leaves_the_transaction_usable(table_id):
    with transaction.atomic():
        assert rows.table_locked(table_id, lock_timeout_ms=5000) is None
        assert Table.objects.count() >= 0  # the transaction was not aborted


def test_a_table_id_as_a_string_of_digits_finds_the_table_as_the_orm_did(dealt):
    table, _, _ = dealt
    with transaction.atomic():
        assert rows.table_locked(str(table.pk), lock_timeout_ms=5000).table.pk == table.pk
        assert rows.table_locked(table.pk + 10_000, lock_timeout_ms=5000) is None


@pytest.mark.django_db(transaction=True)
def test_the_lock_keeps_a_second_command_out_until_the_first_commits():
    table = TableFactory()
    refused = []

    def second() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '200ms'")
                rows.table_locked(table.pk, lock_timeout_ms=5000)
        except OperationalError as exc:
            refused.append(exc)
        finally:
            connections.close_all()

    with transaction.atomic():
        rows.table_locked(table.pk, lock_timeout_ms=5000)
        thread = threading.Thread(target=second)
        thread.start()
        thread.join()
    assert len(refused) == 1 and "lock timeout" in str(refused[0])


def test_seats_come_by_number_with_their_players_as_the_orms(dealt):
    table, users, _ = dealt
    seats = rows.seats_with_players(table)
    orm = list(
        Seat.objects.filter(table=table)
        .select_related("player")
        .only(*("player__" + name for name in rows.SEAT_PLAYER_FIELDS))
        .order_by("number")
    )
    assert [fields_of(s) for s in seats] == [fields_of(s) for s in orm]

    # The players' columns a command reads, and only those: the rest are deferred, as
    # the ORM's `only` defers them, and read on demand.
    def read(seats: list[Seat]) -> list[dict]:
        return [{name: getattr(s.player, name) for name in rows.SEAT_PLAYER_FIELDS} for s in seats]

    with CaptureQueriesContext(connection) as queries:
        ours = read(seats)
    assert ours == read(orm)
    assert not queries.captured_queries
    assert all(s.player.get_deferred_fields() == orm[0].player.get_deferred_fields() for s in seats)
    assert "password" in seats[0].player.get_deferred_fields()
    assert [fields_of(s.player) for s in seats] == [fields_of(u) for u in users]
    assert [s.player for s in seats] == users
    # The advance action is JSON: read through the field's converter, as the ORM does.
    assert all(s.advance is None or isinstance(s.advance, dict) for s in seats)


def test_instances_hold_what_from_db_gives_them_and_nothing_more(dealt):
    table, _, hand = dealt
    with transaction.atomic():
        locked = rows.table_locked(table.pk, lock_timeout_ms=5000)
    orm_seats = list(
        Seat.objects.filter(table=table)
        .select_related("player")
        .only(
            *(f.name for f in Seat._meta.concrete_fields),
            *("player__" + name for name in rows.SEAT_PLAYER_FIELDS),
        )
        .order_by("number")
    )
    pairs = [
        (locked.table, Table.objects.get(pk=table.pk)),
        (locked.table.stake_level, table.stake_level),
        (locked.hand, Hand.objects.get(pk=hand.pk)),
        *zip(locked.seats, orm_seats, strict=True),
        *((ours.player, orm.player) for ours, orm in zip(locked.seats, orm_seats, strict=True)),
    ]
    for ours, orm in pairs:
        assert type(ours) is type(orm)
        assert {k: v for k, v in vars(ours).items() if k != "_state"} == {
            k: v for k, v in vars(orm).items() if k != "_state"
        }
        assert (ours._state.adding, ours._state.db) == (False, "default")
        assert ours.get_deferred_fields() == orm.get_deferred_fields()
    # An ordinary instance: saved, it writes its row back.
    locked.table.name = "renamed"
    locked.table.save(update_fields=["name"])
    assert Table.objects.get(pk=table.pk).name == "renamed"


def test_a_model_with_init_signal_receivers_is_made_by_its_init(dealt):
    table, _, _ = dealt
    made = []

    def receiver(sender, instance, **kwargs):
        made.append(instance)

    post_init.connect(receiver, sender=Table)
    try:
        with transaction.atomic():
            locked = rows.table_locked(table.pk, lock_timeout_ms=5000)
    finally:
        post_init.disconnect(receiver, sender=Table)
    assert [instance is locked.table for instance in made] == [True]


@isolate_apps("tables")
def test_a_model_with_its_own_init_setattr_or_field_setter_is_made_by_from_db():
    class Mixin:
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)

    class InTables:
        app_label = "tables"

    class WithMixin(models.Model, Mixin):  # noqa: DJ008 (a test's model, never shown)
        Meta = InTables

    class WithSetattr(models.Model):  # noqa: DJ008
        Meta = InTables

        def __setattr__(self, name, value):
            super().__setattr__(name, value)

    class WithFile(models.Model):  # noqa: DJ008
        Meta = InTables
        upload = models.FileField()

    class Plain(models.Model):  # noqa: DJ008
        Meta = InTables
        table = models.ForeignKey(Table, on_delete=models.CASCADE)

    assert [rows._Columns(m).plain for m in (WithMixin, WithSetattr, WithFile, Plain)] == [
        False,
        False,
        False,
        True,
    ]
    assert all(rows._Columns(m).plain for m in (Table, Seat, Hand, HandPlayer))


def test_the_hand_in_progress_is_the_orms_with_its_state_parsed(dealt):
    table, _, hand = dealt
    found = rows.hand_in_progress(table)
    orm = Hand.objects.get(pk=hand.pk)
    assert fields_of(found) == fields_of(orm)
    assert HandState.from_dict(found.state).to_dict() == orm.state
    Hand.objects.filter(pk=hand.pk).update(status=HandStatus.FINISHED)
    assert rows.hand_in_progress(table) is None


def test_the_hands_players_by_seat_are_its_hand_player_rows(dealt):
    _, users, hand = dealt
    orm = dict(HandPlayer.objects.filter(hand=hand).values_list("seat", "user_id"))
    assert rows.hand_players_by_seat(hand) == orm
    assert sorted(orm.values()) == sorted(u.pk for u in users)
    assert rows.hand_players_by_seat(Hand(pk=hand.pk + 10_000)) == {}


def test_an_update_writes_the_fields_named_and_no_other(dealt):
    table, _, hand = dealt
    stale = Hand.objects.get(pk=hand.pk)
    hand.turn_version += 7
    hand.rake = 12_345  # changed, not named: stays as stored
    writes = rows.Writes()
    writes.update(hand, ["turn_version"])
    writes.send()
    stored = Hand.objects.get(pk=hand.pk)
    assert stored.turn_version == stale.turn_version + 7
    assert stored.rake == stale.rake
    # JSON goes through its field, as Model.save sends it.
    seat = rows.seats_with_players(table)[0]
    seat.advance = {"action": "check_fold", "nested": [1, "two"]}
    writes = rows.Writes()
    writes.update(seat, ["advance"])
    writes.send()
    assert Seat.objects.get(pk=seat.pk).advance == {"action": "check_fold", "nested": [1, "two"]}


@pytest.mark.parametrize("plans", ["force_custom_plan", "force_generic_plan"])
def test_an_update_of_a_row_that_is_gone_fails_as_model_save_does(dealt, plans):
    """Checked by the update itself, whatever plan the server makes of it (a generic
    plan must not fold the refusal into a constant)."""
    _, _, hand = dealt
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('plan_cache_mode', %s, true)", [plans])
    ghost = Hand.objects.get(pk=hand.pk)
    ghost.pk = hand.pk + 10**9  # no such row
    writes = rows.Writes()
    writes.update(ghost, ["rake"])
    # It fails in the database (its transaction aborted), so that nothing after it runs.
    with pytest.raises(DatabaseError, match="did not affect any rows"), transaction.atomic():
        writes.send()


def test_writes_leave_the_commit_to_a_block_that_is_not_the_outermost(dealt):
    """A COMMIT inside a savepoint (here the test's own transaction's) would end the
    transaction under the blocks around it: the writes leave it to the blocks, as
    without `commit`, and a block rolled back undoes them."""
    _, _, hand = dealt
    stored = Hand.objects.get(pk=hand.pk).rake
    hand.rake = stored + 4_321
    writes = rows.Writes()
    writes.update(hand, ["rake"])
    with pytest.raises(RuntimeError, match="rolls back"), transaction.atomic():
        writes.send(commit=True)
        assert connection.connection.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        assert Hand.objects.get(pk=hand.pk).rake == stored + 4_321
        raise RuntimeError("the block rolls back")
    assert Hand.objects.get(pk=hand.pk).rake == stored


def test_events_are_inserted_as_bulk_create_would(dealt):
    _, _, hand = dealt
    before = HandEvent.objects.filter(hand=hand).count()
    events = [
        HandEvent(hand=hand, seq=1000 + k, type="probe", data={"k": k, "nested": [k]})
        for k in range(3)
    ]
    writes = rows.Writes()
    writes.insert(events)
    writes.send()
    stored = list(HandEvent.objects.filter(hand=hand, type="probe").order_by("seq"))
    assert HandEvent.objects.filter(hand=hand).count() == before + 3
    assert [(e.seq, e.data) for e in stored] == [
        (1000 + k, {"k": k, "nested": [k]}) for k in range(3)
    ]
    assert all(e.created_at is not None for e in stored)
    assert model_to_dict(stored[0], exclude=["id", "created_at"]) == {
        "hand": hand.pk,
        "seq": 1000,
        "type": "probe",
        "data": {"k": 0, "nested": [0]},
    }


@pytest.mark.parametrize("count", [1, 2, 9])
def test_inserted_values_arrive_as_given_whatever_they_hold(dealt, count):
    """Rows of any number go as one statement, prepared and run with values bound on the
    client: whatever a value holds (quotes, braces, commas, a backslash, the word NULL,
    None), it is stored as given."""
    _, _, hand = dealt
    awkward = ['"', "{}", "a,b", "back\\slash", "NULL", "", "ünï ☃", "'quoted'); --", None]
    events = [
        HandEvent(hand=hand, seq=3000 + k, type="probe", data={"text": awkward[k], "k": k})
        for k in range(count)
    ]
    writes = rows.Writes()
    writes.insert(events)
    assert [sql for sql, _ in writes._statements] == [rows._insert_sql(HandEvent, count, False)]
    writes.send()
    stored = HandEvent.objects.filter(hand=hand, type="probe").order_by("seq")
    assert [e.data for e in stored] == [{"text": awkward[k], "k": k} for k in range(count)]


def test_a_hand_and_its_players_are_inserted_with_their_ids_as_save_would(dealt):
    """A deal writes its hand with the id taken from the sequence beforehand; the ORM's
    own inserts go on from the ids taken so (no id given twice)."""
    table, users, _ = dealt
    numbers = rows.hand_numbers_next(table.pk)
    assert numbers.number == 2  # the fixture's hand is the first
    hand = Hand(
        id=numbers.id,
        table=table,
        number=numbers.number,
        state={"probe": [1]},
        button=1,
        deck_commitment="c" * 64,
        salt="s" * 64,
        turn_version=numbers.last_turn,
        status=HandStatus.FINISHED,
    )
    players = [
        HandPlayer(hand=hand, seat=n + 1, user_id=user.id, screen_name=user.username)
        for n, user in enumerate(users[:2])
    ]
    writes = rows.Writes()
    writes.insert([hand], with_pk=True)
    writes.insert(players)
    writes.send()
    stored = Hand.objects.get(pk=numbers.id)
    assert fields_of(stored) == {**fields_of(hand), "started_at": stored.started_at}
    assert stored.started_at is not None and not hand._state.adding
    assert rows.hand_players_by_seat(stored) == {1: users[0].id, 2: users[1].id}
    later = Hand.objects.create(
        table=table, number=3, state={}, button=1, deck_commitment="", salt="", status="finished"
    )
    assert later.pk > numbers.id
    following = rows.hand_numbers_next(table.pk)
    assert following.id > later.pk and following.number == 4


def test_a_deal_writes_its_hand_players_events_seats_and_table_in_one_query(dealt):
    table, _, hand = dealt
    play_passively(table)
    Table.objects.filter(pk=table.pk).update(next_hand_at=None)
    with CaptureQueriesContext(connection) as queries:
        dealt_now = hand_start_due(table_id=table.id)
    assert dealt_now is not None and dealt_now.number == hand.number + 1
    # In the test's transaction the command runs in a savepoint: its queries are between.
    assert queries[0]["sql"].startswith("SAVEPOINT") and queries[-1]["sql"].startswith("RELEASE")
    lock, numbers, writes = (q["sql"] for q in queries[1:-1])
    assert prepared.prepared_name(rows._table_locked_sql()) in lock
    assert prepared.prepared_name(rows._hand_numbers_next_sql()) in numbers
    stored = Hand.objects.get(pk=dealt_now.pk)
    assert fields_of(stored) == fields_of(dealt_now)
    assert HandState.from_dict(stored.state).hand_id == f"{table.id}-{stored.number}"
    assert rows.hand_players_by_seat(stored) == {
        s.number: s.player_id for s in Seat.objects.filter(table=table)
    }
    assert HandEvent.objects.filter(hand=stored).count() == stored.events_logged > 0
    seated = len(rows.hand_players_by_seat(stored))
    assert prepared.prepared_name(rows._insert_sql(Hand, 1, True)) in writes
    assert prepared.prepared_name(rows._insert_sql(HandPlayer, seated, False)) in writes


@pytest.mark.parametrize("stacks", [(100, 100), (100, 5_000), (5_000, 100)])
def test_a_hand_dealt_and_settled_by_one_command_is_written_whole(stacks):
    """All in from the blinds: the deal's command settles the hand too, posting its rake
    under the id of a hand whose row it writes at its end, with the hand's players and
    rake shares (finer point 17)."""
    stake = StakeLevelFactory(buy_in_min=100, buy_in_max=10_000)  # 1/2: 100 and 200
    table, _ = table_with_players(stake, count=0)
    users = [funded_player(), funded_player()]
    for number, (user, stack) in enumerate(zip(users, stacks, strict=True), start=1):
        sit(table, user, number, buy_in=stack)
    hand = deal(table)
    assert hand is not None
    stored = Hand.objects.get(pk=hand.pk)
    assert stored.status == HandStatus.FINISHED and stored.turn_deadline is None
    assert stored.started_at <= stored.ended_at
    assert HandEvent.objects.filter(hand=stored).count() == stored.events_logged > 0
    assert rows.hand_players_by_seat(stored) == {1: users[0].id, 2: users[1].id}
    assert stored.rake > 0
    shares = RakeContribution.objects.filter(hand=stored)
    assert sum(share.amount for share in shares) == stored.rake
    assert {share.player_id for share in shares} <= {users[0].id, users[1].id}
    (rake,) = LedgerTransaction.objects.filter(hand_id=stored.pk)
    assert rake.idempotency_key == f"hand:{stored.pk}:rake"
    assert rake.created_at >= stored.started_at


def test_a_commands_writes_go_in_one_query_and_one_that_fails_undoes_them_all(dealt):
    """Hand, events and table in one round trip, in order; a row gone in the middle fails
    the whole (the command's transaction rolls back what ran before it)."""
    table, _, hand = dealt
    hand.rake = 777
    table.event_seq += 3
    writes = rows.Writes()
    writes.update(hand, ["rake"])
    writes.insert([HandEvent(hand=hand, seq=2000, type="probe", data={})])
    writes.update(table, ["event_seq"])
    with CaptureQueriesContext(connection) as queries:
        writes.send()
    assert len(queries) == 1
    assert Hand.objects.get(pk=hand.pk).rake == 777
    assert HandEvent.objects.filter(hand=hand, seq=2000).exists()
    assert Table.objects.get(pk=table.pk).event_seq == table.event_seq

    ghost = Hand.objects.get(pk=hand.pk)
    ghost.pk += 10**9
    hand.rake, table.event_seq = 1, table.event_seq + 1
    writes = rows.Writes()
    writes.update(hand, ["rake"])
    writes.update(ghost, ["rake"])
    writes.update(table, ["event_seq"])
    with pytest.raises(DatabaseError, match="did not affect any rows"), transaction.atomic():
        writes.send()
    assert Hand.objects.get(pk=hand.pk).rake == 777
    assert Table.objects.get(pk=table.pk).event_seq == table.event_seq - 1


def prepared_on_server() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements")
        return {name for (name,) in cursor.fetchall()}


def as_a_new_session() -> None:
    """This connection as a new one: nothing prepared on the server, nor known here."""
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
        prepared._prepared.pop(cursor.connection, None)


def test_each_statement_is_prepared_once_on_a_connection_and_run_by_name(dealt):
    table, _, _ = dealt
    as_a_new_session()
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        rows.table_locked(table.pk, lock_timeout_ms=5000)
        rows.table_locked(table.pk, lock_timeout_ms=5000)
    first, second = (q["sql"] for q in queries)
    assert first.count("PREPARE ") == 3 and first.count("EXECUTE ") == 3
    assert "PREPARE " not in second and second.count("EXECUTE ") == 3
    # The lock's timeout comes first, as written: a PREPARE waits for locks too.
    assert first.startswith(rows._LOCK_TIMEOUT_SQL.replace("%s", "'5000'"))
    names = {prepared.prepared_name(sql) for sql, _ in rows._locked_sql(table.pk)}
    assert names <= prepared_on_server()


def test_statements_gone_from_the_server_fail_one_query_and_are_then_prepared_again(dealt):
    """The room never drops them (no DISCARD, no pooler in transaction mode), but were
    they gone, the connection would not stay broken."""
    table, _, _ = dealt
    with transaction.atomic():
        rows.table_locked(table.pk, lock_timeout_ms=5000)
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    with pytest.raises(DatabaseError, match="does not exist"), transaction.atomic():
        rows.table_locked(table.pk, lock_timeout_ms=5000)
    with transaction.atomic():
        assert rows.table_locked(table.pk, lock_timeout_ms=5000).table.pk == table.pk


def test_a_query_that_fails_after_preparing_leaves_the_connection_preparing_afresh(dealt):
    """PREPARE outlives a rollback: what a failed query prepared is still there, and must
    not be prepared again under the same name (it would fail: already exists)."""
    table, _, _ = dealt
    divide = ("SELECT 1 / %s", [0])
    lock = rows._locked_sql(table.pk)
    for _ in range(2):
        with (
            pytest.raises(DatabaseError, match="division by zero"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            prepared.execute(cursor, [*lock, divide])
    with transaction.atomic():
        assert rows.table_locked(table.pk, lock_timeout_ms=5000).table.pk == table.pk
        assert rows.table_locked(table.pk, lock_timeout_ms=5000).table.pk == table.pk


def test_a_placeholder_is_numbered_in_order_and_a_percent_sign_is_refused():
    assert prepared.numbered("SELECT %s, %s WHERE x = %s") == "SELECT $1, $2 WHERE x = $3"
    for sql in ("SELECT '100%%'", "SELECT $1"):
        with pytest.raises(ValueError, match="cannot number"):
            prepared.numbered(sql)


def test_statements_past_the_limit_run_as_written_and_a_statement_without_parameters_runs(
    dealt, monkeypatch
):
    table, _, _ = dealt
    as_a_new_session()
    monkeypatch.setattr(prepared, "PREPARED_AT_MOST", 1)
    statements = [(rows._seats_sql(), [table.pk]), ("SELECT 41 + 1", [])]
    with CaptureQueriesContext(connection) as queries, connection.cursor() as cursor:
        prepared.execute(cursor, statements)
        seat_rows = cursor.fetchall()
        cursor.nextset()
        assert cursor.fetchone() == (42,)
    assert len(seat_rows) == 3
    assert queries[0]["sql"].endswith("SELECT 41 + 1")  # as written: past the limit
    monkeypatch.setattr(prepared, "PREPARED_AT_MOST", 48)
    with CaptureQueriesContext(connection) as queries, connection.cursor() as cursor:
        prepared.execute(cursor, statements)
        cursor.nextset()
        assert cursor.fetchone() == (42,)
    assert queries[0]["sql"].endswith(f"EXECUTE {prepared.prepared_name('SELECT 41 + 1')}")


@table_command
def command_noop(cmd: TableCommand) -> int:
    return cmd.table.pk


@pytest.fixture
def other_session() -> Iterator[psycopg.Connection]:
    with psycopg.connect(database_url_for(settings.DATABASES["default"])) as other:
        yield other


def in_a_thread(call) -> list:  # type: ignore[no-untyped-def]
    """What `call` returned or raised, run on a thread of its own (a connection of its own)."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as exc:
            outcome.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "the command waited past its lock timeout"
    return outcome


@pytest.mark.django_db(transaction=True)
def test_a_connection_preparing_its_statements_waits_for_a_lock_no_longer_than_a_command_does(
    settings, other_session
):
    """Parsing a PREPARE takes the locks of the tables it names: behind a migration's lock
    on the tables (or a queue behind a stuck transaction), a connection that must prepare
    is refused busy after the lock timeout, as one that has prepared is."""
    settings.TABLE_LOCK_TIMEOUT_MS = 200
    table = TableFactory()

    def prepare_then_command() -> int:
        as_a_new_session()
        return command_noop(table_id=table.pk)

    other_session.execute(f'LOCK TABLE "{Table._meta.db_table}" IN ACCESS EXCLUSIVE MODE')
    (outcome,) = in_a_thread(prepare_then_command)
    other_session.rollback()
    assert isinstance(outcome, TableBusy)
    assert in_a_thread(lambda: command_noop(table_id=table.pk)) == [table.pk]


@pytest.mark.django_db(transaction=True)
def test_a_column_changed_under_a_prepared_statement_fails_one_command_as_an_outage(
    other_session,
):
    """A migration that changes the type of a column a prepared statement returns: that
    statement fails ("cached plan must not change result type"). The command fails as in
    an outage (not counted on the table, which would pause it), and every connection of
    the process prepares afresh."""
    table = TableFactory()
    column = f'ALTER TABLE "{Table._meta.db_table}" ALTER COLUMN "name" TYPE varchar(%s)'
    length = Table._meta.get_field("name").max_length
    assert command_noop(table_id=table.pk) == table.pk  # prepared
    generation = prepared._generation
    other_session.execute(column % (length + 20))
    other_session.commit()
    try:
        with pytest.raises(OperationalError, match="no longer fits the schema"):
            command_noop(table_id=table.pk)
        assert prepared._generation == generation + 1
        assert command_noop(table_id=table.pk) == table.pk
        stored = Table.objects.get(pk=table.pk)
        assert (stored.failure_count, stored.paused_reason) == (0, "")
    finally:
        other_session.execute(column % length)
        other_session.commit()
        prepared._generation += 1  # the change undone: the next tests' connections prepare afresh


@pytest.mark.django_db(transaction=True)
def test_a_command_begins_its_transaction_in_its_first_query_and_commits_it_in_its_last(
    tmp_path,
):
    """psycopg (pinned) sends a BEGIN of its own before a transaction's first query, and
    a COMMIT of its own at its end; a table command's lock read carries the BEGIN
    (`prepared._transaction_begun_by_query`) and its writes the COMMIT (`rows.Writes.send`):
    an action is two queries. Followed on the wire: the protocol's messages, as libpq
    traces them."""
    table, _ = table_with_players(StakeLevelFactory(), 3)
    deal(table)
    hand, state = current(table)
    turn = hand.turn_version
    kind = "check" if state.legal_actions().can_check else "call"
    actor = Seat.objects.get(table=table, number=state.actor).player
    with connection.cursor():
        pass  # connected: the trace follows this session
    pgconn = connection.connection.pgconn
    trace = tmp_path / "trace"
    with trace.open("w") as out:
        pgconn.trace(out.fileno())
        pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            play.hand_act(table_id=table.id, user=actor, kind=kind)
        finally:
            pgconn.untrace()
    lines = trace.read_text().splitlines()
    # Each query's first line (a query's own lines follow its message's).
    queries = [n for n, line in enumerate(lines) if "\tQuery\t" in line]
    assert len(queries) == 2  # the lock's read, the writes
    lock, writes = queries
    assert lines[lock].endswith('"BEGIN;')
    assert lines[lock + 1].startswith("SELECT set_config('lock_timeout'")
    # The writes' query ends with the COMMIT; nothing is sent after it.
    answer = next(n for n in range(writes, len(lines)) if lines[n].startswith("B\t"))
    assert lines[answer - 1] == 'COMMIT"'
    assert not any(line.startswith("F\t") for line in lines[answer:])
    assert lines[-2:] == ['B\t11\tCommandComplete\t "COMMIT"', "B\t5\tReadyForQuery\t I"]
    hand.refresh_from_db()
    assert hand.turn_version == turn + 1
    # A command refused under the lock rolls its transaction back, as psycopg's would be.
    _, state = current(table)
    bystander = next(s.player for s in Seat.objects.filter(table=table) if s.number != state.actor)
    with pytest.raises(TableError):
        play.hand_act(table_id=table.id, user=bystander, kind="fold")
    assert connection.connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    hand.refresh_from_db()
    assert hand.turn_version == turn + 1


def _no_transaction_left(other_session: psycopg.Connection) -> None:
    """Django, psycopg and the server all out of the failed command's transaction."""
    assert not connection.in_atomic_block and connection.get_autocommit()
    if connection.connection is None or connection.connection.closed:
        return  # closed: the server ended its transaction with its session
    assert connection.connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    # This session's, as the server sees it (the suite's timer loop, say, may be between
    # two queries of a command of its own meanwhile).
    state = other_session.execute(
        "SELECT state FROM pg_stat_activity WHERE pid = %s",
        [connection.connection.info.backend_pid],
    ).fetchone()
    assert state is not None and not state[0].startswith("idle in transaction"), state


def _act_and_audit(table: Table) -> None:
    """The table's next act goes through, and the ledger balances."""
    hand, state = current(table)
    turn = hand.turn_version
    actor = Seat.objects.get(table=table, number=state.actor).player
    kind = "check" if state.legal_actions().can_check else "call"
    play.hand_act(table_id=table.id, user=actor, kind=kind)
    hand.refresh_from_db()
    assert hand.turn_version == turn + 1
    assert ledger_audit().ok


@pytest.mark.django_db(transaction=True)
def test_after_the_query_that_began_it_the_transaction_is_psycopgs_own():
    """Out of autocommit for the rest of it (commit, rollback and savepoints as usual)."""
    table = TableFactory()
    with transaction.atomic():
        assert rows.table_locked(table.pk, lock_timeout_ms=5000) is not None
        session = connection.connection
        assert session.autocommit is False
        assert session.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    assert session.autocommit is True


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("failure", ["lock_timeout", "refused_setting", "backend_terminated"])
def test_a_first_query_that_fails_leaves_no_transaction_and_moves_nothing(
    failure, settings, other_session
):
    """The query carrying the BEGIN fails after it ran (the lock not free in time; a
    setting the server refuses; the session killed while it waits): the command fails,
    nothing moved, no transaction is left open, and the table plays on."""
    table, _ = table_with_players(StakeLevelFactory(), 3)
    deal(table)
    newcomer = funded_player()
    before = (LedgerTransaction.objects.count(), wallet(newcomer))
    connection.ensure_connection()
    backend = connection.connection.info.backend_pid
    if failure == "refused_setting":
        settings.TABLE_LOCK_TIMEOUT_MS = -5
    else:
        settings.TABLE_LOCK_TIMEOUT_MS = 300 if failure == "lock_timeout" else 10_000
        hold = psycopg.sql.SQL("SELECT 1 FROM {} WHERE id = %s FOR UPDATE")
        other_session.execute(hold.format(psycopg.sql.Identifier(Table._meta.db_table)), [table.pk])
    if failure == "backend_terminated":

        def terminate() -> None:
            with psycopg.connect(database_url_for(settings.DATABASES["default"])) as killer:
                killer.execute("SELECT pg_terminate_backend(%s)", [backend])

        threading.Timer(0.5, terminate).start()
    with pytest.raises((TableBusy, DatabaseError)):
        seating.seat_take(
            table_id=table.id,
            user=newcomer,
            seat_number=4,
            buy_in=table.stake_level.buy_in_max,
            idempotency_key="ws:x:sit:first-query",
        )
    other_session.rollback()
    settings.TABLE_LOCK_TIMEOUT_MS = 5000
    _no_transaction_left(other_session)
    assert (LedgerTransaction.objects.count(), wallet(newcomer)) == before
    assert not Seat.objects.filter(player=newcomer).exists()
    _act_and_audit(table)


def _feed_listener(table: Table) -> "redis.client.PubSub":
    """A subscriber to the table's feed, as a web process with viewers of it is."""
    listener = redis.Redis.from_url(settings.REDIS_URL).pubsub(ignore_subscribe_messages=True)
    listener.subscribe(feed.feed_channel(table.id))
    assert listener.get_message(timeout=1) is None  # the subscription's confirmation
    return listener


def _versions_heard(listener: "redis.client.PubSub", table: Table) -> list[int]:
    """The versions published to the table since the last call, as a web process reads
    them."""
    heard = []
    while (message := listener.get_message(timeout=0.5)) is not None:
        group = feed.group_message(message["data"], table.id)
        heard += [sent.version for sent in messages_from_group(group)]
    return heard


def _top_up_and_write(cmd: TableCommand, *, user, spoil) -> None:  # type: ignore[no-untyped-def]
    """A command that moves money, changes a seat and the table and publishes: `spoil`
    breaks it after all that, where only the writes' query can find out."""
    table_top_up(
        user=user,
        account=table_account_ensure(table=cmd.table),
        amount=100,
        idempotency_key=f"test:{cmd.table.pk}:top-up:{spoil}",
    )
    seat = cmd.seats[0]
    seat.stack += 100
    cmd.save_seat(seat, "stack")
    cmd.emit(TableStatusChanged(status=cmd.table.status))
    spoil(cmd)


def _a_seat_gone(cmd: TableCommand) -> None:
    # A seat the command changes, whose row is not there (a later update of the same
    # query, the table's, must not run either).
    ghost = Seat.objects.get(pk=cmd.seats[1].pk)
    ghost.pk += 10**9
    cmd.save_seat(ghost, "stack")


def _ledger_unbalanced(cmd: TableCommand) -> None:
    # One leg: PostgreSQL's deferred check refuses it at the COMMIT, which the writes' query
    # carries.
    posted = LedgerTransaction.objects.create(
        kind="deposit", idempotency_key=f"test:{cmd.table.pk}:lone-leg", fingerprint="x"
    )
    house = system_account_ensure(kind=AccountKind.HOUSE)
    LedgerEntry.objects.create(transaction=posted, account=house, amount=5)


def _a_stack_out_of_range(cmd: TableCommand) -> None:
    # A value the database refuses (past a bigint): a DataError of its own, not a row gone.
    seat = cmd.seats[1]
    seat.stack = 2**63
    cmd.save_seat(seat, "stack")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("whose", ["player", "room"], ids=["a player's command", "the room's work"])
@pytest.mark.parametrize(
    ("spoil", "as_prepared", "error", "refusal"),
    [
        (_a_seat_gone, True, DatabaseError, "did not affect any rows"),
        (_a_seat_gone, False, DatabaseError, "did not affect any rows"),
        (_ledger_unbalanced, True, IntegrityError, "unbalanced"),
        (_a_stack_out_of_range, True, DataError, "out of range"),
    ],
    ids=["seat-gone", "seat-gone-as-written", "ledger-unbalanced", "value-refused"],
)
def test_writes_that_fail_at_or_before_their_commit_commit_move_and_publish_nothing(
    spoil, as_prepared, error, refusal, whose, other_session, monkeypatch
):
    """The COMMIT rides on the writes' query: a row found gone by an update of that query
    (a prepared statement or one run as written), the ledger's deferred check failing
    at the COMMIT, or a value the database refuses, fails the command as a failed commit
    did. Nothing is committed, no chip moves, no message goes out, no transaction is
    left open, and the table plays on. The failure counts toward pausing the table
    only when the writes were the room's own work (issue #46: a player's command that
    fails is that command's alone)."""
    command = {"player": table_command, "room": room_command}[whose](_top_up_and_write)
    counted = 1 if whose == "room" else 0
    table, _ = table_with_players(StakeLevelFactory(), 3)
    deal(table)
    user = funded_player()
    table.refresh_from_db()
    if not as_prepared:
        as_a_new_session()
        monkeypatch.setattr(prepared, "PREPARED_AT_MOST", 0)
    seats = {seat.pk: seat.stack for seat in Seat.objects.filter(table=table)}
    before = (LedgerTransaction.objects.count(), LedgerEntry.objects.count(), wallet(user))
    listener = _feed_listener(table)
    with pytest.raises(error, match=refusal) as failure:
        command(table_id=table.id, user=user, spoil=spoil)
    if error is DatabaseError:
        assert type(failure.value) is DatabaseError  # mapped, as Model.save raises it
    assert "send" in [entry.name for entry in failure.traceback]  # failed in the writes
    _no_transaction_left(other_session)
    assert (LedgerTransaction.objects.count(), LedgerEntry.objects.count(), wallet(user)) == before
    assert {seat.pk: seat.stack for seat in Seat.objects.filter(table=table)} == seats
    stored = Table.objects.get(pk=table.pk)
    assert (stored.event_seq, stored.failure_count) == (table.event_seq, counted)
    assert _versions_heard(listener, table) == []
    _act_and_audit(table)
    # The act's COMMIT: its messages published once, numbered on; the connection is back
    # in autocommit with no transaction open.
    acted = Table.objects.get(pk=table.pk).event_seq
    assert _versions_heard(listener, table) == list(range(table.event_seq + 1, acted + 1))
    _no_transaction_left(other_session)
    listener.close()
