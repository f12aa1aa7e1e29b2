"""Who sees what in the hand-history API: every endpoint for a player of the hand, a
player who was not in it, an auditor and an anonymous client.

The hand (conftest `showdown`): Bob shows the winning aces, Carol and Alice muck. Alice
must see her own cards and Bob's, never Carol's; nobody but auditors gets the deck, the
salt or a PHH file.
"""

import re

import pytest

from tables.models import HandStatus
from tests.api.conftest import ALICE, BOB, CAROL
from tests.kit import (
    api_for,
    deal,
    funded_player,
    play_passively,
    sit,
    stake_for,
    table_with_players,
)

pytestmark = pytest.mark.django_db

SUFFIXES = ["", "phh", "text", "ohh", "verify"]


def spaced(cards: str) -> list[str]:
    return [cards[i : i + 2] for i in range(0, len(cards), 2)]


def body_of(response) -> str:
    if response.streaming:
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def assert_never_leaks(body: str, cards: str) -> None:
    """No card of ``cards`` appears as a token (hex digests contain "7c" too)."""
    for card in spaced(cards):
        assert not re.search(rf"(?<![0-9A-Za-z]){card}(?![0-9A-Za-z])", body), f"{card} leaked"


# -- anonymous -----------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_anonymous_gets_401_on_every_hand_endpoint(showdown, suffix):
    response = api_for(None).get(f"/api/hands/{showdown.hand.id}/{suffix}")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize("url", ["/api/hands/", "/api/hands/export", "/api/reports/rake/"])
def test_anonymous_gets_401_on_lists_and_exports(db, url):
    assert api_for(None).get(url).status_code == 401


# -- another player --------------------------------------------------------------------


def test_another_player_lists_nothing_and_finds_nothing(showdown):
    client = api_for(showdown.dave)
    assert client.get("/api/hands/").json()["results"] == []
    for suffix in SUFFIXES:
        response = client.get(f"/api/hands/{showdown.hand.id}/{suffix}")
        assert response.status_code == 404, suffix
        assert response.json()["code"] == "not_found"
    assert client.get("/api/hands/export").status_code == 403


def test_a_player_seated_after_the_hand_cannot_read_it(showdown):
    late = funded_player()
    sit(showdown.table, late, 4)
    hand2 = play_passively(showdown.table)
    client = api_for(late)
    assert [h["id"] for h in client.get("/api/hands/").json()["results"]] == [hand2.id]
    assert client.get(f"/api/hands/{showdown.hand.id}/").status_code == 404
    assert client.get(f"/api/hands/{hand2.id}/").status_code == 200


# -- a player of the hand --------------------------------------------------------------


def test_a_player_lists_the_hands_they_were_dealt_into(showdown):
    results = api_for(showdown.alice).get("/api/hands/").json()["results"]
    assert [h["id"] for h in results] == [showdown.hand.id]
    assert results[0]["players"] == [
        {"seat": 1, "user_id": showdown.alice.pk, "player": showdown.alice.username},
        {"seat": 2, "user_id": showdown.bob.pk, "player": showdown.bob.username},
        {"seat": 3, "user_id": showdown.carol.pk, "player": showdown.carol.username},
    ]
    assert results[0]["pot"] == 600 and results[0]["rake"] == 30


def test_a_player_sees_own_and_shown_cards_only_in_the_record(showdown):
    response = api_for(showdown.alice).get(f"/api/hands/{showdown.hand.id}/")
    assert response.status_code == 200
    body = response.json()
    cards = {s["seat"]: s["hole_cards"] for s in body["seats"]}
    assert cards == {1: spaced(ALICE), 2: spaced(BOB), 3: None}
    assert body["deck"] is None and body["salt"] is None
    assert len(body["deck_commitment"]) == 64
    dealt = [e["data"]["seat"] for e in body["events"] if e["type"] == "hole_cards"]
    assert dealt == [1]
    shown = [e["data"]["seat"] for e in body["events"] if e["type"] == "shown"]
    assert shown == [2]
    assert_never_leaks(response.content.decode(), CAROL)


