"""Seating over HTTP: every bad request is a 4xx with a reason and moves nothing."""

import pytest
from rest_framework.test import APIClient

from accounts.services import auditor_create
from cashier.models import LedgerTransaction
from tables.models import Seat
from tests.kit import TableFactory, deal, funded_player, wallet

pytestmark = pytest.mark.django_db


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def post(client, url, data=None, key="k-1"):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post(url, data or {}, format="json", **headers)


@pytest.fixture
def table():
    return TableFactory(seats=6)


def test_a_player_sits_tops_up_between_hands_and_leaves(table):
    alice = funded_player()
    api = client_for(alice)
    response = post(api, f"/api/tables/{table.id}/seat", {"seat": 2, "buy_in": 10_000})
    assert response.status_code == 201, response.json()
    assert response.json() == {"seat": 2, "stack": 10_000, "status": "waiting"}
    # The same request retried gets the first answer and moves no money twice.
    again = post(api, f"/api/tables/{table.id}/seat", {"seat": 2, "buy_in": 10_000})
    assert again.status_code == 201, again.json()
    assert again.json() == response.json()
    assert wallet(alice) == 90_000
    response = post(api, f"/api/tables/{table.id}/top-up", {"amount": 5_000}, key="k-2")
    assert response.status_code == 200 and response.json()["stack"] == 15_000
    response = post(api, f"/api/tables/{table.id}/leave", key=None)
    assert response.json() == {"left": True}
    assert wallet(alice) == 100_000


@pytest.mark.parametrize(
    ("url", "data", "status", "code"),
    [
        ("/api/tables/999999/seat", {"seat": 1, "buy_in": 10_000}, 404, "table_not_found"),
        ("/api/tables/{id}/seat", {"seat": 1, "buy_in": 3_999}, 400, "buy_in_out_of_range"),
        ("/api/tables/{id}/seat", {"seat": 1, "buy_in": 20_001}, 400, "buy_in_out_of_range"),
        ("/api/tables/{id}/seat", {"seat": 1, "buy_in": 0}, 400, "invalid_amount"),
        ("/api/tables/{id}/seat", {"seat": 1, "buy_in": -100}, 400, "invalid_amount"),
        ("/api/tables/{id}/seat", {"seat": 1, "buy_in": 100.5}, 400, "invalid_amount"),
        ("/api/tables/{id}/seat", {"seat": 1, "buy_in": "lots"}, 400, "invalid_amount"),
        ("/api/tables/{id}/seat", {"seat": 1, "buy_in": 10**15}, 400, "invalid_amount"),
        ("/api/tables/{id}/seat", {"seat": 9, "buy_in": 10_000}, 409, "seat_unavailable"),
        ("/api/tables/{id}/top-up", {"amount": 1_000}, 409, "not_seated"),
    ],
)
def test_bad_seating_requests_are_refused_and_move_nothing(table, url, data, status, code):
    alice = funded_player()
    before = LedgerTransaction.objects.count()
    response = post(client_for(alice), url.format(id=table.id), data)
    assert response.status_code == status, response.json()
    assert response.json()["code"] == code
    assert response.json()["detail"]
    assert LedgerTransaction.objects.count() == before
    assert wallet(alice) == 100_000
    assert not Seat.objects.exists()


def test_a_top_up_during_a_hand_is_refused(table):
    alice, bob = funded_player(), funded_player()
    for number, user in ((1, alice), (2, bob)):
        post(client_for(user), f"/api/tables/{table.id}/seat", {"seat": number, "buy_in": 10_000})
    deal(table)
    response = post(client_for(alice), f"/api/tables/{table.id}/top-up", {"amount": 1_000})
    assert response.status_code == 409
    assert response.json()["code"] == "hand_in_progress"
    assert wallet(alice) == 90_000


def test_money_moving_requests_need_an_idempotency_key_and_a_login(table):
    alice = funded_player()
    response = post(
        client_for(alice), f"/api/tables/{table.id}/seat", {"seat": 1, "buy_in": 10_000}, key=None
    )
    assert response.status_code == 400
    assert response.json()["code"] == "idempotency_key_missing"
    anonymous = APIClient().post(f"/api/tables/{table.id}/seat", {"seat": 1}, format="json")
    assert anonymous.status_code == 401


def test_an_auditor_cannot_sit_down(table):
    auditor, _password, _token = auditor_create(username="watcher")
    response = post(
        client_for(auditor), f"/api/tables/{table.id}/seat", {"seat": 1, "buy_in": 10_000}
    )
    assert response.status_code == 403
