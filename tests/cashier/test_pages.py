"""The cashier page and the admin's withdrawal actions."""

import pytest
from django.urls import reverse

from cashier.models import Withdrawal, WithdrawalStatus
from cashier.selectors import wallet_balance
from cashier.services import withdrawal_request
from tests.kit import UserFactory

pytestmark = pytest.mark.django_db


def form(prefix: str, amount: str, key: str = "6f1b2d1e-3c3f-4d4b-9a51-000000000001") -> dict:
    return {f"{prefix}-amount": amount, f"{prefix}-idempotency_key": key}


@pytest.mark.parametrize("url", ["/cashier/", "/cashier/deposit/", "/accounts/profile/"])
def test_anonymous_visitors_are_sent_to_log_in(client, url):
    response = client.get(url) if url.endswith("r/") or "profile" in url else client.post(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_deposit_in_chips_and_see_it_in_the_history(client, player):
    client.force_login(player)
    response = client.post("/cashier/deposit/", form("deposit", "12.50"), follow=True)
    assert wallet_balance(user=player) == 1_250
    assert b"Deposited 12.50." in response.content
    assert b"+12.50" in response.content
    # The same form sent again (a double click) moves nothing more.
    client.post("/cashier/deposit/", form("deposit", "12.50"))
    assert wallet_balance(user=player) == 1_250


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        ("abc", b"Enter an amount like 25 or 12.50"),
        ("1.234", b"without thousands separators"),
        ("-5", b"Enter an amount like 25 or 12.50"),
        ("0", b"The amount must be at least 1 cent."),
        ("", b"This field is required."),
        ("99999999999999", b"Enter an amount like 25 or 12.50"),
        ("20000000000", b"The amount must be at most"),
    ],
)
def test_bad_amounts_are_shown_and_change_nothing(client, player, fund, amount, message):
    fund(player, 1_000)
    client.force_login(player)
    response = client.post("/cashier/deposit/", form("deposit", amount))
    assert response.status_code == 400
    assert message in response.content
    assert wallet_balance(user=player) == 1_000


def test_withdraw_beyond_the_balance_shows_why(client, player, fund):
    fund(player, 1_000)
    client.force_login(player)
    response = client.post("/cashier/withdraw/", form("withdraw", "10.01"))
    assert response.status_code == 400
    assert b"Not enough chips" in response.content
    assert not Withdrawal.objects.exists()


def test_request_and_cancel_a_withdrawal(client, player, fund):
    fund(player, 5_000)
    client.force_login(player)
    response = client.post("/cashier/withdraw/", form("withdraw", "20"), follow=True)
    assert b"Withdrawal requested: 20.00." in response.content
    withdrawal = Withdrawal.objects.get()
    assert reverse("cashier-withdrawal-cancel", args=[withdrawal.pk]).encode() in response.content
    assert wallet_balance(user=player) == 3_000

    stranger = UserFactory()
    client.force_login(stranger)
    assert client.post(f"/cashier/withdrawals/{withdrawal.pk}/cancel/").status_code == 404
    client.force_login(player)
    response = client.post(f"/cashier/withdrawals/{withdrawal.pk}/cancel/", follow=True)
    assert b"Withdrawal of 20.00 cancelled." in response.content
    assert wallet_balance(user=player) == 5_000


def test_the_history_is_paginated(client, player, fund):
    for _ in range(25):
        fund(player, 100)
    client.force_login(player)
    first = client.get("/cashier/")
    assert b"Page 1 of 2" in first.content
    assert len(first.context["history"]) == 20
    assert len(client.get("/cashier/?page=2").context["history"]) == 5


def test_auditors_see_no_forms_and_cannot_post(client, auditor):
    client.force_login(auditor)
    assert b"Request withdrawal" not in client.get("/cashier/").content
    assert client.post("/cashier/deposit/", form("deposit", "5")).status_code == 403
    assert wallet_balance(user=auditor) == 0


def test_staff_approve_and_reject_withdrawals_in_the_admin(client, player, fund):
    fund(player, 5_000)
    paid = withdrawal_request(user=player, amount=1_000, idempotency_key="w1")
    rejected = withdrawal_request(user=player, amount=2_000, idempotency_key="w2")
    staff = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(staff)
    url = "/admin/cashier/withdrawal/"
    response = client.post(url, {"action": "approve", "_selected_action": [paid.pk]}, follow=True)
    assert b"1 withdrawal(s) approved." in response.content
    client.post(url, {"action": "reject", "_selected_action": [rejected.pk, paid.pk]})
    paid.refresh_from_db()
    rejected.refresh_from_db()
    assert paid.status == WithdrawalStatus.PAID and paid.decided_by == staff
    assert rejected.status == WithdrawalStatus.REJECTED
    assert wallet_balance(user=player) == 4_000
    for page in ("ledgertransaction", "ledgeraccount", "withdrawal"):
        assert client.get(f"/admin/cashier/{page}/").status_code == 200
    txn = paid.settle_transaction
    assert client.get(f"/admin/cashier/ledgertransaction/{txn.pk}/change/").status_code == 200
