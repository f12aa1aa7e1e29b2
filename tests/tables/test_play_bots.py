"""The bots: their strategy against the real engine, and whole runs against a live room.

The live test starts daphne and the timer loop on the test database (`live_room`); the
bots log in over HTTP, deposit through the cashier API and play over the WebSocket, as
browsers would. The database is read only to check what they did. One run has its web
process killed and restarted midway: the bots must ride through it.
"""

import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from cashier.models import AccountKind, LedgerAccount
from tables.bots.player import frame_messages
from tables.bots.runner import role_for, run_bots
from tables.bots.setup import table_variant
from tables.bots.stakes import DEMO_STAKES
from tables.bots.strategy import PROFILES, Decision, choose_action, legal_options
from tables.engine.actions import Action
from tables.engine.deck import shuffled_deck
from tables.engine.state import SeatEntry, apply, start_hand
from tables.ledger import table_ledger_reference
from tables.models import Hand, HandEvent, HandStatus, Seat, StakeLevel, Table
from tables.services.config import stake_config
from tests.conftest import ROOT, answers, database_url_for, free_port, wait_until_up

# -- strategy --------------------------------------------------------------------------------


def _engine_action(seat: int, decision: Decision) -> Action:
    if decision.action == "bet_raise":
        assert decision.amount is not None
        return Action.bet_raise(seat, decision.amount)
    return Action(decision.action, seat)  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", DEMO_STAKES, ids=lambda spec: spec.name)
def test_every_decision_is_legal_in_every_game_and_structure(spec):
    """Random hands of every catalogue stake (straddled and overblinded ones too): the
    engine accepts every bot decision."""
    config = stake_config(stake=StakeLevel(**spec.fields()))
    rng = random.Random(spec.name)
    for hand in range(40):
        players = rng.randint(2, 6)
        entries = [
            SeatEntry(
                seat=seat,
                player=f"p{seat}",
                # Short stacks too, so that short calls and all-ins for less come up.
                stack=rng.choice([rng.randint(1, 4 * spec.big_blind), 100 * spec.big_blind]),
                # Straddles and overblinds where the stake level has them (the bots ask).
                straddle=spec.allow_straddle and rng.random() < 0.5,
                overblind=spec.allow_overblind and rng.random() < 0.3,
            )
            for seat in range(1, players + 1)
        ]
        state, _ = start_hand(config, entries, button=1 + hand % players, deck=shuffled_deck())
        profile = PROFILES[hand % len(PROFILES)]
        while not state.over:
            legal = state.legal_actions()
            decision = choose_action(legal.to_dict(), rng=rng, profile=profile)
            state, _ = apply(state, _engine_action(legal.seat, decision))


def test_a_capped_round_offers_only_fold_and_call():
    legal = {
        "seat": 3,
        "can_fold": True,
        "can_check": False,
        "call_amount": 200,
        "call_all_in": False,
        "can_bet_raise": False,
        "is_bet": False,
        "min_to": None,
        "max_to": None,
        "all_in_to": 5_000,
        "raise_closed": "betting_capped",
    }
    rng = random.Random(1)
    seen = {choose_action(legal, rng=rng, profile=p).action for p in PROFILES for _ in range(50)}
    assert seen == {"fold", "call"}


def test_bets_stay_within_the_bounds_and_an_all_in_is_offered_only_when_allowed():
    no_limit = {
        "can_fold": False,
        "can_check": True,
        "call_amount": None,
        "can_bet_raise": True,
        "min_to": 200,
        "max_to": 9_000,
        "all_in_to": 9_000,
    }
    pot_limit = {**no_limit, "max_to": 700}
    rng = random.Random(2)
    for legal in (no_limit, pot_limit):
        for _ in range(300):
            decision = choose_action(legal, rng=rng, profile=PROFILES[3])
            assert decision.action in ("check", "bet_raise")
            if decision.amount is not None:
                assert legal["min_to"] <= decision.amount <= legal["max_to"]
    assert "all_in" in {tag for tag, _ in legal_options(no_limit)}
    assert "all_in" not in {tag for tag, _ in legal_options(pot_limit)}


def test_the_first_tables_cover_every_game_and_structure_and_misbehave_on_two_seats():
    variants = [table_variant(i) for i in range(12)]
    assert len(set(variants)) == 12
    assert {g for g, _ in variants[:4]} == {"omaha", "omaha8", "holdem"}
    assert {s for _, s in variants[:4]} == {"FL", "SL", "PL", "NL"}
    roles = [[role_for(table=t, position=p, misbehave=True) for p in range(4)] for t in range(3)]
    assert all(row[0] == "steady" and row[3] == "steady" for row in roles)
    assert {row[1] for row in roles} == {"sleepy", "flaky", "lossy"}


# -- live runs --------------------------------------------------------------------------------


def _played(table_ids: list[int]) -> dict[str, object]:
    finished = {
        table_id: Hand.objects.filter(table_id=table_id, status=HandStatus.FINISHED).count()
        for table_id in table_ids
    }
    return {
        "finished": finished,
        "in_progress": Hand.objects.filter(
            table_id__in=table_ids, status=HandStatus.IN_PROGRESS
        ).count(),
        "events": HandEvent.objects.filter(hand__table_id__in=table_ids).count(),
        "seated": Seat.objects.filter(table_id__in=table_ids).count(),
        "table_chips": sum(
            LedgerAccount.objects.filter(
                kind=AccountKind.TABLE,
                reference__in=[table_ledger_reference(table_id=pk) for pk in table_ids],
            ).values_list("balance", flat=True)
        ),
    }


