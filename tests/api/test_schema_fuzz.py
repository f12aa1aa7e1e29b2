"""schemathesis against /api/schema/ on the live room (daphne + Celery on the test
database), as an auditor with a token: no 5xx, and every response conforms to the
schema (body and content type). Bounded: a few examples per operation, ~30 s.

Each operation is also called once with real ids (a finished hand, a built report day),
so the success responses are checked, not only the 404s that random ids produce.
"""

import datetime
import uuid

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from accounts.services import auditor_create
from tables.rake import rake_report_build
from tests.kit import play_passively, stake_for, table_with_players

CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
EXAMPLES_PER_OPERATION = 8


@pytest.mark.django_db(transaction=True)
def test_the_schema_holds_under_fuzzing(live_room):
    _user, _password, token = auditor_create(username=f"fuzz-{uuid.uuid4().hex[:8]}")
    table, _players = table_with_players(stake_for("omaha8", "PL"))
    hand = play_passively(table)
    today = datetime.datetime.now(tz=datetime.UTC).date()
    rake_report_build(day=today)
    headers = {"Authorization": f"Token {token}"}

    schema = schemathesis.openapi.from_url(f"{live_room}/api/schema/?format=json", headers=headers)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert any(op.path == "/api/hands/{id}/phh" for op in operations)
    for operation in operations:
        known = operation.Case(
            path_parameters={"id": hand.id} if "{id}" in operation.path else None,
            query={"date": today.isoformat()} if operation.path == "/api/reports/rake/" else None,
        )
        if operation.method.upper() == "GET":
            response = known.call_and_validate(base_url=live_room, headers=headers, checks=CHECKS)
            if "{id}" in operation.path and "withdrawals" not in operation.path:
                assert response.status_code == 200, (operation.path, response.text)

        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def fuzz(case) -> None:
            case.call_and_validate(base_url=live_room, headers=headers, checks=CHECKS)

        fuzz()
