"""RULES.md's defaults on the stake level (issue #13): an admin who leaves the small blind,
the bets or the buy-ins empty gets what RULES §2 (finer point 14) and §4 derive from the
big blind; any value typed in is kept."""

import pytest

from tables.bots.stakes import DEMO_STAKES
from tables.models import StakeLevel
from tables.services.config import stake_config

pytestmark = pytest.mark.django_db

REQUIRED = {
    "game": "omaha",
    "structure": "PL",
    "spread_min": 0,
    "spread_max": 0,
    "ante": 0,
    "rathole_minutes": 60,
    "rake_percent_bp": 500,
    "rake_cap_2": 100,
    "rake_cap_3_4": 200,
    "rake_cap_5_plus": 300,
    "kill": "none",
    "kill_min_pot": 0,
    "allin_protection_per_day": 0,
}
EMPTY = {"small_blind": "", "small_bet": "", "big_bet": "", "buy_in_min": "", "buy_in_max": ""}


@pytest.mark.parametrize(
    ("big_blind", "expected"),
    [
        # big blind: small blind, small bet, big bet, buy-in min, buy-in max
        (50, (25, 50, 100, 1_000, 5_000)),  # 0.25/0.50: 20 big blinds
        (25, (12, 25, 50, 500, 2_500)),  # finer point 14: half, down to the cent
        (500, (200, 500, 1_000, 5_000, 50_000)),  # $5/$10 limit: small blind $2
        (600, (300, 600, 1_200, 6_000, 60_000)),  # 3/6: 10 big blinds
        (2_000, (1_000, 2_000, 4_000, 20_000, 200_000)),
    ],
)
def test_an_admin_who_leaves_the_amounts_empty_gets_the_rules_defaults(
    admin_client, big_blind, expected
):
    data = {**REQUIRED, **EMPTY, "name": f"PLO {big_blind}", "big_blind": big_blind}
    response = admin_client.post("/admin/tables/stakelevel/add/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    stake = StakeLevel.objects.get(name=f"PLO {big_blind}")
    got = (stake.small_blind, stake.small_bet, stake.big_bet, stake.buy_in_min, stake.buy_in_max)
    assert got == expected


def test_values_the_admin_types_are_kept_and_only_the_empty_ones_filled(admin_client):
    data = {**REQUIRED, **EMPTY, "name": "PLO odd", "big_blind": 200}
    data.update(small_blind=50, buy_in_min=10_000)
    assert admin_client.post("/admin/tables/stakelevel/add/", data).status_code == 302
    stake = StakeLevel.objects.get(name="PLO odd")
    assert (stake.small_blind, stake.buy_in_min, stake.buy_in_max) == (50, 10_000, 20_000)
    assert (stake.small_bet, stake.big_bet) == (200, 400)


def test_a_minimum_above_the_default_maximum_is_not_met_by_a_smaller_maximum(admin_client):
    data = {**REQUIRED, **EMPTY, "name": "PLO deep", "big_blind": 100, "buy_in_min": 20_000}
    assert admin_client.post("/admin/tables/stakelevel/add/", data).status_code == 302
    stake = StakeLevel.objects.get(name="PLO deep")
    assert (stake.buy_in_min, stake.buy_in_max) == (20_000, 20_000)


def test_a_stake_level_made_in_code_without_the_amounts_gets_them_too():
    stake = StakeLevel.objects.create(name="NL 1/2", game="holdem", structure="NL", big_blind=200)
    stake.refresh_from_db()
    assert (stake.small_blind, stake.buy_in_min, stake.buy_in_max) == (100, 2_000, 20_000)


def test_the_demo_catalogue_is_made_of_the_same_defaults():
    for spec in DEMO_STAKES:
        fields = spec.fields()
        stake = StakeLevel(
            name=spec.name, game=spec.game, structure=spec.structure, big_blind=spec.big_blind
        )
        stake.defaults_fill()
        for name in ("small_blind", "small_bet", "big_bet", "buy_in_min", "buy_in_max"):
            assert getattr(stake, name) == fields[name], (spec.name, name)


def test_run_it_twice_is_off_by_default_and_an_admin_turns_it_on(admin_client):
    page = admin_client.get("/admin/tables/stakelevel/add/").content.decode()
    assert 'name="run_it_twice"' in page
    data = {**REQUIRED, **EMPTY, "name": "NL twice", "big_blind": 200}
    assert admin_client.post("/admin/tables/stakelevel/add/", data).status_code == 302
    assert stake_config(stake=StakeLevel.objects.get(name="NL twice")).run_it_twice is False
    data = {**data, "name": "NL twice on", "run_it_twice": "on"}
    assert admin_client.post("/admin/tables/stakelevel/add/", data).status_code == 302
    assert stake_config(stake=StakeLevel.objects.get(name="NL twice on")).run_it_twice is True
