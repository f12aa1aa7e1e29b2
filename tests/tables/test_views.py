"""The tables app's pages with Django's test client: lobby, lobby.json, table, hands."""

import json

import pytest
from django.urls import reverse

from tables.lobby import dollars, lobby_tables, table_average_pots
from tables.models import Hand, HandStatus, TableStatus
from tables.services.seating import seat_take
from tests.kit import StakeLevelFactory, TableFactory, UserFactory, deal, funded_player, key

pytestmark = pytest.mark.django_db


def finished_hand(table, number: int, pots: list[int]) -> Hand:
    return Hand.objects.create(
        table=table,
        number=number,
        status=HandStatus.FINISHED,
        state={"result": {"pots": [{"amount": p, "eligible": [1, 2]} for p in pots]}},
        button=1,
        deck_commitment="0" * 64,
        salt="0" * 64,
    )


def sit(table, number: int) -> None:
    """A real buy-in (the ledger audit after each test of this folder checks it)."""
    seat_take(
        table_id=table.id, user=funded_player(), seat_number=number, buy_in=5_000,
        idempotency_key=key(),
    )  # fmt: skip


def test_dollars_reads_like_a_poker_site():
    assert [dollars(c) for c in (0, 5, 150, 200, 200_000, -25)] == [
        "$0", "$0.05", "$1.50", "$2", "$2,000", "-$0.25",
    ]  # fmt: skip


def test_lobby_is_the_home_page_and_lists_open_tables(client):
    stake = StakeLevelFactory(name="NL 1/2", small_blind=100, big_blind=200)
    open_table = TableFactory(name="Copacabana", stake_level=stake, seats=6)
    TableFactory(name="Closed one", stake_level=stake, status=TableStatus.CLOSED)
    sit(open_table, 1)
    response = client.get("/")
    assert response.status_code == 200
    assert response.templates[0].name == "tables/lobby.html"
    body = response.content.decode()
    assert "Copacabana" in body
    assert "Closed one" not in body
    assert "$1/$2" in body
    assert "1/6" in body
    assert f'href="/tables/{open_table.id}/"' in body
    assert "Log in" in body


def test_lobby_json_has_players_stakes_and_the_average_pot(client):
    stake = StakeLevelFactory(
        structure="FL", small_blind=100, big_blind=200, small_bet=200, big_bet=400
    )
    table = TableFactory(name="Monte Carlo", stake_level=stake, seats=8)
    sit(table, 3)
    sit(table, 5)
    assert deal(table) is not None  # hand 1, in progress: not counted
    finished_hand(table, 2, [1_000])
    finished_hand(table, 3, [1_500, 501])
    response = client.get(reverse("lobby-json"))
    assert response.status_code == 200
    assert response["Cache-Control"].startswith("max-age=0")
    (row,) = json.loads(response.content)["tables"]
    assert row["name"] == "Monte Carlo"
    assert (row["seated"], row["seats"]) == (2, 8)
    assert row["stakes_label"] == "$2/$4"  # limit games are named by their bets
    assert row["structure_label"] == "Fixed limit"
    assert row["average_pot"] == (1_000 + 2_001) // 2
    assert row["average_pot_label"] == "$15"
    assert row["url"] == f"/tables/{table.id}/"


def test_a_spread_limit_stake_shows_its_spread_in_the_lobby_and_at_the_table(client):
    stake = StakeLevelFactory(
        structure="SL", small_blind=50, big_blind=100, small_bet=100, big_bet=200,
        spread_min=100, spread_max=300,
    )  # fmt: skip
    table = TableFactory(stake_level=stake)
    (row,) = json.loads(client.get(reverse("lobby-json")).content)["tables"]
    assert (row["stakes_label"], row["structure_label"]) == ("$1-$3", "Spread limit")
    page = client.get(f"/tables/{table.id}/").content.decode()
    assert "$1-$3 Spread limit" in page
    assert "$1/$2" not in page


def test_average_pot_uses_only_the_last_hands(django_assert_num_queries):
    table = TableFactory()
    for number in range(1, 6):
        finished_hand(table, number, [number * 100])
    assert table_average_pots(table_ids=[table.id], hands=2) == {table.id: 450}
    assert table_average_pots(table_ids=[]) == {}
    with django_assert_num_queries(2):
        lobby_tables()


def test_a_table_page_for_a_visitor_and_for_a_player(client):
    table = TableFactory(name="Bellagio", seats=6)
    response = client.get(f"/tables/{table.id}/")
    assert response.status_code == 200
    config = response.context["config"]
    assert config["tableId"] == table.id
    assert config["wsPath"] == f"/ws/tables/{table.id}/"
    assert config["username"] is None
    assert config["canPlay"] is False
    assert b'id="table-config"' in response.content
    assert b"js/table/main.js" in response.content

    user = UserFactory(username="zoe", four_color_deck=True)
    client.force_login(user)
    response = client.get(f"/tables/{table.id}/")
    config = response.context["config"]
    assert config["username"] == "zoe"
    assert config["canPlay"] is True
    assert config["fourColor"] is True
    assert config["balance"] == 0
    assert b"four-color" in response.content


def test_names_reach_the_page_escaped(client):
    table = TableFactory(name="<script>alert(1)</script>")
    response = client.get(f"/tables/{table.id}/")
    assert b"<script>alert(1)</script>" not in response.content
    response = client.get("/")
    assert b"<script>alert(1)</script>" not in response.content


def test_a_missing_table_is_a_friendly_404(client):
    response = client.get("/tables/999999/")
    assert response.status_code == 404
    assert b"Page not found" in response.content
    assert b"Back to the lobby" in response.content


def test_hand_history_page_needs_a_login(client):
    response = client.get(reverse("hands"))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    client.force_login(UserFactory())
    response = client.get(reverse("hands"))
    assert response.status_code == 200
    assert b"js/hands.js" in response.content
    assert b"/api/hands/" in response.content


def test_the_navigation_marks_the_current_page(client):
    client.force_login(UserFactory())
    body = client.get("/").content.decode()
    assert '<a href="/" aria-current="page">Lobby</a>' in body
    for link in ("/cashier/", "/hands/", "/accounts/profile/"):
        assert f'href="{link}"' in body
    body = client.get("/cashier/").content.decode()
    assert '<a href="/cashier/" aria-current="page">Cashier</a>' in body


def test_500_page_renders_without_a_context():
    from django.template.loader import render_to_string

    html = render_to_string("500.html")
    assert "Something went wrong" in html
