"""Fixtures for the table layer: funded players at a table of the real database."""

import itertools
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import User
from cashier.services import deposit_create
from tables.engine.state import HandState
from tables.models import Hand, HandStatus, Table
from tables.scheduling import schedule_hand_start
from tables.services import seating
from tables.tasks import hand_start_due
from tests.factories import StakeLevelFactory, TableFactory, UserFactory

_keys = itertools.count(1)


def key() -> str:
    return f"test-key-{next(_keys)}"


def funded_player(amount: int = 100_000, **fields):
    user = UserFactory(**fields)
    deposit_create(user=user, amount=amount, idempotency_key=key())
    return user


def seat_players(table: Table, n: int, *, buy_in: int = 10_000) -> list[User]:
    """Seat n funded players in seats 1 to n; a Celery worker deals only once all are
    seated (each sit is its own durable command, so the deal is held meanwhile)."""
    players = [funded_player() for _ in range(n)]
    held = Table.objects.get(pk=table.pk).next_hand_at
    Table.objects.filter(pk=table.pk).update(next_hand_at=timezone.now() + timedelta(hours=1))
    for number, user in enumerate(players, start=1):
        seating.seat_take(
            table_id=table.id,
            user=user,
            seat_number=number,
            buy_in=buy_in,
            idempotency_key=key(),
        )
    Table.objects.filter(pk=table.pk).update(next_hand_at=held)
    if held is None or held <= timezone.now():
        schedule_hand_start(table_id=table.id, at=timezone.now())
    return players


def deal(table: Table) -> Hand | None:
    """Deal the next hand now, as the hand-start task would once the pause is over."""
    Table.objects.filter(pk=table.pk).update(next_hand_at=None)
    return hand_start_due(table_id=table.id)


def current(table: Table) -> tuple[Hand, HandState]:
    hand = Hand.objects.get(table=table, status=HandStatus.IN_PROGRESS)
    return hand, HandState.from_dict(hand.state)


@pytest.fixture
def stake(db):
    return StakeLevelFactory()


@pytest.fixture
def table(stake):
    return TableFactory(stake_level=stake, seats=6)


@pytest.fixture(autouse=True)
def ledger_audited(request):
    """After any test of this folder that touched the database, the ledger audit passes."""
    marker = request.node.get_closest_marker("django_db")
    uses_db = marker is not None or {"db", "transactional_db"} & set(request.fixturenames)
    if not uses_db:
        yield
        return
    transactional = marker is not None and marker.kwargs.get("transaction", False)
    request.getfixturevalue("transactional_db" if transactional else "db")
    yield
    from cashier.audit import ledger_audit

    report = ledger_audit()
    assert report.ok, [str(d) for d in report.discrepancies]
