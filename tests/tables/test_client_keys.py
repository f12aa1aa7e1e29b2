"""Issue #12, finding 2, over the WebSocket: a client's `key` cannot claim the room's keys.

The consumer passed the client's `key` to the ledger unchanged, so a one-cent top-up
sent with ``leave:seat:<id>`` stopped the player from ever leaving, one with
``withdrawal:<id>:settle`` blocked the withdrawal, one with ``hand:<n>:rake`` meant hand
n never settled. The key is now namespaced (``ws:<user>:<command>:<key>``) and checked.
"""

import pytest
from channels.db import database_sync_to_async as sync_to_async
from django.db import connection

from cashier.models import Withdrawal, WithdrawalStatus
from cashier.services import withdrawal_approve, withdrawal_request
from tables.models import Hand, HandStatus, Seat
from tests.kit import StakeLevelFactory, TableFactory, UserFactory, funded_player, wallet
from tests.tables.test_consumers import connect_as, play_one_hand

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("timer_process"),
]


@pytest.fixture
def table(transactional_db):
    stake = StakeLevelFactory(rake_percent_bp=500)
    return TableFactory(stake_level=stake, seats=6, pause_between_hands_ms=0)


async def test_a_top_up_keyed_like_the_leave_cash_out_does_not_stop_leaving(table):
    alice = await sync_to_async(funded_player)()
    a = connect_as(alice, table.id)
    await a.connect()
    assert (await a.send("sit", seat=1, buy_in=10_000))["type"] == "ack"
    seat = await sync_to_async(Seat.objects.get)(table=table, player=alice)
    answer = await a.send("top_up", amount=1, key=f"leave:seat:{seat.id}")
    assert answer["type"] == "ack", answer
    # The old code: the cash-out found its key taken, and the leave crashed (1011).
    assert (await a.send("leave"))["type"] == "ack"
    assert not await sync_to_async(Seat.objects.filter(table=table).exists)()
    assert await sync_to_async(wallet)(alice) == 100_000
    await a.ws.disconnect()


async def test_a_top_up_keyed_like_a_withdrawal_settlement_does_not_block_it(table):
    alice = await sync_to_async(funded_player)()
    withdrawal = await sync_to_async(withdrawal_request)(
        user=alice, amount=5_000, idempotency_key="w-1"
    )
    a = connect_as(alice, table.id)
    await a.connect()
    assert (await a.send("sit", seat=1, buy_in=10_000))["type"] == "ack"
    answer = await a.send("top_up", amount=1, key=f"withdrawal:{withdrawal.pk}:settle")
    assert answer["type"] == "ack", answer
    staff = await sync_to_async(UserFactory)(is_staff=True)
    await sync_to_async(withdrawal_approve)(withdrawal=withdrawal, decided_by=staff)
    paid = await sync_to_async(Withdrawal.objects.get)(pk=withdrawal.pk)
    assert paid.status == WithdrawalStatus.PAID
    assert (await a.send("leave"))["type"] == "ack"
    assert await sync_to_async(wallet)(alice) == 95_000
    await a.ws.disconnect()


def next_hand_id() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence('tables_hand', 'id')")
        (sequence,) = cursor.fetchone()
        cursor.execute(f"SELECT last_value, is_called FROM {sequence}")  # noqa: S608
        last, called = cursor.fetchone()
    return last + 1 if called else last


async def test_a_top_up_keyed_like_the_next_hands_rake_does_not_stop_it_settling(table):
    alice = await sync_to_async(funded_player)()
    bob = await sync_to_async(funded_player)()
    a, b = connect_as(alice, table.id), connect_as(bob, table.id)
    await a.connect()
    await b.connect()
    assert (await a.send("sit", seat=1, buy_in=10_000))["type"] == "ack"
    hand_id = await sync_to_async(next_hand_id)()
    # Claim the rake keys of the next few hands, in case a hand id is skipped.
    for number in range(hand_id, hand_id + 3):
        answer = await a.send("top_up", amount=1, key=f"hand:{number}:rake")
        assert answer["type"] == "ack", answer
    assert (await b.send("sit", seat=4, buy_in=10_000))["type"] == "ack"
    started = await a.until(lambda m: m.get("type") == "hand_started")
    assert started["hand"] in range(hand_id, hand_id + 3)
    # Checked and called down to a showdown: the hand takes rake, and it settles.
    ended = await play_one_hand([a, b], started["hand"])
    assert ended["rake"] > 0
    hand = await sync_to_async(Hand.objects.get)(pk=started["hand"])
    assert hand.status == HandStatus.FINISHED
    for client in (a, b):
        await client.ws.disconnect()


async def test_bad_keys_get_an_error_and_the_socket_stays_open(table):
    alice = await sync_to_async(funded_player)()
    a = connect_as(alice, table.id)
    await a.connect()
    for bad in ("x" * 101, "", "caf\u00e9", "new\nline"):
        answer = await a.send("sit", seat=1, buy_in=10_000, key=bad)
        assert answer["type"] == "error" and answer["code"] == "idempotency_key_invalid", answer
    # Far longer: refused by the command's field check, before the cashier, as a key.
    answer = await a.send("sit", seat=1, buy_in=10_000, key="x" * 300)
    assert answer["type"] == "error" and answer["code"] == "idempotency_key_invalid", answer
    assert await sync_to_async(wallet)(alice) == 100_000
    assert (await a.send("sit", seat=1, buy_in=10_000, key="x" * 100))["type"] == "ack"
    assert (await a.send("leave"))["type"] == "ack"
    await a.ws.disconnect()
