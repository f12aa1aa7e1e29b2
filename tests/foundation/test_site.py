"""The site answers: home page, log-in, admin, static files, WebSocket origin checks."""

import pytest
from channels.testing import WebsocketCommunicator
from django.core.management import call_command
from django.db import IntegrityError

from accounts.models import User
from poker_room.asgi import application


@pytest.mark.django_db
def test_home_page_invites_a_visitor_to_log_in(client):
    response = client.get("/")
    assert response.status_code == 200
    assert b"Log in" in response.content


@pytest.mark.django_db
def test_a_player_logs_in_and_sees_their_name(client):
    User.objects.create_user(username="dana", password="s3cret-pass-word")
    response = client.post(
        "/accounts/login/", {"username": "dana", "password": "s3cret-pass-word"}, follow=True
    )
    assert response.status_code == 200
    assert b"dana" in response.content


@pytest.mark.django_db
def test_admin_asks_for_a_login(client):
    response = client.get("/admin/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


@pytest.mark.django_db
def test_screen_names_are_unique_regardless_of_case():
    User.objects.create_user(username="alice", password="x")
    with pytest.raises(IntegrityError):
        User.objects.create_user(username="ALICE", password="x")


@pytest.mark.django_db
def test_seed_demo_creates_the_demo_users_once():
    call_command("seed_demo")
    call_command("seed_demo")
    names = set(User.objects.values_list("username", flat=True))
    assert {"admin", "alice", "bob", "carol", "auditor"} <= names
    assert User.objects.get(username="auditor").is_auditor
    assert not User.objects.get(username="alice").is_auditor
    assert User.objects.get(username="admin").is_staff


@pytest.mark.django_db(transaction=True)
async def test_websocket_from_a_foreign_origin_is_refused():
    communicator = WebsocketCommunicator(
        application, "/ws/tables/1/", headers=[(b"origin", b"https://evil.example")]
    )
    connected, _ = await communicator.connect()
    assert not connected
    await communicator.disconnect()
