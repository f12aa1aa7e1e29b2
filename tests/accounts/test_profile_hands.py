"""The profile lists the player's recent hands with what each won or lost them."""

import pytest

from tests.kit import TableFactory, deal, funded_player
from tests.tables.test_services import play_passively, sit

pytestmark = pytest.mark.django_db


def test_the_profile_shows_recent_hands_and_their_result(client):
    table = TableFactory(seats=6)
    alice, bob = funded_player(), funded_player()
    sit(table, alice, 1)
    sit(table, bob, 2)
    deal(table)
    hand = play_passively(table)
    client.force_login(alice)
    page = client.get("/accounts/profile/").content.decode()
    assert "Recent hands" in page
    assert f"#{hand.id}" in page
    assert table.name in page


def test_a_new_player_is_invited_to_find_a_table(client):
    client.force_login(funded_player())
    assert "No hands yet" in client.get("/accounts/profile/").content.decode()
