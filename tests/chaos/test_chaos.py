"""Runs the chaos machines (tests/chaos/README.md says what they do and what they found).

Short by default (a minute or so for the pair in `make test`); CHAOS_EXAMPLES and
CHAOS_STEPS raise the sizes, and the `verify` variants are the long runs of `make verify`.
"""

import pytest
from hypothesis.stateful import run_state_machine_as_test

from tests.chaos.harness import chaos_settings
from tests.chaos.services_machine import ServicesMachine

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_services_survive_anything_players_the_clock_and_admins_do(messages_recorded):
    run_state_machine_as_test(ServicesMachine, settings=chaos_settings(examples=12, steps=25))


@pytest.mark.verify
def test_the_services_survive_a_long_chaos_run(messages_recorded):
    run_state_machine_as_test(ServicesMachine, settings=chaos_settings(examples=200, steps=50))