def test_the_record_has_every_event_in_order_with_rules_and_stacks(showdown, auditor):
    body = api_for(auditor).get(f"/api/hands/{showdown.hand.id}/").json()
    seqs = [e["seq"] for e in body["events"]]
    assert seqs == sorted(seqs) and seqs[0] == 1 and len(seqs) == showdown.hand.events_logged
    types = [e["type"] for e in body["events"]]
    assert types[:3] == ["hand_started", "posted", "posted"]
    assert {"dealt_board", "pots", "shown", "mucked", "won", "rake", "hand_ended"} <= set(types)
    assert all(e["at"] for e in body["events"])
    assert body["rules"] == showdown.hand.state["config"]
    assert body["rules"]["rake_percent"] == 500
    assert body["stake_level"]["name"] == showdown.table.stake_level.name
    stacks = {s["seat"]: (s["starting_stack"], s["final_stack"]) for s in body["seats"]}
    assert stacks == {1: (10_000, 9_800), 2: (10_000, 10_370), 3: (10_000, 9_800)}
    assert sum(s["contributed_rake"] for s in body["seats"]) == body["rake"] == 30
    assert body["verify_url"].endswith(f"/api/hands/{showdown.hand.id}/verify")


def test_each_player_sees_their_own_cards(showdown):
    for user, own, hidden in [
        (showdown.bob, BOB, ALICE + CAROL),
        (showdown.carol, CAROL, ALICE),
    ]:
        response = api_for(user).get(f"/api/hands/{showdown.hand.id}/")
        seats = {s["player"]: s["hole_cards"] for s in response.json()["seats"]}
        assert seats[user.username] == spaced(own)
        assert_never_leaks(response.content.decode(), hidden)


def test_a_player_gets_no_phh(showdown):
    response = api_for(showdown.alice).get(f"/api/hands/{showdown.hand.id}/phh")
    assert response.status_code == 403
    assert response.json()["code"] == "auditors_only"


def test_a_players_pokerstars_text_deals_only_to_them(showdown):
    response = api_for(showdown.alice).get(f"/api/hands/{showdown.hand.id}/text")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    alice, bob, carol = (u.username for u in (showdown.alice, showdown.bob, showdown.carol))
    lines = response.content.decode().splitlines()
    assert lines[0].startswith(
        f"PokerStars Hand #{showdown.hand.id}: Hold'em No Limit ($1/$2 USD) - "
    )
    assert lines[0].endswith(" ET")
    assert lines[1:] == [
        f"Table '{showdown.table.name}' 6-max Seat #1 is the button",
        f"Seat 1: {alice} ($100 in chips)",
        f"Seat 2: {bob} ($100 in chips)",
        f"Seat 3: {carol} ($100 in chips)",
        f"{bob}: posts small blind $1",
        f"{carol}: posts big blind $2",
        "*** HOLE CARDS ***",
        f"Dealt to {alice} [7c 2d]",
        f"{alice}: calls $2",
        f"{bob}: calls $1",
        f"{carol}: checks",
        "*** FLOP *** [Ad Kd 5c]",
        f"{bob}: checks",
        f"{carol}: checks",
        f"{alice}: checks",
        "*** TURN *** [Ad Kd 5c] [9s]",
        f"{bob}: checks",
        f"{carol}: checks",
        f"{alice}: checks",
        "*** RIVER *** [Ad Kd 5c 9s] [3h]",
        f"{bob}: checks",
        f"{carol}: checks",
        f"{alice}: checks",
        "*** SHOW DOWN ***",
        f"{bob}: shows [As Ah] (three of a kind, Aces)",
        f"{carol}: mucks hand",
        f"{alice}: mucks hand",
        f"{bob} collected $5.70 from pot",
        "*** SUMMARY ***",
        "Total pot $6 | Rake $0.30",
        "Board [Ad Kd 5c 9s 3h]",
        f"Seat 1: {alice} (button) mucked [7c 2d]",
        f"Seat 2: {bob} (small blind) showed [As Ah] and won ($5.70) with three of a kind, Aces",
        f"Seat 3: {carol} (big blind) mucked",
    ]


def test_a_players_ohh_has_them_as_hero_and_hides_mucked_cards(showdown):
    response = api_for(showdown.alice).get(f"/api/hands/{showdown.hand.id}/ohh")
    assert response.status_code == 200
    ohh = response.json()["ohh"]
    assert ohh["hero_player_id"] == 1
    assert (ohh["game_type"], ohh["bet_limit"]) == ("Holdem", {"bet_type": "NL", "bet_cap": 0})
    actions = [a for r in ohh["rounds"] for a in r["actions"]]
    dealt = [(a["player_id"], a["cards"]) for a in actions if a["action"] == "Dealt Cards"]
    assert dealt == [(1, spaced(ALICE))]
    showdown_round = ohh["rounds"][-1]
    assert showdown_round["street"] == "Showdown"
    assert showdown_round["actions"][0]["cards"] == spaced(BOB)
    assert "cards" not in showdown_round["actions"][1]  # Carol's muck
    assert ohh["pots"] == [
        {
            "number": 0,
            "amount": 6.0,
            "rake": 0.3,
            "jackpot": 0,
            "player_wins": [{"player_id": 2, "win_amount": 5.7}],
        }
    ]
    assert_never_leaks(response.content.decode(), CAROL)


