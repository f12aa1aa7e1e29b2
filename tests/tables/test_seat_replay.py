"""Issue #12, finding 1: a replayed idempotency key never moves chips again.

`seat_take` and `seat_top_up` used to ignore whether the cashier posted a new movement
or found the one their key had already made. Sitting down, leaving, and sending the same
sit request again then seated the player without a debit: the wallet grew by the buy-in
on every cycle, and the ledger audit (run after every test of this folder) failed. The
same for a top-up. Now a retry gets the first answer while the seat it made is still
there (HTTP 201 and the same body, a WebSocket ack), and `idempotency_key_reused`
otherwise; it is recognised before any seat check, so a retry of a sit that succeeded
is no longer refused as "already seated".

Service level first, then REST, then the WebSocket.
"""

import pytest
from channels.db import database_sync_to_async as sync_to_async

from cashier.models import LedgerTransaction
from tables.exceptions import TableError
from tables.models import Seat
from tables.services import seating
from tests.kit import StakeLevelFactory, TableFactory, api_for, deal, funded_player, wallet
from tests.tables.test_consumers import connect_as


def sit(table, user, number=1, buy_in=10_000, key="sit-key"):
    return seating.seat_take(
        table_id=table.id, user=user, seat_number=number, buy_in=buy_in, idempotency_key=key
    )


def top_up(table, user, amount=1_000, key="top-up-key"):
    return seating.seat_top_up(table_id=table.id, user=user, amount=amount, idempotency_key=key)


def leave(table, user):
    assert seating.seat_leave(table_id=table.id, user=user) is True


def refused_as_reused(call) -> None:
    with pytest.raises(TableError) as refusal:
        call()
    assert refusal.value.code == "idempotency_key_reused"


# --- services ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_sitting_again_with_the_key_of_a_seat_left_is_refused_and_creates_no_chips(table):
    alice = funded_player()
    sit(table, alice)
    assert wallet(alice) == 90_000
    leave(table, alice)
    assert wallet(alice) == 100_000
    # The old code seated her again here, without a debit, and paid her stack out again
    # when she left: 10,000 chips made from nothing on every cycle.
    before = LedgerTransaction.objects.count()
    refused_as_reused(lambda: sit(table, alice))
    assert LedgerTransaction.objects.count() == before
    assert wallet(alice) == 100_000
    assert not Seat.objects.filter(table=table).exists()


@pytest.mark.django_db
def test_a_retried_sit_while_seated_gets_that_seat_and_moves_nothing(table):
    alice = funded_player()
    first = sit(table, alice, number=3)
    before = LedgerTransaction.objects.count()
    again = sit(table, alice, number=3)  # the old code: "You are already seated" (409)
    assert again.pk == first.pk
    assert (again.number, again.stack, again.status) == (3, 10_000, "waiting")
    assert LedgerTransaction.objects.count() == before
    assert wallet(alice) == 90_000
    assert first.buy_in_transaction.idempotency_key == "sit-key"


@pytest.mark.django_db
def test_a_retried_sit_is_answered_before_the_seat_and_range_checks(table):
    alice, bob = funded_player(), funded_player()
    seat = sit(table, alice, number=1)
    sit(table, bob, number=2, key="bob-sit")
    # The seat is taken (by her), she is seated, and the buy-in range did not change:
    # none of those checks is reached by a retry of the request that seated her.
    assert sit(table, alice, number=1).pk == seat.pk
    assert wallet(alice) == 90_000


@pytest.mark.django_db
def test_a_sit_key_reused_for_another_seat_or_amount_is_refused(table):
    alice = funded_player()
    sit(table, alice, number=1)
    refused_as_reused(lambda: sit(table, alice, number=2))
    refused_as_reused(lambda: sit(table, alice, number=1, buy_in=12_000))
    assert wallet(alice) == 90_000
    assert list(Seat.objects.filter(table=table).values_list("number", "stack")) == [(1, 10_000)]


@pytest.mark.django_db
def test_a_retried_top_up_of_the_same_seat_gets_the_seat_and_adds_nothing(table):
    alice = funded_player()
    sit(table, alice)
    assert top_up(table, alice).stack == 11_000
    again = top_up(table, alice)
    assert again.stack == 11_000
    assert wallet(alice) == 89_000


@pytest.mark.django_db
def test_a_retried_top_up_is_answered_even_during_a_hand(table):
    alice, bob = funded_player(), funded_player()
    sit(table, alice, number=1)
    sit(table, bob, number=2, key="bob-sit")
    top_up(table, alice)
    deal(table)
    # A new top-up is refused while she is dealt in; the retry of the one that was
    # made is the first answer, not a refusal.
    assert top_up(table, alice).stack == 11_000
    assert wallet(alice) == 89_000


