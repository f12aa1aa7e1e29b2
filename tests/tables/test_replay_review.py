"""Review of issue #12, findings 1 and 2: replayed and hostile keys at the tables.

An adversarial pass over `seat_take` / `seat_top_up` replays and the namespaced client
keys, as an attacker and a clumsy user would try them: the same key at once from
several threads (real PostgreSQL, committed transactions), across two tables, across
REST and the WebSocket, across sit and top-up, replayed with another amount or seat,
after a hand changed the stack, after sit-out and sit-in, after top-up, leave and sit
again; unicode, blank and over-long keys. Each test pins what must hold: a key moves
chips at most once, a replay is answered as the first time or refused with
`idempotency_key_reused`, and the ledger audit (run after every test of this folder)
stays clean.
"""

from collections.abc import Callable

import pytest
from channels.db import database_sync_to_async as sync_to_async

from cashier.models import LedgerTransaction, TransactionKind
from tables.exceptions import TableError
from tables.models import Seat, SeatStatus, TableStatus
from tables.services import play, seating
from tables.services.admin import table_status_set
from tests.concurrency import run_together
from tests.kit import StakeLevelFactory, TableFactory, api_for, current, deal, funded_player, wallet
from tests.tables.test_consumers import connect_as

BUY_IN = 10_000


def sit(table, user, number=1, buy_in=BUY_IN, key="k"):
    return seating.seat_take(
        table_id=table.id, user=user, seat_number=number, buy_in=buy_in, idempotency_key=key
    )


def top_up(table, user, amount=1_000, key="t"):
    return seating.seat_top_up(table_id=table.id, user=user, amount=amount, idempotency_key=key)


def code_of(call: Callable[[], object]) -> str:
    with pytest.raises(TableError) as refusal:
        call()
    return refusal.value.code


def movements(user, kind) -> int:
    return LedgerTransaction.objects.filter(user=user, kind=kind).count()


def post(client, url, data=None, key="replayed"):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return client.post(url, data or {}, format="json", **headers)


# --- the same key at once, from several connections (committed, real locks) ------------

THREADS = 6


@pytest.mark.django_db(transaction=True)
def test_one_sit_key_sent_at_once_from_six_connections_seats_once_and_all_get_that_seat():
    table = TableFactory(seats=6)
    alice = funded_player()
    results = run_together([lambda: sit(table, alice, number=2) for _ in range(THREADS)])
    assert all(isinstance(r, Seat) for r in results), results
    assert {r.pk for r in results} == {Seat.objects.get(table=table).pk}
    assert movements(alice, TransactionKind.BUY_IN) == 1
    assert wallet(alice) == 100_000 - BUY_IN


@pytest.mark.django_db(transaction=True)
def test_one_sit_key_sent_at_once_to_two_tables_seats_at_one_and_refuses_the_other():
    tables = [TableFactory(seats=6), TableFactory(seats=6)]
    alice = funded_player()
    results = run_together([lambda t=t: sit(t, alice) for t in tables for _ in range(3)])
    seats = [r for r in results if isinstance(r, Seat)]
    refused = [r for r in results if isinstance(r, TableError)]
    assert len(seats) + len(refused) == 6, results
    assert {r.code for r in refused} == {"idempotency_key_reused"}, results
    assert len({s.table_id for s in seats}) == 1  # all seated answers name one seat
    assert Seat.objects.filter(player=alice).count() == 1
    assert movements(alice, TransactionKind.BUY_IN) == 1
    assert wallet(alice) == 100_000 - BUY_IN


@pytest.mark.django_db(transaction=True)
def test_one_top_up_key_sent_at_once_from_six_connections_adds_the_chips_once():
    table = TableFactory(seats=6)
    alice = funded_player()
    sit(table, alice)
    results = run_together([lambda: top_up(table, alice, amount=700) for _ in range(THREADS)])
    assert all(isinstance(r, Seat) for r in results), results
    assert Seat.objects.get(table=table).stack == BUY_IN + 700
    assert movements(alice, TransactionKind.TOP_UP) == 1
    assert wallet(alice) == 100_000 - BUY_IN - 700


