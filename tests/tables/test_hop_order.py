"""The order of hops to a web process's database thread (tables/hop_order.py): a decision
a turn's clock waits for goes before the other commands and the snapshots waiting, at most
`depth` hops are handed over at once, and a hop given up never holds a turn."""

import asyncio
import time

import pytest
from channels.db import database_sync_to_async as db

from tables import hop_order as hop_order_module
from tables.hop_order import HopOrder, Urgency
from tables.models import HandEvent
from tests.kit import TableFactory, funded_player
from tests.tables.test_consumer_hardening import connected, heads_up_hand


async def hop(order: HopOrder, urgency: Urgency, name: str, ran: list[str]) -> None:
    async with order.turn(urgency):
        ran.append(name)
        await asyncio.sleep(0)


async def test_the_most_urgent_hop_waiting_goes_first_then_first_come_first_served():
    order = HopOrder(depth=1)
    ran: list[str] = []
    async with order.turn(Urgency.VIEW):  # the thread is busy
        tasks = []
        for name, urgency in (
            ("snapshot", Urgency.VIEW),
            ("a viewer's mute", Urgency.OTHER),
            ("sit out", Urgency.TABLE),
            ("act", Urgency.CLOCK),
            ("a newcomer's sit", Urgency.OTHER),
            ("leave", Urgency.TABLE),
            ("run twice", Urgency.CLOCK),
        ):
            tasks.append(asyncio.ensure_future(hop(order, urgency, name, ran)))
            await asyncio.sleep(0)
        assert order.waiting == 7 and ran == []
    await asyncio.gather(*tasks)
    # The seated players' play, then what viewers without a seat send, then snapshots.
    assert ran == [
        "act", "run twice", "sit out", "leave", "a viewer's mute", "a newcomer's sit", "snapshot"
    ]  # fmt: skip


async def test_at_most_depth_hops_are_handed_over_at_once():
    order = HopOrder(depth=2)
    handed, most = 0, 0

    async def busy() -> None:
        nonlocal handed, most
        async with order.turn(Urgency.TABLE):
            handed += 1
            most = max(most, handed)
            await asyncio.sleep(0.01)
            handed -= 1

    await asyncio.gather(*(busy() for _ in range(7)))
    assert most == 2
    # And nothing is left held: the next hop goes at once.
    await asyncio.wait_for(hop(order, Urgency.VIEW, "next", []), timeout=1)


async def test_a_hop_given_up_while_waiting_or_just_after_its_turn_came_holds_no_turn():
    order = HopOrder(depth=1)
    ran: list[str] = []
    holder = order.turn(Urgency.VIEW)
    await holder.__aenter__()
    gone_waiting = asyncio.ensure_future(hop(order, Urgency.CLOCK, "gone waiting", ran))
    gone_on_its_turn = asyncio.ensure_future(hop(order, Urgency.CLOCK, "gone on its turn", ran))
    last = asyncio.ensure_future(hop(order, Urgency.VIEW, "last", ran))
    await asyncio.sleep(0)
    gone_waiting.cancel()  # its socket closed while it waited
    await asyncio.sleep(0)
    await holder.__aexit__(None, None, None)  # the turn passes to "gone on its turn"...
    gone_on_its_turn.cancel()  # ... whose socket closes before it could take it
    await asyncio.wait_for(last, timeout=1)
    assert ran == ["last"]
    assert gone_waiting.cancelled() and gone_on_its_turn.cancelled()


def test_another_event_loop_starts_afresh():
    """A loop closed with a hop handed over and never finished (a test's loop, closed
    without its async generators' shutdown) leaves nothing held on the next loop."""
    order = HopOrder(depth=1)
    kept = []  # the unfinished hop, kept from the garbage collector for the test's length

    async def take_and_keep() -> None:
        kept.append(order.turn(Urgency.VIEW))
        await kept[0].__aenter__()

    loop = asyncio.new_event_loop()
    loop.run_until_complete(take_and_keep())
    loop.close()
    ran: list[str] = []
    asyncio.run(asyncio.wait_for(hop(order, Urgency.VIEW, "on a new loop", ran), timeout=1))
    assert ran == ["on a new loop"]


@pytest.mark.django_db(transaction=True)
async def test_a_decision_overtakes_the_commands_queued_before_it_over_the_socket():
    """A dozen players' commands wait behind a held database thread; the actor's `act`,
    sent after them, is carried out before all but the ones already handed over."""
    table = await db(TableFactory)(seats=6)
    actor, hand = await db(heads_up_hand)(table)
    crowd = [await db(funded_player)() for _ in range(12)]
    acting = await connected(actor, table.id)
    lobby = [await connected(user, table.id) for user in crowd]
    answered: list[str] = []

    async def command(client, name: str, cmd: str, **fields) -> None:
        answer = await client.send(cmd, **fields)
        answered.append(name)
        assert answer["type"] == ("ack" if cmd == "act" else "error"), answer

    # An ungated hop holds the thread, as a long command of another table would.
    held = asyncio.ensure_future(db(time.sleep)(0.5))
    await asyncio.sleep(0.05)
    waiting = [
        asyncio.ensure_future(command(client, f"sit out {n}", "sit_out"))
        for n, client in enumerate(lobby)
    ]
    while hop_order_module.hop_order.waiting < len(lobby) - hop_order_module.DEPTH:
        await asyncio.sleep(0.01)
    decision = asyncio.ensure_future(
        command(acting, "act", "act", action="call", turn=hand.turn_version)
    )
    await asyncio.gather(held, decision, *waiting)

    # The two handed over before the act came are ahead of it; the other ten behind.
    assert answered.index("act") == hop_order_module.DEPTH, answered
    assert await db(HandEvent.objects.filter(hand=hand, type="acted").count)() == 1
    for client in (acting, *lobby):
        await client.ws.disconnect()
