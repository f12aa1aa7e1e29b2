"""The cashier REST API: authentication, roles, idempotency, and refusing bad input."""

import uuid

import pytest
from knox.models import AuthToken
from rest_framework.test import APIClient

from cashier.models import LedgerTransaction, Withdrawal, WithdrawalStatus
from cashier.selectors import wallet_balance, wallet_get
from cashier.services import MAX_AMOUNT, table_account_ensure, table_buy_in, withdrawal_request
from tests.kit import api_for

pytestmark = pytest.mark.django_db

DEPOSITS = "/api/cashier/deposits/"
WITHDRAWALS = "/api/cashier/withdrawals/"


def post(client: APIClient, url: str, body: object, key: str | None = "auto"):
    headers = {}
    if key is not None:
        headers["Idempotency-Key"] = str(uuid.uuid4()) if key == "auto" else key
    return client.post(url, body, format="json", headers=headers)


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/wallet/"),
        ("get", "/api/ledger/"),
        ("post", DEPOSITS),
        ("post", WITHDRAWALS),
        ("post", "/api/cashier/withdrawals/1/cancel/"),
    ],
)
def test_anonymous_requests_get_401(method, url):
    response = getattr(APIClient(), method)(url, {"amount": 100}, format="json")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Token"


def test_the_wallet_shows_the_players_own_balance(player, other_player, fund):
    fund(player, 1_234)
    fund(other_player, 999)
    withdrawal_request(user=player, amount=234, idempotency_key="w")
    body = api_for(player).get("/api/wallet/").json()
    assert body == {
        "account": wallet_get(user=player).pk,
        "balance": 1_000,
        "pending_withdrawals": 234,
    }


def test_a_deposit_with_an_idempotency_key_credits_once(player):
    client = api_for(player)
    first = post(client, DEPOSITS, {"amount": 2_500}, key="abc")
    again = post(client, DEPOSITS, {"amount": 2_500}, key="abc")
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert first.json()["amount"] == 2_500
    assert wallet_balance(user=player) == 2_500

    changed = post(client, DEPOSITS, {"amount": 3_000}, key="abc")
    assert changed.status_code == 422
    assert changed.json()["code"] == "idempotency_key_reused"
    assert wallet_balance(user=player) == 2_500


def test_two_players_may_use_the_same_key(player, other_player):
    assert post(api_for(player), DEPOSITS, {"amount": 100}, key="k").status_code == 201
    assert post(api_for(other_player), DEPOSITS, {"amount": 100}, key="k").status_code == 201


@pytest.mark.parametrize("url", [DEPOSITS, WITHDRAWALS])
@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"amount": 0}, 400, "invalid_amount"),
        ({"amount": -500}, 400, "invalid_amount"),
        ({"amount": 12.5}, 400, "invalid_amount"),
        ({"amount": 100.0}, 400, "invalid_amount"),
        ({"amount": "100"}, 400, "invalid_amount"),
        ({"amount": "lots"}, 400, "invalid_amount"),
        ({"amount": None}, 400, "null"),
        ({"amount": True}, 400, "invalid_amount"),
        ({"amount": MAX_AMOUNT + 1}, 400, "invalid_amount"),
        ({"amount": 10**30}, 400, "invalid_amount"),
        ({}, 400, "required"),
        ([100], 400, "invalid"),
        ({"amount": 100, "user": 1}, 400, "unexpected_field"),
        ({"amount": 100, "account": "other"}, 403, "not_your_account"),
    ],
)
def test_bad_input_is_refused_with_a_reason_and_changes_nothing(
    player, other_player, fund, ledger_state, url, body, status, code
):
    fund(player, 10_000)
    fund(other_player, 10_000)
    if isinstance(body, dict) and body.get("account") == "other":
        body = {**body, "account": wallet_get(user=other_player).pk}
    if isinstance(body, dict) and "user" in body:
        body = {**body, "user": other_player.pk}
    before = ledger_state()
    response = post(api_for(player), url, body)
    assert response.status_code == status, response.json()
    assert response.json()["code"] == code
    assert response.json()["detail"]
    assert ledger_state() == before
    assert not Withdrawal.objects.exists()


@pytest.mark.parametrize("url", [DEPOSITS, WITHDRAWALS])
@pytest.mark.parametrize(
    ("key", "code"),
    [(None, "idempotency_key_missing"), ("", "idempotency_key_missing"),
     ("x" * 101, "idempotency_key_invalid"), ("caf\u00e9", "idempotency_key_invalid")],
)  # fmt: skip
def test_money_moving_posts_need_an_idempotency_key(player, fund, ledger_state, url, key, code):
    fund(player, 10_000)
    before = ledger_state()
    response = post(api_for(player), url, {"amount": 100}, key=key)
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert "Idempotency-Key" in response.json()["detail"]
    assert ledger_state() == before


def test_giving_ones_own_wallet_id_is_fine(player, fund):
    fund(player, 100)
    account = wallet_get(user=player).pk
    response = post(api_for(player), DEPOSITS, {"amount": 100, "account": account})
    assert response.status_code == 201


