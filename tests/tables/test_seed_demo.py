"""`seed_demo`: the demo data, created once, covering every game and structure by the rules."""

import pytest
from django.core.management import call_command

from accounts.models import User
from cashier.selectors import wallet_balance
from tables.bots.stakes import DEMO_STAKES
from tables.engine.config import default_small_blind
from tables.management.commands.seed_demo import DEMO_DEPOSIT, DEMO_PLAYERS, DEMO_TABLES
from tables.models import Game, StakeLevel, Structure, Table
from tables.services.config import stake_config

pytestmark = pytest.mark.django_db


def _counts() -> tuple[int, int, int]:
    return User.objects.count(), StakeLevel.objects.count(), Table.objects.count()


def test_seed_demo_is_idempotent():
    call_command("seed_demo")
    first = _counts()
    balances = {name: wallet_balance(user=User.objects.get(username=name)) for name in DEMO_PLAYERS}
    call_command("seed_demo")
    assert _counts() == first == (5, len(DEMO_STAKES), len(DEMO_TABLES))
    for name in DEMO_PLAYERS:
        user = User.objects.get(username=name)
        assert wallet_balance(user=user) == balances[name] == DEMO_DEPOSIT


def test_every_game_and_structure_has_a_stake_level_that_the_engine_accepts():
    call_command("seed_demo")
    stakes = list(StakeLevel.objects.all())
    assert {(s.game, s.structure) for s in stakes} == {
        (game, structure) for game in Game.values for structure in Structure.values
    }
    for stake in stakes:
        stake_config(stake=stake).validate()
        bb = stake.big_blind
        # RULES §2 and §4: the small blind, and 20 (or 10) to 100 big blinds.
        assert stake.small_blind == default_small_blind(bb)
        assert stake.buy_in_min == (20 if bb <= 50 else 10) * bb
        assert stake.buy_in_max == 100 * bb
        assert stake.small_bet == bb
        if stake.structure == Structure.SPREAD_LIMIT:
            assert 0 < stake.spread_min <= stake.spread_max
        assert (stake.kill != "none") <= (stake.structure in ("FL", "SL"))


def test_the_demo_tables_keep_the_default_timers():
    call_command("seed_demo")
    defaults = {f.name: f.default for f in Table._meta.get_fields() if hasattr(f, "default")}
    for table in Table.objects.all():
        assert table.action_seconds == defaults["action_seconds"]
        assert table.time_bank_seconds == defaults["time_bank_seconds"]
    assert {t.stake_level.game for t in Table.objects.select_related("stake_level")} == set(
        Game.values
    )
