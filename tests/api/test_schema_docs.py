"""The OpenAPI schema and the browsable docs page, which must work offline: Swagger UI
comes from our static files (drf-spectacular-sidecar), never from a CDN."""

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

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


def test_the_schema_lists_the_history_and_report_endpoints():
    response = Client().get("/api/schema/?format=json")
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


def test_the_docs_page_loads_swagger_ui_from_our_static_files():
    client = Client()
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