@pytest.mark.django_db(transaction=True)
def test_one_rest_sit_key_sent_at_once_gets_201_and_the_same_seat_every_time():
    table = TableFactory(seats=6)
    alice = funded_player()
    url = f"/api/tables/{table.id}/seat"
    body = {"seat": 4, "buy_in": BUY_IN}
    results = run_together([lambda: post(api_for(alice), url, body) for _ in range(4)])
    assert [r.status_code for r in results] == [201] * 4, [r.content for r in results]
    assert {tuple(sorted(r.json().items())) for r in results} == {
        (("seat", 4), ("stack", BUY_IN), ("status", "waiting"))
    }
    assert movements(alice, TransactionKind.BUY_IN) == 1


@pytest.mark.django_db(transaction=True)
def test_a_sit_and_a_top_up_with_one_key_at_once_are_two_requests_each_moving_once():
    table = TableFactory(seats=6)
    alice = funded_player()
    api = api_for(alice)
    base = f"/api/tables/{table.id}"
    assert post(api, f"{base}/seat", {"seat": 1, "buy_in": BUY_IN}, key="s").status_code == 201
    # The same header for a second sit (already seated) and a top-up, at once: the
    # commands' keys differ (api:<user>:sit:k, api:<user>:top_up:k).
    results = run_together(
        [
            lambda: post(api_for(alice), f"{base}/seat", {"seat": 2, "buy_in": BUY_IN}, key="x"),
            lambda: post(api_for(alice), f"{base}/top-up", {"amount": 500}, key="x"),
        ]
    )
    assert results[0].status_code == 409 and results[0].json()["code"] == "seat_unavailable"
    assert results[1].status_code == 200, results[1].json()
    assert Seat.objects.get(table=table).stack == BUY_IN + 500
    assert wallet(alice) == 100_000 - BUY_IN - 500


@pytest.mark.django_db(transaction=True)
def test_a_sit_replayed_while_the_player_leaves_is_the_seat_or_refused_never_a_seat_again():
    table = TableFactory(seats=6)
    alice = funded_player()
    for round_ in range(3):
        key = f"sit-{round_}"
        sit(table, alice, number=2, key=key)
        replay, left = run_together(
            [
                lambda key=key: sit(table, alice, number=2, key=key),
                lambda: seating.seat_leave(table_id=table.id, user=alice),
            ]
        )
        assert left is True, left
        assert isinstance(replay, Seat) or (
            isinstance(replay, TableError) and replay.code == "idempotency_key_reused"
        ), replay
        assert not Seat.objects.filter(table=table).exists()
        assert wallet(alice) == 100_000
    assert movements(alice, TransactionKind.BUY_IN) == 3


@pytest.mark.django_db(transaction=True)
def test_one_top_up_key_at_once_with_two_amounts_adds_one_of_them_and_refuses_the_other():
    table = TableFactory(seats=6)
    alice = funded_player()
    sit(table, alice)
    results = run_together(
        [lambda a=a: top_up(table, alice, amount=a) for a in (300, 400) for _ in range(3)]
    )
    topped = {r.stack for r in results if isinstance(r, Seat)}
    refused = {r.code for r in results if isinstance(r, TableError)}
    assert len(topped) == 1 and refused == {"idempotency_key_reused"}, results
    (stack,) = topped
    assert stack in (BUY_IN + 300, BUY_IN + 400)
    assert Seat.objects.get(table=table).stack == stack
    assert wallet(alice) == 100_000 - stack


# --- replays after the seat changed -----------------------------------------------------


def heads_up(table):
    alice, bob = funded_player(), funded_player()
    sit(table, alice, number=1, key="a-sit")
    sit(table, bob, number=2, key="b-sit")
    return alice, bob


def finish_hand(table) -> None:
    """The player to act folds: the other wins the blinds, so both stacks change."""
    _hand, state = current(table)
    actor = Seat.objects.get(table=table, number=state.actor).player
    play.hand_act(table_id=table.id, user=actor, kind="fold")


@pytest.mark.django_db
def test_a_sit_replayed_after_a_hand_changed_the_stack_gets_the_seat_as_it_is_now(table):
    alice, _bob = heads_up(table)
    deal(table)
    finish_hand(table)
    seat = Seat.objects.get(table=table, player=alice)
    assert seat.stack != BUY_IN
    before = LedgerTransaction.objects.count()
    again = sit(table, alice, number=1, key="a-sit")
    assert (again.pk, again.stack) == (seat.pk, seat.stack)
    assert LedgerTransaction.objects.count() == before


