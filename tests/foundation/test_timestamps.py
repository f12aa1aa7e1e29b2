"""Timestamps are read by the room's loader exactly as Django's loader read them
(poker_room/postgres, `UtcTimestampLoader`), on the real PostgreSQL: the same value, in
UTC, whatever the server writes, or the same refusal."""

import datetime

import psycopg
import pytest
from django.db import DataError, connection, transaction
from django.db.backends.postgresql.psycopg_any import BaseTzLoader, register_tzloader
from psycopg.adapt import PyFormat
from psycopg.pq import Format

from poker_room.postgres.base import UtcTimestampLoader

pytestmark = pytest.mark.django_db

TIMESTAMPTZ = psycopg.adapters.types["timestamptz"].oid


def read(text: str, *, settings: str = "", djangos: bool = False) -> datetime.datetime:
    """`text` as a timestamptz, read by the connection's loader or by Django's own,
    after `settings` (SET LOCAL ...) in the same transaction."""
    with transaction.atomic(), connection.cursor() as cursor:
        if settings:
            cursor.execute(settings)
        if djangos:
            register_tzloader(datetime.UTC, cursor.cursor)
        cursor.execute("SELECT %s::timestamptz", [text])
        return cursor.fetchone()[0]


def test_the_connections_cursors_read_timestamps_with_the_rooms_loader():
    with connection.cursor() as cursor:
        assert cursor.cursor.adapters.get_loader(TIMESTAMPTZ, Format.TEXT) is UtcTimestampLoader
    # Writing is Django's as before.
    assert connection.connection.adapters.get_dumper(datetime.datetime, PyFormat.AUTO)


@pytest.mark.parametrize(
    "text",
    [
        "2026-12-06 23:07:06.123456+00",
        "2026-12-06 23:07:06.1+00",
        "2026-12-06 23:07:06+00",
        "2026-12-07 04:37:06.5+05:30",  # written back in UTC by the session
        "1969-07-20 20:17:40-04",
        "0001-01-01 00:00:00+00",
        "9999-12-31 23:59:59.999999+00",
        "epoch",
    ],
)
def test_a_timestamp_is_the_value_djangos_loader_reads_in_utc(text):
    ours = read(text)
    assert ours == read(text, djangos=True)
    assert ours.tzinfo is datetime.UTC


def test_the_servers_iso_output_is_read_without_djangos_loader(monkeypatch):
    def refuse(self, data):
        raise AssertionError(f"Django's loader read {bytes(data)!r}")

    monkeypatch.setattr(BaseTzLoader, "load", refuse)
    assert read("2026-12-06 23:07:06.5+00") == datetime.datetime(
        2026, 12, 6, 23, 7, 6, 500000, tzinfo=datetime.UTC
    )
    with pytest.raises(AssertionError, match="Django's loader read b'infinity'"):
        read("infinity")


@pytest.mark.parametrize(
    "settings",
    [
        "SET LOCAL DateStyle TO 'SQL, DMY'",
        "SET LOCAL DateStyle TO 'German'",
        "SET LOCAL DateStyle TO 'Postgres, MDY'",
        "SET LOCAL TIME ZONE 'Asia/Kolkata'",
    ],
)
def test_another_date_style_or_zone_is_read_by_djangos_loader(settings):
    def outcome(**kwargs) -> object:
        try:
            value = read("2026-12-06 23:07:06.25+00", settings=settings, **kwargs)
        except Exception as exc:  # psycopg reads some styles only (NotImplementedError)
            return type(exc), str(exc)
        return value, value.tzinfo

    assert outcome() == outcome(djangos=True)


@pytest.mark.parametrize("text", ["infinity", "-infinity", "2026-12-06 23:07:06+00 BC"])
def test_a_timestamp_python_cannot_hold_is_refused_as_djangos_loader_refuses_it(text):
    with pytest.raises(DataError) as djangos:
        read(text, djangos=True)
    with pytest.raises(DataError) as ours:
        read(text)
    assert str(ours.value) == str(djangos.value)
