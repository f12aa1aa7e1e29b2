"""Runs the chaos machines (tests/chaos/README.md says what they do and what they found).

Short by default (a minute or so for the pair in `make test`); CHAOS_EXAMPLES and
CHAOS_STEPS raise the sizes, and the `verify` variants are the long runs of `make verify`.
"""

import asyncio

import pytest
from channels.layers import get_channel_layer
from hypothesis.stateful import run_state_machine_as_test

from tests.chaos.harness import chaos_settings
from tests.chaos.services_machine import ServicesMachine
from tests.chaos.shedding_machine import SheddingWebSocketMachine

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_services_survive_anything_players_the_clock_and_admins_do(messages_recorded):
    run_state_machine_as_test(ServicesMachine, settings=chaos_settings(examples=15, steps=25))


@pytest.mark.verify
def test_the_services_survive_a_long_chaos_run(messages_recorded):
    run_state_machine_as_test(ServicesMachine, settings=chaos_settings(examples=200, steps=50))


def _loop_close(loop: asyncio.AbstractEventLoop) -> None:
    """Close the machine's loop once nothing of it is left running: the channel layer's
    pools and group refresher belong to it (a hang here is a receive that would not
    stop, poker_room/channel_layer.py)."""
    layer = get_channel_layer()
    loop.run_until_complete(layer.close_pools())
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(
            asyncio.wait_for(asyncio.gather(*pending, return_exceptions=True), 10)
        )
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


def _run_ws_machine(examples: int, steps: int) -> None:
    # The machine of ws_machine.py with the room's load shedding live (shedding_machine.py).
    loop = asyncio.new_event_loop()
    SheddingWebSocketMachine.loop = loop
    try:
        run_state_machine_as_test(
            SheddingWebSocketMachine, settings=chaos_settings(examples=examples, steps=steps)
        )
    finally:
        _loop_close(loop)


def test_the_table_socket_survives_anything_clients_send(chaos_ready):
    _run_ws_machine(examples=10, steps=15)


@pytest.mark.verify
def test_the_table_socket_survives_a_long_chaos_run(chaos_ready):
    _run_ws_machine(examples=100, steps=30)
