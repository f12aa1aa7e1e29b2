"""The hand list: newest first, cursor pages, and the filters (table, stake level, game,
player, time range), for players (within their own hands) and auditors."""

import base64
import datetime

import pytest

from tables.models import Hand
from tests.kit import api_for, play_passively, stake_for, table_with_players

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_tables(db):
    holdem, (alice, _bob, _carol) = table_with_players(stake_for("holdem", "NL"))
    omaha, (dave, _erin, _frank) = table_with_players(stake_for("omaha", "PL"))
    hands = [play_passively(holdem), play_passively(omaha), play_passively(holdem)]
    return holdem, omaha, hands, alice, dave


def ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [h["id"] for h in response.json()["results"]]


def test_newest_first_in_cursor_pages(two_tables, auditor):
    *_, hands, _alice, _dave = two_tables
    client = api_for(auditor)
    seen: list[int] = []
    url = "/api/hands/?page_size=2"
    while url:
        body = client.get(url).json()
        seen += [h["id"] for h in body["results"]]
        url = body["next"]
    assert seen == sorted((h.id for h in hands), reverse=True)


def test_filters_for_an_auditor(two_tables, auditor):
    holdem, omaha, hands, _alice, dave = two_tables
    client = api_for(auditor)
    assert ids(client.get("/api/hands/", {"table": omaha.id})) == [hands[1].id]
    assert ids(client.get("/api/hands/", {"stake_level": holdem.stake_level_id})) == [
        hands[2].id,
        hands[0].id,
    ]
    assert ids(client.get("/api/hands/", {"game": "omaha"})) == [hands[1].id]
    assert ids(client.get("/api/hands/", {"game": "omaha8"})) == []
    assert ids(client.get("/api/hands/", {"player": dave.username})) == [hands[1].id]
    assert ids(client.get("/api/hands/", {"player": "nobody"})) == []
    assert ids(client.get("/api/hands/", {"player_id": dave.pk})) == [hands[1].id]
    assert ids(client.get("/api/hands/", {"player_id": 2**62})) == []
    Hand.objects.filter(pk=hands[0].pk).update(
        started_at=datetime.datetime(2020, 1, 1, 12, tzinfo=datetime.UTC)
    )
    day = {"since": "2020-01-01T00:00:00Z", "until": "2020-01-02T00:00:00Z"}
    assert ids(client.get("/api/hands/", day)) == [hands[0].id]
    assert ids(client.get("/api/hands/", {"since": "2020-01-02T00:00:00Z"})) == [
        hands[2].id,
        hands[1].id,
    ]


def test_a_players_filters_stay_within_their_hands(two_tables):
    _holdem, omaha, hands, alice, dave = two_tables
    client = api_for(alice)
    assert ids(client.get("/api/hands/")) == [hands[2].id, hands[0].id]
    assert ids(client.get("/api/hands/", {"table": omaha.id})) == []
    assert ids(client.get("/api/hands/", {"player": dave.username})) == []
    assert ids(client.get("/api/hands/", {"player_id": dave.pk})) == []


@pytest.mark.parametrize(
    "query",
    [
        {"table": "x"},
        {"table": "0"},
        {"table": str(2**70)},
        {"game": "stud"},
        {"since": "yesterday"},
        {"player": "x" * 151},
        {"player_id": "dave"},
        {"player_id": "0"},
    ],
)
def test_bad_filters_are_refused_with_400(db, auditor, query):
    response = api_for(auditor).get("/api/hands/", query)
    assert response.status_code == 400
    assert response.json()["code"]


def test_a_forged_cursor_is_refused_with_404(db, auditor):
    forged = base64.b64encode(b"p=abc").decode()
    response = api_for(auditor).get("/api/hands/", {"cursor": forged})
    assert response.status_code == 404