@pytest.mark.django_db
def test_a_sit_replayed_during_a_hand_gets_the_seat_and_moves_nothing(table):
    alice, _bob = heads_up(table)
    deal(table)
    before = (LedgerTransaction.objects.count(), wallet(alice))
    assert sit(table, alice, number=1, key="a-sit").number == 1
    assert (LedgerTransaction.objects.count(), wallet(alice)) == before


@pytest.mark.django_db
def test_a_sit_replayed_after_sit_out_and_sit_in_gets_the_seat_and_changes_nothing(table):
    alice = funded_player()
    first = sit(table, alice, number=3)
    seating.seat_sit_out(table_id=table.id, user=alice)
    assert sit(table, alice, number=3).status == SeatStatus.SITTING_OUT  # not sat back in
    seating.seat_sit_in(table_id=table.id, user=alice)
    again = sit(table, alice, number=3)
    assert (again.pk, again.stack, again.status) == (first.pk, BUY_IN, SeatStatus.WAITING)
    assert movements(alice, TransactionKind.BUY_IN) == 1
    assert wallet(alice) == 100_000 - BUY_IN


@pytest.mark.django_db
def test_a_top_up_replayed_after_a_hand_and_after_sit_out_and_in_adds_nothing(table):
    alice, _bob = heads_up(table)
    top_up(table, alice, amount=1_000)
    deal(table)
    finish_hand(table)
    stack = Seat.objects.get(table=table, player=alice).stack
    assert top_up(table, alice, amount=1_000).stack == stack
    seating.seat_sit_out(table_id=table.id, user=alice)
    seating.seat_sit_in(table_id=table.id, user=alice)
    assert top_up(table, alice, amount=1_000).stack == stack
    assert movements(alice, TransactionKind.TOP_UP) == 1


@pytest.mark.django_db
def test_a_sit_replayed_with_another_post_big_blind_is_the_first_answer(table):
    alice = funded_player()
    first = seating.seat_take(
        table_id=table.id, user=alice, seat_number=1, buy_in=BUY_IN, idempotency_key="k"
    )
    again = seating.seat_take(
        table_id=table.id,
        user=alice,
        seat_number=1,
        buy_in=BUY_IN,
        post_big_blind=True,
        idempotency_key="k",
    )
    assert again.pk == first.pk and again.post_big_blind is False
    assert movements(alice, TransactionKind.BUY_IN) == 1


@pytest.mark.django_db
def test_top_up_leave_sit_again_then_replay_both_old_keys_moves_nothing(table):
    alice = funded_player()
    sit(table, alice, number=1, key="first")
    top_up(table, alice, amount=2_000, key="t1")
    assert seating.seat_leave(table_id=table.id, user=alice) is True
    # Ratholing: she must bring back the 12,000 she left with.
    sit(table, alice, number=5, buy_in=12_000, key="second")
    assert code_of(lambda: sit(table, alice, number=1, key="first")) == "idempotency_key_reused"
    assert code_of(lambda: sit(table, alice, number=5, key="first")) == "idempotency_key_reused"
    assert code_of(lambda: top_up(table, alice, amount=2_000, key="t1")) == (
        "idempotency_key_reused"
    )
    assert list(Seat.objects.filter(table=table).values_list("number", "stack")) == [(5, 12_000)]
    assert wallet(alice) == 100_000 - 12_000
    # And once more around: leave, the latest keys are refused too.
    seating.seat_leave(table_id=table.id, user=alice)
    assert code_of(lambda: sit(table, alice, number=5, buy_in=12_000, key="second")) == (
        "idempotency_key_reused"
    )
    assert wallet(alice) == 100_000


@pytest.mark.django_db
def test_a_sit_key_replayed_at_another_table_is_refused_even_with_the_same_seat_and_amount(stake):
    first, second = TableFactory(stake_level=stake), TableFactory(stake_level=stake)
    alice = funded_player()
    sit(first, alice, number=1)
    assert code_of(lambda: sit(second, alice, number=1)) == "idempotency_key_reused"
    seating.seat_leave(table_id=first.id, user=alice)
    assert code_of(lambda: sit(second, alice, number=1)) == "idempotency_key_reused"
    assert not Seat.objects.filter(player=alice).exists()
    assert wallet(alice) == 100_000


