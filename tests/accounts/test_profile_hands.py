"""The profile lists the player's recent hands with what each won or lost them."""

import pytest

from tests.kit import TableFactory, deal, funded_player
from tests.tables.test_services import play_passively, sit

pytestmark = pytest.mark.django_db


def test_the_profile_shows_recent_hands_and_their_result(client):
    # Another table's hand first: this table's hand #1 is not the room's hand id 1.
    other = TableFactory(seats=6)
    carol, dave = funded_player(), funded_player()
    sit(other, carol, 1)
    sit(other, dave, 2)
    deal(other)
    play_passively(other)
    table = TableFactory(seats=6)
    alice, bob = funded_player(), funded_player()
    sit(table, alice, 1)
    sit(table, bob, 2)
    deal(table)
    hand = play_passively(table)
    assert hand.number != hand.id
    client.force_login(alice)
    page = client.get("/accounts/profile/").content.decode()
    assert "Recent hands" in page
    # Numbered as the hand history numbers it (issue #16), linked by its id.
    assert f'#hand-{hand.id}">#{hand.number}</a>' in page
    assert table.name in page


def test_a_new_player_is_invited_to_find_a_table(client):
    client.force_login(funded_player())
    assert "No hands yet" in client.get("/accounts/profile/").content.decode()
