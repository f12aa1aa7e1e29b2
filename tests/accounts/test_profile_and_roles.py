"""The profile page with preferences and balance; auditors made by createauditor."""

import io
import re

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from accounts.models import User
from accounts.selectors import user_can_play, user_is_auditor
from cashier.services import deposit_create, withdrawal_request
from tests.kit import UserFactory

pytestmark = pytest.mark.django_db


def test_the_profile_shows_balance_and_recent_movements(client):
    user = UserFactory()
    deposit_create(user=user, amount=123_456, idempotency_key="d")
    withdrawal_request(user=user, amount=456, idempotency_key="w")
    client.force_login(user)
    content = client.get("/accounts/profile/").content.decode()
    assert "Balance <strong>1,230.00</strong>" in content
    assert "Pending withdrawals: 4.56" in content
    assert "+1,234.56" in content and "-4.56" in content


def test_preferences_are_saved(client):
    user = UserFactory()
    client.force_login(user)
    assert b"Four-colour deck" in client.get("/accounts/profile/").content
    response = client.post(
        "/accounts/profile/", {"chop_blinds": "on", "four_color_deck": "on"}, follow=True
    )
    assert b"Your preferences are saved." in response.content
    user.refresh_from_db()
    assert (user.auto_muck, user.chop_blinds, user.four_color_deck) == (False, True, True)


def test_createauditor_prints_a_token_that_reads_the_ledger():
    player = UserFactory()
    deposit_create(user=player, amount=500, idempotency_key="d")
    out = io.StringIO()
    call_command("createauditor", "Ada", stdout=out)
    printed = out.getvalue()
    token = re.search(r"^token: (\w+)$", printed, re.MULTILINE).group(1)
    assert re.search(r"^password: \S{12,}$", printed, re.MULTILINE)

    auditor = User.objects.get(username="Ada")
    assert user_is_auditor(user=auditor) and not user_can_play(user=auditor)
    assert not auditor.is_staff and not auditor.is_superuser

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    ledger = client.get("/api/ledger/")
    assert ledger.status_code == 200
    assert ledger.json()["count"] == 2  # both legs of the player's deposit
    deposit = client.post(
        "/api/cashier/deposits/", {"amount": 100}, format="json", headers={"Idempotency-Key": "k"}
    )
    assert deposit.status_code == 403


def test_createauditor_with_a_password_and_a_taken_name():
    call_command("createauditor", "bea", "--password", "given-pass-123", stdout=io.StringIO())
    assert User.objects.get(username="bea").check_password("given-pass-123")
    with pytest.raises(CommandError, match="already exists"):
        call_command("createauditor", "BEA", stdout=io.StringIO())


def test_players_can_play_and_auditors_cannot():
    assert user_can_play(user=UserFactory())
    assert not user_is_auditor(user=UserFactory())