@pytest.mark.django_db
def test_a_top_up_key_of_an_earlier_seat_is_refused_and_adds_nothing(table):
    alice = funded_player()
    sit(table, alice, key="first-sit")
    top_up(table, alice)
    leave(table, alice)
    refused_as_reused(lambda: top_up(table, alice))  # not seated: still the key's answer
    sit(table, alice, buy_in=11_000, key="second-sit")
    # The old code found the old top-up, moved nothing, and still added 1,000 chips to
    # the new seat: chips from nowhere, and an audit failure.
    refused_as_reused(lambda: top_up(table, alice))
    assert Seat.objects.get(table=table, player=alice).stack == 11_000
    assert wallet(alice) == 89_000


# --- REST ---------------------------------------------------------------------------


def post(client, url, data=None, key="replayed"):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post(url, data or {}, format="json", **headers)


@pytest.mark.django_db
def test_rest_sit_leave_and_replay_the_sit_is_refused_and_the_wallet_does_not_grow(table):
    alice = funded_player()
    api = api_for(alice)
    seat_url, leave_url = f"/api/tables/{table.id}/seat", f"/api/tables/{table.id}/leave"
    first = post(api, seat_url, {"seat": 2, "buy_in": 10_000})
    assert first.status_code == 201, first.json()
    retried = post(api, seat_url, {"seat": 2, "buy_in": 10_000})
    assert (retried.status_code, retried.json()) == (201, first.json())
    assert wallet(alice) == 90_000
    assert post(api, leave_url, key=None).json() == {"left": True}
    replayed = post(api, seat_url, {"seat": 2, "buy_in": 10_000})
    assert replayed.status_code == 422, replayed.json()
    assert replayed.json()["code"] == "idempotency_key_reused"
    assert wallet(alice) == 100_000
    assert not Seat.objects.filter(table=table).exists()


@pytest.mark.django_db
def test_rest_top_up_replayed_on_a_new_seat_is_refused(table):
    alice = funded_player()
    api = api_for(alice)
    base = f"/api/tables/{table.id}"
    assert post(api, f"{base}/seat", {"seat": 1, "buy_in": 10_000}, key="s1").status_code == 201
    topped = post(api, f"{base}/top-up", {"amount": 500}, key="t1")
    assert topped.status_code == 200 and topped.json()["stack"] == 10_500
    retried = post(api, f"{base}/top-up", {"amount": 500}, key="t1")
    assert (retried.status_code, retried.json()) == (200, topped.json())
    post(api, f"{base}/leave", key=None)
    assert post(api, f"{base}/seat", {"seat": 1, "buy_in": 10_500}, key="s2").status_code == 201
    replayed = post(api, f"{base}/top-up", {"amount": 500}, key="t1")
    assert replayed.status_code == 422 and replayed.json()["code"] == "idempotency_key_reused"
    assert Seat.objects.get(table=table).stack == 10_500
    assert wallet(alice) == 89_500


# --- WebSocket ----------------------------------------------------------------------


@pytest.fixture
def ws_table(transactional_db):
    return TableFactory(stake_level=StakeLevelFactory(), seats=6, pause_between_hands_ms=0)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("timer_process")
async def test_websocket_sit_leave_and_replay_is_refused_and_top_up_replay_adds_nothing(
    ws_table,
):
    alice = await sync_to_async(funded_player)()
    a = connect_as(alice, ws_table.id)
    await a.connect()
    assert (await a.send("sit", seat=1, buy_in=10_000, key="k"))["type"] == "ack"
    # A retry of a sit that succeeded gets the first answer: an ack, not seat_unavailable.
    assert (await a.send("sit", seat=1, buy_in=10_000, key="k"))["type"] == "ack"
    assert (await a.send("top_up", amount=700, key="t"))["type"] == "ack"
    assert (await a.send("top_up", amount=700, key="t"))["type"] == "ack"
    assert await sync_to_async(wallet)(alice) == 89_300
    assert (await a.send("leave"))["type"] == "ack"
    answer = await a.send("sit", seat=1, buy_in=10_000, key="k")  # the very same request
    assert answer["type"] == "error" and answer["code"] == "idempotency_key_reused", answer
    assert (await a.send("sit", seat=1, buy_in=10_700, key="k2"))["type"] == "ack"
    answer = await a.send("top_up", amount=700, key="t")
    assert answer["type"] == "error" and answer["code"] == "idempotency_key_reused", answer
    seat = await sync_to_async(Seat.objects.get)(table=ws_table, player=alice)
    assert seat.stack == 10_700
    assert await sync_to_async(wallet)(alice) == 89_300
    assert (await a.send("leave"))["type"] == "ack"
    await a.ws.disconnect()