@pytest.mark.django_db
def test_a_top_up_key_replayed_at_another_table_is_refused(stake):
    first, second = TableFactory(stake_level=stake), TableFactory(stake_level=stake)
    alice = funded_player()
    sit(first, alice, key="s1")
    sit(second, alice, key="s2")
    top_up(first, alice, amount=500)
    assert code_of(lambda: top_up(second, alice, amount=500)) == "idempotency_key_reused"
    assert Seat.objects.get(table=second).stack == BUY_IN
    assert wallet(alice) == 100_000 - 2 * BUY_IN - 500


@pytest.mark.django_db
@pytest.mark.parametrize("amount", [999, 0, -1, True, 10**13, "1000"])
def test_a_top_up_key_replayed_with_another_amount_is_refused_and_adds_nothing(table, amount):
    alice = funded_player()
    sit(table, alice)
    top_up(table, alice, amount=1_000)
    assert code_of(lambda: top_up(table, alice, amount=amount)) == "idempotency_key_reused"
    assert Seat.objects.get(table=table).stack == BUY_IN + 1_000


@pytest.mark.django_db
@pytest.mark.parametrize("buy_in", [BUY_IN - 1, 0, -BUY_IN, True, 10**13, str(BUY_IN)])
def test_a_sit_key_replayed_with_another_buy_in_is_refused(table, buy_in):
    alice = funded_player()
    sit(table, alice)
    assert code_of(lambda: sit(table, alice, buy_in=buy_in)) == "idempotency_key_reused"
    assert wallet(alice) == 100_000 - BUY_IN


@pytest.mark.django_db
def test_a_sit_replayed_at_a_table_closed_since_gets_the_seat_and_a_new_key_is_refused(table):
    alice = funded_player()
    seat = sit(table, alice)
    table_status_set(table_id=table.id, status=TableStatus.CLOSED)
    assert sit(table, alice).pk == seat.pk
    assert code_of(lambda: sit(table, alice, key="new")) == "table_closed"
    assert wallet(alice) == 100_000 - BUY_IN


@pytest.mark.django_db
def test_a_sit_key_of_another_player_is_their_own_key_and_seats_them(table):
    alice, bob = funded_player(), funded_player()
    api_a, api_b = api_for(alice), api_for(bob)
    url = f"/api/tables/{table.id}/seat"
    assert post(api_a, url, {"seat": 1, "buy_in": BUY_IN}, key="same").status_code == 201
    answer = post(api_b, url, {"seat": 2, "buy_in": BUY_IN}, key="same")
    assert answer.status_code == 201, answer.json()
    assert wallet(alice) == wallet(bob) == 100_000 - BUY_IN


# --- hostile and clumsy keys over REST --------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("key", "code"),
    [
        ("", "idempotency_key_missing"),
        ("   ", "idempotency_key_missing"),
        ("x" * 101, "idempotency_key_invalid"),
        ("ключ", "idempotency_key_invalid"),
        ("caf\xe9", "idempotency_key_invalid"),
        ("a\x00b", "idempotency_key_invalid"),
    ],
)
def test_rest_sit_with_a_bad_key_is_a_400_that_moves_nothing(table, key, code):
    alice = funded_player()
    answer = post(
        api_for(alice), f"/api/tables/{table.id}/seat", {"seat": 1, "buy_in": BUY_IN}, key
    )
    assert answer.status_code == 400, answer.content
    assert answer.json()["code"] == code
    assert not Seat.objects.exists() and wallet(alice) == 100_000


@pytest.mark.django_db
def test_rest_keys_the_room_uses_internally_are_just_client_keys(table):
    alice = funded_player()
    api = api_for(alice)
    url = f"/api/tables/{table.id}/seat"
    for number, key in enumerate(["hand:1:rake", "leave:seat:1", "ws:1:sit:k", "x" * 100], 1):
        answer = post(api, url, {"seat": number, "buy_in": BUY_IN}, key=key)
        assert answer.status_code == 201, answer.json()
        stored = Seat.objects.get(table=table).buy_in_transaction.idempotency_key
        assert stored == f"api:{alice.pk}:sit:{key}"
        assert post(api, f"/api/tables/{table.id}/leave", key=None).json() == {"left": True}
    assert wallet(alice) == 100_000


