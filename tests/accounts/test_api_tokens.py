"""API tokens stored hashed and expiring (finding 13): django-rest-knox tokens, made by
`createauditor` and on the auditor's own page /accounts/tokens/, shown once, revocable.
"""

import datetime
import io
import re
from importlib import import_module

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

from accounts.models import User
from accounts.services import auditor_create
from tests.kit import UserFactory

pytestmark = pytest.mark.django_db

TOKENS = "/accounts/tokens/"
NEW_TOKEN = re.compile(r'<code class="token" id="new-token">(\w+)</code>')


def ledger_status(token: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client.get("/api/ledger/").status_code


def logged_in(user: User, *, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


@pytest.fixture
def auditor() -> User:
    user, _password, _token = auditor_create(username="ada")
    return user


def create_on_page(client: Client) -> str:
    response = client.post(TOKENS)
    assert response.status_code == 200
    return NEW_TOKEN.search(response.content.decode()).group(1)


def test_createauditor_prints_a_token_the_database_keeps_only_hashed():
    out = io.StringIO()
    call_command("createauditor", "Ada", stdout=out)
    token = re.search(r"^token: (\w+)$", out.getvalue(), re.MULTILINE).group(1)
    assert ledger_status(token) == 200

    stored = AuthToken.objects.get(user__username="Ada")
    assert token not in (stored.digest, stored.token_key)
    assert len(token) > len(stored.token_key) and token.startswith(stored.token_key)
    # The token appears nowhere in the database: no table keeps it in plain text.
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM knox_authtoken WHERE digest = %s", [token])
        assert cursor.fetchone()[0] == 0
        tables = connection.introspection.table_names(cursor)
    assert "authtoken_token" not in tables


def test_a_token_expires_after_the_ttl(auditor):
    _instance, token = AuthToken.objects.create(user=auditor)
    stored = AuthToken.objects.get(user=auditor, token_key=token[:15])
    expected = timezone.now() + datetime.timedelta(days=30)
    assert abs(stored.expiry - expected) < datetime.timedelta(minutes=1)
    assert ledger_status(token) == 200

    AuthToken.objects.filter(pk=stored.pk).update(expiry=timezone.now() - datetime.timedelta(1))
    response = APIClient().get("/api/ledger/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert not AuthToken.objects.filter(pk=stored.pk).exists()  # knox deleted it


def test_an_auditor_creates_a_token_shown_once_and_listed_by_its_start(auditor):
    client = logged_in(auditor)
    page = client.get(TOKENS)
    assert page.status_code == 200
    assert b"Create a token" in page.content

    response = client.post(TOKENS)
    assert response["Cache-Control"].startswith("max-age=0")
    assert "no-store" in response["Cache-Control"]
    token = NEW_TOKEN.search(response.content.decode()).group(1)
    assert ledger_status(token) == 200

    listing = client.get(TOKENS).content.decode()
    assert token not in listing  # shown once only
    assert not NEW_TOKEN.search(listing)
    # Listed by its first 8 characters only (the rest, and the hash, stay unseen).
    assert f"<code>{token[:8]}…</code>" in listing
    assert token[:9] not in listing
    # Both tokens are listed (createauditor's and this one), with their expiry.
    assert listing.count('class="link">Revoke</button>') == 2
    assert (timezone.now() + datetime.timedelta(days=30)).strftime("%Y-%m-%d") in listing


def test_an_auditor_revokes_their_token_and_it_no_longer_opens_the_api(auditor):
    client = logged_in(auditor)
    token = create_on_page(client)
    digest = AuthToken.objects.get(token_key=token[:15]).digest
    response = client.post(f"{TOKENS}{digest}/revoke/", follow=True)
    assert response.status_code == 200
    assert b"The token is revoked" in response.content
    assert ledger_status(token) == 401
    assert token[:8] not in response.content.decode()
    # Revoking it again: not found, changes nothing.
    assert client.post(f"{TOKENS}{digest}/revoke/").status_code == 404


def test_an_auditor_cannot_revoke_another_auditors_token(auditor):
    token = create_on_page(logged_in(auditor))
    digest = AuthToken.objects.get(token_key=token[:15]).digest
    other, _password, _token = auditor_create(username="bea")
    assert logged_in(other).post(f"{TOKENS}{digest}/revoke/").status_code == 404
    assert ledger_status(token) == 200
    assert token[:8] not in logged_in(other).get(TOKENS).content.decode()


def test_the_token_page_needs_csrf_and_a_post(auditor):
    client = logged_in(auditor, csrf=True)
    before = AuthToken.objects.filter(user=auditor).count()
    assert client.post(TOKENS).status_code == 403
    digest = AuthToken.objects.filter(user=auditor).first().digest
    assert client.post(f"{TOKENS}{digest}/revoke/").status_code == 403
    assert logged_in(auditor).get(f"{TOKENS}{digest}/revoke/").status_code == 405
    assert AuthToken.objects.filter(user=auditor).count() == before


def test_only_auditors_have_a_token_page(auditor):
    player = UserFactory()
    assert logged_in(player).get(TOKENS).status_code == 403
    assert logged_in(player).post(TOKENS).status_code == 403
    staff = UserFactory(is_staff=True, is_superuser=True)
    assert logged_in(staff).post(TOKENS).status_code == 403
    assert not AuthToken.objects.filter(user__in=[player, staff]).exists()
    anonymous = Client().get(TOKENS)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    digest = AuthToken.objects.get(user=auditor).digest
    assert logged_in(player).post(f"{TOKENS}{digest}/revoke/").status_code == 403
    assert AuthToken.objects.filter(digest=digest).exists()


def test_an_auditor_has_at_most_ten_live_tokens(auditor, settings):
    client = logged_in(auditor)
    for _ in range(settings.API_TOKEN_LIMIT_PER_USER - 1):  # createauditor made the first
        create_on_page(client)
    refused = client.post(TOKENS)
    assert refused.status_code == 409
    assert b"revoke one first" in refused.content
    assert not NEW_TOKEN.search(refused.content.decode())
    assert AuthToken.objects.filter(user=auditor).count() == settings.API_TOKEN_LIMIT_PER_USER
    # An expired token does not count: it is deleted to make room.
    oldest = AuthToken.objects.filter(user=auditor).order_by("created").first()
    AuthToken.objects.filter(pk=oldest.pk).update(expiry=timezone.now() - datetime.timedelta(1))
    create_on_page(client)
    assert AuthToken.objects.filter(user=auditor).count() == settings.API_TOKEN_LIMIT_PER_USER


def test_the_profile_links_an_auditor_to_their_tokens(auditor):
    assert b'href="/accounts/tokens/"' in logged_in(auditor).get("/accounts/profile/").content
    assert (
        b'href="/accounts/tokens/"'
        not in logged_in(UserFactory()).get("/accounts/profile/").content
    )


def test_the_migration_drops_the_old_plaintext_token_table():
    """A database that had DRF's authtoken keeps no plaintext token after migrating."""
    migration = import_module("accounts.migrations.0003_drop_plaintext_api_tokens")
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, user_id bigint "
            "REFERENCES accounts_user (id), created timestamptz)"
        )
        user = UserFactory()
        cursor.execute(
            "INSERT INTO authtoken_token VALUES ('plaintext-secret', %s, now())", [user.id]
        )
        cursor.execute(
            "INSERT INTO django_migrations (app, name, applied) "
            "VALUES ('authtoken', '0001_initial', now())"
        )
    with connection.schema_editor() as schema_editor:
        migration.drop_plaintext_tokens(None, schema_editor)
    with connection.cursor() as cursor:
        assert "authtoken_token" not in connection.introspection.table_names(cursor)
        cursor.execute("SELECT count(*) FROM django_migrations WHERE app = 'authtoken'")
        assert cursor.fetchone()[0] == 0
    assert User.objects.filter(pk=user.pk).exists()