@pytest.mark.django_db(transaction=True)
async def test_bots_play_real_hands_and_take_their_stacks_home(live_room):
    report = await run_bots(live_room, 2, 3, 3, seed=11, timeout_seconds=90)
    print(report.render())  # shown with -s

    assert report.ok, report.render()
    assert not report.errors_unexpected
    ids = [table.id for table in report.tables]
    played = await database_sync_to_async(_played)(ids)
    for table in report.tables:
        assert table.hands >= 3, report.render()
        assert played["finished"][table.id] == table.hands
    assert played["in_progress"] == 0
    assert played["events"] > 0
    # Everybody left and every chip went back to a wallet (the wallets are checked by each
    # bot against its own books; the ledger audit after the test checks the rest).
    assert played["seated"] == 0
    assert played["table_chips"] == 0
    assert report.actions > 0
    assert len(report.latencies) > 0
    assert report.deposits == 6  # new bots: one deposit each, over the API


@pytest.mark.django_db(transaction=True)
def test_play_bots_command_plays_and_a_second_run_reuses_bots_and_tables(
    live_room, capsys, tmp_path
):
    trace = tmp_path / "heads-up.jsonl"
    for run in range(2):
        call_command(
            "play_bots",
            url=live_room.replace("http", "ws"),
            tables=1,
            players_per_table=2,
            hands=1,
            steady=True,
            prefix="cmdbot",
            timeout=60,
            trace=trace if run == 0 else tmp_path / "second.jsonl",
        )
    out = capsys.readouterr().out
    assert out.count("\nOK") == 2, out
    assert Seat.objects.count() == 0, (out, list(Seat.objects.values()))
    assert Table.objects.filter(name__startswith="Bots ").count() == 1

    # The first run's frames, as one player saw them: the protocol as documented.
    frames = [json.loads(line) for line in trace.read_text().splitlines()]
    sent = [f["frame"] for f in frames if f["bot"] == "cmdbot001" and f["dir"] == "send"]
    received = [
        message
        for f in frames
        if f["bot"] == "cmdbot001" and f["dir"] == "recv"
        for message in frame_messages(f["frame"])
    ]
    # A command's stream messages come together, one frame each (the deals, at least).
    assert any(
        isinstance(f["frame"], list) and len(f["frame"]) > 1
        for f in frames
        if f["bot"] == "cmdbot001" and f["dir"] == "recv"
    )
    assert received[0]["type"] == "snapshot"
    # Nothing lost (the order may differ: see docs/protocol.md, "Ordering").
    versions = sorted({m["v"] for m in received[1:] if "v" in m and m["type"] != "snapshot"})
    assert versions == list(range(versions[0], versions[-1] + 1))
    holes = [m for m in received if m.get("type") == "hole_cards"]
    assert sorted("cards" in m for m in holes) == [False, True]
    answers = [m for m in received if m.get("type") in ("ack", "error")]
    assert [(m["type"], m["seq"]) for m in answers] == [("ack", f["seq"]) for f in sent]
    assert any(m.get("type") == "seat_left" and m["player"] == "cmdbot001" for m in received)


@pytest.mark.django_db(transaction=True)
def test_play_bots_fails_on_a_room_that_is_not_there():
    with pytest.raises(CommandError):
        call_command("play_bots", url="ws://127.0.0.1:9", tables=1, hands=1, timeout=20)


# -- a web restart mid-run ---------------------------------------------------------------------


class RestartableDaphne:
    """A daphne of this test alone (test database, the suite's Redis prefix and queue) on a
    fixed port, that the test may kill and start again, as a crash and a restart do."""

    def __init__(self, log: Path, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.env = env or {}
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        env = dict(os.environ) | self.env
        env["DJANGO_SETTINGS_MODULE"] = "poker_room.settings.test"
        env["DATABASE_URL"] = database_url_for(settings.DATABASES["default"])
        args = ["daphne", "-b", "127.0.0.1", "-p", str(self.port), "poker_room.asgi:application"]
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", *args],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_until_up(self.proc, lambda: answers(f"{self.url}/healthz"), "daphne")

    def kill(self) -> None:
        """SIGKILL: no goodbye to the sockets, its channels left in the groups."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=20)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _finished_hands() -> int:
    return Hand.objects.filter(status=HandStatus.FINISHED).count()


@pytest.mark.django_db(transaction=True)
async def test_bots_ride_through_a_web_restart_and_leave_with_their_chips(timer_process, tmp_path):
    """The web process is killed after the first hand and started again: the bots
    reconnect with backoff, finish their hands, leave, and their stacks go home."""
    daphne = RestartableDaphne(tmp_path / "daphne.log")
    await asyncio.to_thread(daphne.start)
    try:
        run = asyncio.create_task(
            run_bots(
                daphne.url, 1, 3, 5, seed=7, misbehave=False, timeout_seconds=240,
                stall_seconds=90,
            )
        )  # fmt: skip
        async with asyncio.timeout(120):
            while await database_sync_to_async(_finished_hands)() < 1:
                assert not run.done(), run.result().render()
                await asyncio.sleep(0.2)
        await asyncio.to_thread(daphne.kill)
        await asyncio.sleep(1)
        await asyncio.to_thread(daphne.start)
        report = await run
    finally:
        await asyncio.to_thread(daphne.stop)
    print(report.render())  # shown with -s

    assert report.ok, report.render()
    assert report.restarts_seen >= 1, report.render()
    played = await database_sync_to_async(_played)([table.id for table in report.tables])
    for table in report.tables:
        assert table.hands >= 5, report.render()
        # A hand dealt and finished while the bots were away is one they never saw.
        assert played["finished"][table.id] >= table.hands
    assert played["in_progress"] == 0
    assert played["seated"] == 0
    assert played["table_chips"] == 0