@pytest.mark.django_db
def test_rest_key_whitespace_around_it_is_the_same_key(table):
    alice = funded_player()
    api = api_for(alice)
    url = f"/api/tables/{table.id}/seat"
    first = post(api, url, {"seat": 1, "buy_in": BUY_IN}, key="abc")
    again = post(api, url, {"seat": 1, "buy_in": BUY_IN}, key="  abc ")
    assert (first.status_code, again.status_code) == (201, 201)
    assert movements(alice, TransactionKind.BUY_IN) == 1


# --- the WebSocket ----------------------------------------------------------------------


@pytest.fixture
def ws_table(transactional_db):
    return TableFactory(stake_level=StakeLevelFactory(), seats=6, pause_between_hands_ms=0)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("timer_process")
async def test_websocket_bad_keys_are_errors_that_keep_the_socket_and_move_nothing(ws_table):
    alice = await sync_to_async(funded_player)()
    a = connect_as(alice, ws_table.id)
    await a.connect()
    for key in ["", "x" * 101, "ключ", "a\tb", "a\nb", "\u200b"]:
        answer = await a.send("sit", seat=1, buy_in=BUY_IN, key=key)
        assert (answer["type"], answer.get("code")) == ("error", "idempotency_key_invalid"), key
    for key in [1, ["k"], {"k": 1}, True]:
        answer = await a.send("sit", seat=1, buy_in=BUY_IN, key=key)
        assert (answer["type"], answer.get("code")) == ("error", "malformed"), key
    assert await sync_to_async(wallet)(alice) == 100_000
    # The longest key allowed, with colons, a room-like prefix and a space: accepted.
    key = ("hand:1:rake " + "x" * 100)[:100]
    assert (await a.send("sit", seat=1, buy_in=BUY_IN, key=key))["type"] == "ack"
    assert (await a.send("sit", seat=1, buy_in=BUY_IN, key=key))["type"] == "ack"
    seat = await sync_to_async(Seat.objects.select_related("buy_in_transaction").get)(
        table=ws_table
    )
    assert seat.buy_in_transaction.idempotency_key == f"ws:{alice.pk}:sit:{key}"
    assert await sync_to_async(wallet)(alice) == 100_000 - BUY_IN
    assert (await a.send("leave"))["type"] == "ack"
    await a.ws.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("timer_process")
async def test_one_key_over_rest_then_the_websocket_is_two_requests_and_seats_once(ws_table):
    alice = await sync_to_async(funded_player)()
    url = f"/api/tables/{ws_table.id}/seat"
    answer = await sync_to_async(post)(api_for(alice), url, {"seat": 1, "buy_in": BUY_IN}, "k")
    assert answer.status_code == 201
    a = connect_as(alice, ws_table.id)
    await a.connect()
    # Another channel, so another key: a new sit, refused because she is seated.
    answer = await a.send("sit", seat=1, buy_in=BUY_IN, key="k")
    assert (answer["type"], answer.get("code")) == ("error", "seat_unavailable"), answer
    answer = await a.send("sit", seat=2, buy_in=BUY_IN, key="k")
    assert (answer["type"], answer.get("code")) == ("error", "seat_unavailable"), answer
    assert await sync_to_async(wallet)(alice) == 100_000 - BUY_IN
    assert (await a.send("leave"))["type"] == "ack"
    await a.ws.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("timer_process")
async def test_two_tabs_replaying_one_sit_key_both_get_an_ack_and_one_seat(ws_table):
    alice = await sync_to_async(funded_player)()
    tabs = [connect_as(alice, ws_table.id), connect_as(alice, ws_table.id)]
    for tab in tabs:
        await tab.connect()
    for tab in tabs:
        tab.seq += 1
        await tab.ws.send_json_to(
            {"cmd": "sit", "seq": tab.seq, "seat": 3, "buy_in": BUY_IN, "key": "both"}
        )
    answers = [await tab.answer(tab.seq) for tab in tabs]
    assert [a["type"] for a in answers] == ["ack", "ack"], answers
    assert await sync_to_async(Seat.objects.filter(table=ws_table).count)() == 1
    assert await sync_to_async(wallet)(alice) == 100_000 - BUY_IN
    assert (await tabs[0].send("leave"))["type"] == "ack"
    for tab in tabs:
        await tab.ws.disconnect()
