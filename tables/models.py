"""Stake levels and tables, as admins configure them.

A `StakeLevel` holds every setting of RULES.md that belongs to the stakes (game,
structure, blinds, bets, ante, buy-in range, rake and the optional rules); a `Table`
holds its stake level, a name, its seat count, its timing settings and whether it is
open. The engine's `TableConfig` is built from these (see tables.engine.config).
Money is integer cents everywhere.
"""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q


class Game(models.TextChoices):
    OMAHA = "omaha", "Omaha Hi"
    OMAHA8 = "omaha8", "Omaha Hi-Lo 8 or better"
    HOLDEM = "holdem", "Texas Hold'em"


class Structure(models.TextChoices):
    FIXED_LIMIT = "FL", "Fixed limit"
    SPREAD_LIMIT = "SL", "Spread limit"
    POT_LIMIT = "PL", "Pot limit"
    NO_LIMIT = "NL", "No limit"


class Kill(models.TextChoices):
    NONE = "none", "No kill"
    FULL = "full", "Full kill (limits x2)"
    HALF = "half", "Half kill (limits x1.5)"


def cents() -> models.BigIntegerField:
    return models.BigIntegerField(validators=[MinValueValidator(0)])


class StakeLevel(models.Model):
    name = models.CharField(max_length=80, unique=True)
    game = models.CharField(max_length=8, choices=Game.choices)
    structure = models.CharField(max_length=2, choices=Structure.choices)
    small_blind = models.BigIntegerField(
        validators=[MinValueValidator(0)],
        help_text="Cents. RULES §2: half the big blind, rounded down to a whole unit.",
    )
    big_blind = models.BigIntegerField(
        validators=[MinValueValidator(1)], help_text="Cents; equals the small bet."
    )
    small_bet = models.BigIntegerField(
        validators=[MinValueValidator(1)], help_text="Cents: the fixed-limit bet preflop/flop."
    )
    big_bet = models.BigIntegerField(
        validators=[MinValueValidator(1)], help_text="Cents: the fixed-limit bet turn/river."
    )
    spread_min = models.BigIntegerField(
        default=0, validators=[MinValueValidator(0)], help_text="Spread limit: smallest bet."
    )
    spread_max = models.BigIntegerField(
        default=0, validators=[MinValueValidator(0)], help_text="Spread limit: largest bet."
    )
    ante = models.BigIntegerField(default=0, validators=[MinValueValidator(0)])
    buy_in_min = models.BigIntegerField(validators=[MinValueValidator(1)])
    buy_in_max = models.BigIntegerField(validators=[MinValueValidator(1)])
    rake_percent_bp = models.PositiveIntegerField(
        "rake (basis points)",
        default=500,
        validators=[MaxValueValidator(10_000)],
        help_text="500 = 5.00 %.",
    )
    rake_cap_2 = models.BigIntegerField(
        "rake cap, 2 players", default=300, validators=[MinValueValidator(0)]
    )
    rake_cap_3_4 = models.BigIntegerField(
        "rake cap, 3-4 players", default=300, validators=[MinValueValidator(0)]
    )
    rake_cap_5_plus = models.BigIntegerField(
        "rake cap, 5+ players", default=300, validators=[MinValueValidator(0)]
    )
    no_flop_no_drop = models.BooleanField(default=True)
    min_bet_doubles_late = models.BooleanField(default=False)
    allow_straddle = models.BooleanField(default=False)
    allow_chop = models.BooleanField(default=False)
    kill = models.CharField(max_length=4, choices=Kill.choices, default=Kill.NONE)
    kill_min_pot = models.BigIntegerField(default=0, validators=[MinValueValidator(0)])
    killer_acts_last = models.BooleanField(default=True)
    allow_overblind = models.BooleanField(default=False)
    allin_protection = models.BooleanField(default=True)
    allin_protection_per_day = models.PositiveIntegerField(
        default=0, help_text="0 = unlimited; counted over a rolling 24 hours."
    )
    rathole_minutes = models.PositiveIntegerField(default=60)

    class Meta:
        ordering = ["game", "structure", "big_blind"]
        constraints = [
            models.CheckConstraint(
                condition=Q(buy_in_min__lte=F("buy_in_max")), name="stake_buy_in_range"
            ),
            models.CheckConstraint(
                condition=Q(small_blind__lte=F("big_blind")), name="stake_small_blind_le_big"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class TableStatus(models.TextChoices):
    OPEN = "open", "Open"
    PAUSED = "paused", "Paused (finish the hand, deal no more)"
    CLOSED = "closed", "Closed"


class Table(models.Model):
    name = models.CharField(max_length=80, unique=True)
    stake_level = models.ForeignKey(StakeLevel, on_delete=models.PROTECT, related_name="tables")
    seats = models.PositiveSmallIntegerField(
        default=9, validators=[MinValueValidator(2), MaxValueValidator(10)]
    )
    status = models.CharField(max_length=6, choices=TableStatus.choices, default=TableStatus.OPEN)
    action_seconds = models.PositiveIntegerField(default=10)
    time_bank_seconds = models.PositiveIntegerField(default=20)
    reconnect_bonus_seconds = models.PositiveIntegerField(default=20)
    pause_between_hands_ms = models.PositiveIntegerField(default=3000)
    # Version of the table's event stream (STYLE §7): every broadcast event gets the next one.
    event_seq = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(seats__gte=2) & Q(seats__lte=10), name="table_seats_2_to_10"
            ),
        ]

    def __str__(self) -> str:
        return self.name
