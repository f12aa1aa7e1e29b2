"""Sign-up, log-in with throttling, log-out and passwords, through the site's pages."""

import re

import pytest
from django.core.cache import cache
from django.test import Client

from accounts.models import User
from accounts.services import LOGIN_THROTTLE_FAILURES, _throttle_keys
from poker_room.addresses import address_group
from tests.kit import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "an0ther-long-secret"


def sign_up(client, username: str, password: str = NEW_PASSWORD, address: str = "", **extra):
    data = {"username": username, "password1": password, "password2": password, **extra}
    return client.post("/accounts/signup/", data, **({"REMOTE_ADDR": address} if address else {}))


def log_in(client, username: str, password: str, address: str, url: str = "/accounts/login/"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


def test_a_visitor_signs_up_as_a_player_and_is_logged_in(client):
    assert b"Create my account" in client.get("/accounts/signup/").content
    response = sign_up(client, "Dana", email="dana@example.com")
    assert response.status_code == 302 and response["Location"] == "/accounts/profile/"
    user = User.objects.get(username="Dana")
    assert user.check_password(NEW_PASSWORD)
    assert not user.is_staff and not user.groups.exists()
    assert (user.auto_muck, user.chop_blinds, user.four_color_deck) == (True, False, False)
    assert client.get("/accounts/profile/").status_code == 200


def test_a_screen_name_taken_in_another_case_is_refused_kindly(client):
    UserFactory(username="alice")
    response = sign_up(client, "ALICE")
    assert response.status_code == 200
    assert (
        "The screen name “ALICE” is taken (screen names ignore case)." in response.content.decode()
    )
    assert User.objects.filter(username__iexact="alice").count() == 1


def test_sign_up_shows_password_problems(client):
    response = sign_up(client, "erin", password="123")
    content = response.content.decode()
    assert "This password is too short" in content
    assert not User.objects.filter(username="erin").exists()


@pytest.fixture
def signup_limit(settings, address):
    """Two sign-ups per address here; the suite's settings allow many (it signs players
    up from 127.0.0.1). The test's address's count is deleted afterwards."""
    settings.SIGNUP_PER_ADDRESS = 2
    yield
    cache.delete(f"limit:signup:{address_group(address)}")


def test_sign_up_is_limited_per_address_with_a_429_and_a_clear_reason(
    client, address, signup_limit
):
    """Finding 10: 15 accounts in a row from one address were accepted."""
    network = address.removesuffix("::1")
    for n in range(2):  # any address of the /64: one subscriber may use them all
        response = sign_up(Client(), f"Newcomer{n}", address=f"{network}:{n}::{n + 2}")
        assert response.status_code == 302, response.content
    refused = sign_up(client, "Newcomer2", address=address)
    assert refused.status_code == 429
    content = refused.content.decode()
    assert "Too many accounts were created from your network lately." in content
    assert 'data-code="signup_throttled"' in content
    assert not User.objects.filter(username="Newcomer2").exists()
    assert client.get("/accounts/signup/", REMOTE_ADDR=address).status_code == 200
    # Another network signs up as before.
    assert sign_up(client, "Newcomer3", address="2001:db8:ffff:4646::1").status_code == 302
    cache.delete(f"limit:signup:{address_group('2001:db8:ffff:4646::1')}")


def test_failed_sign_ups_do_not_count_toward_the_limit(client, address, signup_limit):
    for _ in range(3):
        assert sign_up(client, "erin", password="123", address=address).status_code == 200
    assert sign_up(client, "Erin", address=address).status_code == 302


def test_log_in_and_out(client, address):
    UserFactory(username="dana")
    response = log_in(client, "dana", PASSWORD, address)
    assert response.status_code == 302
    assert client.get("/accounts/profile/").status_code == 200
    client.post("/accounts/logout/")
    assert client.get("/accounts/profile/").status_code == 302


def test_repeated_failures_lock_the_login_out_even_with_the_right_password(client, address):
    UserFactory(username="dana")
    for _ in range(LOGIN_THROTTLE_FAILURES):
        response = log_in(client, "dana", "wrong", address)
        assert b"didn&#x27;t match" in response.content or b"enter a correct" in response.content
    locked = log_in(client, "DANA", PASSWORD, address)
    assert locked.status_code == 200
    assert b"Too many failed log-in attempts" in locked.content
    assert "_auth_user_id" not in client.session
    # Another address is not locked out: a stranger cannot lock a player out.
    other = log_in(client, "dana", PASSWORD, "2001:db8::1:2")
    assert other.status_code == 302
    keys = _throttle_keys(username="dana", address=address_group("2001:db8::1:2"))
    cache.delete_many([key for key, _ in keys])


def test_failures_from_any_address_of_one_ipv6_64_count_together(client, address):
    # An IPv6 subscriber may pick any address of its /64 for each attempt.
    UserFactory(username="dana")
    network = address.removesuffix("::1")
    for host in range(LOGIN_THROTTLE_FAILURES):
        log_in(client, "dana", "wrong", f"{network}:{host + 2:x}::{host + 7:x}")
    locked = log_in(client, "dana", PASSWORD, f"{network}:ffff:ffff:ffff:ffff")
    assert b"Too many failed log-in attempts" in locked.content
    assert "_auth_user_id" not in client.session


def test_a_success_forgives_earlier_failures(client, address):
    UserFactory(username="dana")
    for _ in range(LOGIN_THROTTLE_FAILURES - 1):
        log_in(client, "dana", "wrong", address)
    assert log_in(client, "dana", PASSWORD, address).status_code == 302
    client.post("/accounts/logout/")
    for _ in range(LOGIN_THROTTLE_FAILURES - 1):
        log_in(client, "dana", "wrong", address)
    assert log_in(client, "dana", PASSWORD, address).status_code == 302


def test_the_admin_log_in_is_throttled_too(client, address):
    UserFactory(username="admin-user", is_staff=True)
    for _ in range(LOGIN_THROTTLE_FAILURES):
        log_in(client, "admin-user", "wrong", address, url="/admin/login/")
    response = log_in(client, "admin-user", PASSWORD, address, url="/admin/login/")
    assert b"Too many failed log-in attempts" in response.content


def test_password_change(client):
    user = UserFactory()
    client.force_login(user)
    assert b"Change your password" in client.get("/accounts/password_change/").content
    response = client.post(
        "/accounts/password_change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response["Location"] == "/accounts/password_change/done/"
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)


def test_password_reset_by_email(client, mailoutbox):
    user = UserFactory(email="erin@example.com")
    client.post("/accounts/password_reset/", {"email": "erin@example.com"})
    assert len(mailoutbox) == 1
    link = re.search(r"/accounts/reset/\S+/", mailoutbox[0].body).group(0)
    form_page = client.get(link, follow=True)
    assert b"Choose a new password" in form_page.content
    response = client.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        follow=True,
    )
    assert b"Your new password is set." in response.content
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)