def test_a_withdrawal_beyond_the_balance_is_a_conflict(player, fund, ledger_state):
    fund(player, 500)
    before = ledger_state()
    response = post(api_for(player), WITHDRAWALS, {"amount": 501})
    assert response.status_code == 409
    assert response.json()["code"] == "insufficient_funds"
    assert ledger_state() == before


def test_a_player_requests_lists_and_cancels_a_withdrawal(player, other_player, fund):
    fund(player, 5_000)
    client = api_for(player)
    created = post(client, WITHDRAWALS, {"amount": 2_000})
    assert created.status_code == 201
    withdrawal = created.json()
    assert withdrawal["status"] == "pending" and withdrawal["amount"] == 2_000
    assert [w["id"] for w in client.get(WITHDRAWALS).json()] == [withdrawal["id"]]
    assert api_for(other_player).get(WITHDRAWALS).json() == []

    cancel = f"{WITHDRAWALS}{withdrawal['id']}/cancel/"
    stranger = api_for(other_player).post(cancel)
    assert stranger.status_code == 404
    assert stranger.json()["code"] == "not_found"

    assert client.post(cancel).json()["status"] == "cancelled"
    assert client.post(cancel).status_code == 200  # cancelling twice is a no-op
    assert wallet_balance(user=player) == 5_000


def test_cancelling_a_decided_withdrawal_is_a_conflict(player, other_player, fund):
    from cashier.services import withdrawal_approve

    fund(player, 5_000)
    withdrawal = withdrawal_request(user=player, amount=1_000, idempotency_key="w")
    withdrawal_approve(withdrawal=withdrawal, decided_by=other_player)
    response = api_for(player).post(f"{WITHDRAWALS}{withdrawal.pk}/cancel/")
    assert response.status_code == 409
    assert response.json()["code"] == "withdrawal_not_pending"
    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.PAID


def test_a_player_reads_only_their_own_ledger_entries(player, other_player, fund):
    fund(player, 100)
    fund(other_player, 200)
    client = api_for(player)
    body = client.get("/api/ledger/").json()
    assert body["count"] == 1
    assert body["results"][0]["owner"] == player.username
    assert body["results"][0]["owner_id"] == player.pk
    assert body["results"][0]["amount"] == 100
    assert body["results"][0]["kind"] == "deposit"

    refused = client.get("/api/ledger/", {"user": other_player.username})
    assert refused.status_code == 403
    assert refused.json()["code"] == "permission_denied"
    assert client.get("/api/ledger/", {"user": player.username.upper()}).json()["count"] == 1
    assert client.get("/api/ledger/", {"user_id": player.pk}).json()["count"] == 1
    assert client.get("/api/ledger/", {"user_id": other_player.pk}).status_code == 403


def test_an_auditor_reads_every_entry_with_filters(auditor, player, other_player, fund):
    table_account = table_account_ensure(reference="table:7", name="Seven")

    fund(player, 1_000)
    fund(other_player, 2_000)
    table_buy_in(user=player, account=table_account, amount=400, idempotency_key="b")
    client = api_for(auditor)

    def count(**params) -> int:
        response = client.get("/api/ledger/", params)
        assert response.status_code == 200, response.json()
        return response.json()["count"]

    assert count() == 6
    assert count(user=player.username) == 2
    assert count(user_id=player.pk) == 2
    assert count(account_kind="clearing") == 2
    assert count(account_kind="table") == 1
    table_leg = client.get("/api/ledger/", {"account_kind": "table"}).json()["results"][0]
    assert (table_leg["reference"], table_leg["amount"]) == (table_account.reference, 400)
    assert count(kind="buy_in") == 2
    assert count(kind="deposit", user=other_player.username) == 1
    assert count(since="2000-01-01", until="2100-01-01T00:00:00Z") == 6
    assert count(until="2000-01-01") == 0
    assert count(page_size=2) == 6
    assert len(client.get("/api/ledger/", {"page_size": 2}).json()["results"]) == 2

    bad = client.get("/api/ledger/", {"kind": "theft"})
    assert bad.status_code == 400
    assert bad.json()["code"] == "invalid_choice"
    assert client.get("/api/ledger/", {"since": "yesterday"}).status_code == 400


def test_an_auditor_can_never_move_money(auditor, player, fund, ledger_state):
    fund(player, 1_000)
    withdrawal = withdrawal_request(user=player, amount=100, idempotency_key="w")
    client = APIClient()
    _instance, token = AuthToken.objects.create(user=auditor)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    before = ledger_state()
    for url in (DEPOSITS, WITHDRAWALS, f"{WITHDRAWALS}{withdrawal.pk}/cancel/"):
        response = post(client, url, {"amount": 100})
        assert response.status_code == 403
        assert response.json()["code"] == "auditors_cannot_move_money"
    assert ledger_state() == before
    assert LedgerTransaction.objects.count() == 2
