"""The OpenAPI schema and the browsable docs page, which must work offline: Swagger UI
comes from our static files (drf-spectacular-sidecar), never from a CDN. Both are for
staff and auditors only (issue 46, finding 13: the schema was public)."""

import re
import uuid

import pytest
from django.test import Client

from accounts.services import auditor_create
from tests.kit import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def auditor() -> Client:
    user, _password, _token = auditor_create(username=f"aud-{uuid.uuid4().hex[:8]}")
    client = Client()
    client.force_login(user)
    return client


def signed_in(**fields) -> Client:
    client = Client()
    client.force_login(UserFactory(**fields))
    return client


def test_the_schema_and_the_docs_are_not_public():
    anonymous = Client()
    schema = anonymous.get("/api/schema/?format=json")
    assert schema.status_code == 401
    assert schema.json()["code"] == "not_authenticated"
    docs = anonymous.get("/api/docs/")
    assert docs.status_code == 302
    assert docs["Location"].startswith("/accounts/login/?next=/api/docs/")
    player = signed_in()
    assert player.get("/api/schema/?format=json").status_code == 403
    assert player.get("/api/docs/").status_code == 403


def test_staff_read_the_schema_and_the_docs():
    staff = signed_in(is_staff=True)
    assert staff.get("/api/schema/?format=json").status_code == 200
    assert staff.get("/api/docs/").status_code == 200


HAND_PATHS = {
    "/api/hands/",
    "/api/hands/export",
    "/api/hands/{id}/",
    "/api/hands/{id}/phh",
    "/api/hands/{id}/text",
    "/api/hands/{id}/ohh",
    "/api/hands/{id}/verify",
    "/api/reports/rake/",
}


def test_the_schema_lists_the_history_and_report_endpoints(auditor):
    response = auditor.get("/api/schema/?format=json")
    assert response.status_code == 200
    schema = response.json()
    assert set(schema["paths"]) >= HAND_PATHS
    schemes = schema["components"]["securitySchemes"]
    assert {"knoxApiToken", "cookieAuth"} <= set(schemes)
    assert schemes["knoxApiToken"]["name"] == "Authorization"
    assert '"Token"' in schemes["knoxApiToken"]["description"]
    phh = schema["paths"]["/api/hands/{id}/phh"]["get"]["responses"]
    assert set(phh["200"]["content"]) == {"text/plain"}
    assert set(phh["403"]["content"]) == {"application/json"}


def test_the_docs_page_loads_swagger_ui_from_our_static_files(auditor):
    client = auditor
    page = client.get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert not re.search(r"(src|href)=\"https?://", html), "the page loads from elsewhere"
    assets = re.findall(r"(?:src|href)=\"(/static/drf_spectacular_sidecar/[^\"]+)\"", html)
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets)
    for asset in assets:
        served = client.get(asset)
        assert served.status_code == 200, asset
        served.close()