def test_a_player_may_verify_the_commitment_but_not_export(showdown):
    client = api_for(showdown.alice)
    verify = client.get(f"/api/hands/{showdown.hand.id}/verify").json()
    assert verify == {
        "commitment": showdown.hand.deck_commitment,
        "matches": True,
        "algorithm": "sha256(card codes + salt hex)",
    }
    for fmt in ("phh", "text"):
        response = client.get(f"/api/hands/export?format={fmt}")
        assert response.status_code == 403
        assert response.json()["code"] == "auditors_only"


# -- auditors ------------------------------------------------------------------------------


def test_an_auditor_reads_everything(showdown, auditor):
    client = api_for(auditor)
    hand = showdown.hand
    assert [h["id"] for h in client.get("/api/hands/").json()["results"]] == [hand.id]
    body = client.get(f"/api/hands/{hand.id}/").json()
    cards = {s["seat"]: s["hole_cards"] for s in body["seats"]}
    assert cards == {1: spaced(ALICE), 2: spaced(BOB), 3: spaced(CAROL)}
    assert body["salt"] == hand.salt and len(body["deck"]) == 52
    assert [e["data"]["seat"] for e in body["events"] if e["type"] == "hole_cards"] == [2, 3, 1]
    phh = client.get(f"/api/hands/{hand.id}/phh")
    assert phh.status_code == 200 and phh["Content-Type"] == "text/plain; charset=utf-8"
    text = phh.content.decode()
    assert '"d dh p2 KsKh"' in text and f'_salt = "{hand.salt}"' in text
    stars = client.get(f"/api/hands/{hand.id}/text").content.decode()
    assert "Dealt to" in stars and "mucked [Ks Kh]" in stars
    ohh = client.get(f"/api/hands/{hand.id}/ohh").json()["ohh"]
    assert ohh["hero_player_id"] is None
    assert ohh["rounds"][-1]["actions"][1]["cards"] == spaced(CAROL)
    assert client.get(f"/api/hands/{hand.id}/verify").json()["matches"] is True


def test_verify_reports_a_commitment_that_does_not_match(showdown, auditor):
    type(showdown.hand).objects.filter(pk=showdown.hand.pk).update(deck_commitment="0" * 64)
    body = api_for(auditor).get(f"/api/hands/{showdown.hand.id}/verify").json()
    assert body["matches"] is False and body["commitment"] == "0" * 64


def test_an_auditor_exports_phh_and_text_streams(showdown, auditor):
    hand2 = play_passively(showdown.table)
    client = api_for(auditor)
    phh = client.get("/api/hands/export?format=phh")
    assert phh.status_code == 200 and phh.streaming
    assert phh["Content-Disposition"] == 'attachment; filename="hands.phhs"'
    body = body_of(phh)
    assert body.index(f"[{showdown.hand.id}]\n") < body.index(f"[{hand2.id}]\n")
    one = client.get(f"/api/hands/{hand2.id}/phh").content.decode()
    assert f"[{hand2.id}]\n{one}" in body
    text = body_of(client.get("/api/hands/export", {"format": "text", "table": showdown.table.id}))
    assert text.count("PokerStars Hand #") == 2
    assert body_of(client.get("/api/hands/export", {"format": "text", "table": 999})) == ""
    assert client.get("/api/hands/export?format=xml").status_code == 400


# -- hands in progress -----------------------------------------------------------------


def test_a_hand_in_progress_is_not_found_for_anyone(db, auditor):
    table, (alice, _bob, _carol) = table_with_players(stake_for("omaha", "PL"))
    hand = deal(table)
    assert hand.status == HandStatus.IN_PROGRESS
    for user in (alice, auditor):
        client = api_for(user)
        assert client.get("/api/hands/").json()["results"] == []
        for suffix in SUFFIXES:
            assert client.get(f"/api/hands/{hand.id}/{suffix}").status_code == 404, suffix
    assert body_of(api_for(auditor).get("/api/hands/export")) == ""
