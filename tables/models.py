"""Stake levels and tables, as admins configure them.

A `StakeLevel` holds every setting of RULES.md that belongs to the stakes (game,
structure, blinds, bets, ante, buy-in range, rake and the optional rules); a `Table`
holds its stake level, a name, its seat count, its timing settings and whether it is
open. The engine's `TableConfig` is built from these (see tables.engine.config).
Seats, hands, their players and events follow, then the rake accounting (who paid each
hand's rake, and the daily reports). Money is integer cents everywhere.
"""

from typing import Any

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from tables.engine.config import default_buy_in_range, default_small_blind


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
    # Left empty in the admin, the amounts RULES.md derives from the big blind are filled
    # in (`defaults_fill`).
    small_blind = models.BigIntegerField(
        blank=True,
        validators=[MinValueValidator(0)],
        help_text="Cents. Empty: half the big blind, rounded down to a whole unit from a "
        "2-unit big blind up (RULES §2, finer point 14).",
    )
    big_blind = models.BigIntegerField(
        validators=[MinValueValidator(1)], help_text="Cents; equals the small bet."
    )
    small_bet = models.BigIntegerField(
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Cents: the fixed-limit bet preflop/flop. Empty: the big blind.",
    )
    big_bet = models.BigIntegerField(
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Cents: the fixed-limit bet turn/river. Empty: twice the small bet.",
    )
    spread_min = models.BigIntegerField(
        default=0, validators=[MinValueValidator(0)], help_text="Spread limit: smallest bet."
    )
    spread_max = models.BigIntegerField(
        default=0, validators=[MinValueValidator(0)], help_text="Spread limit: largest bet."
    )
    ante = models.BigIntegerField(default=0, validators=[MinValueValidator(0)])
    buy_in_min = models.BigIntegerField(
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Cents. Empty: 20 big blinds up to a 50-cent big blind, else 10 (RULES §4).",
    )
    buy_in_max = models.BigIntegerField(
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Cents. Empty: 100 big blinds (RULES §4).",
    )
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
    run_it_twice = models.BooleanField(
        default=False,
        help_text="When the players still in are all-in before the river and all agree in "
        "time, the rest of the board is dealt twice and every pot split between the runs.",
    )
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

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.defaults_fill()
        super().save(*args, **kwargs)

    def defaults_fill(self) -> None:
        """Fill the amounts left empty with RULES.md's defaults for the big blind."""
        if self.big_blind is None:
            return
        if self.small_blind is None:
            self.small_blind = default_small_blind(self.big_blind)
        if self.small_bet is None:
            self.small_bet = self.big_blind
        if self.big_bet is None:
            self.big_bet = 2 * self.small_bet
        minimum, maximum = default_buy_in_range(self.big_blind)
        if self.buy_in_min is None:
            self.buy_in_min = minimum
        if self.buy_in_max is None:
            self.buy_in_max = max(maximum, self.buy_in_min)


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
    chat_for_spectators = models.BooleanField(
        default=True,
        help_text="Spectators read the table's chat. Off: only the players seated read it.",
    )
    # Version of the table's event stream (STYLE §7): every broadcast event gets the next one.
    event_seq = models.BigIntegerField(default=0)
    # Seat of the last hand's button: the next hand's moves clockwise from it.
    button_seat = models.PositiveSmallIntegerField(null=True, blank=True)
    # When the timer loop tries the next deal (tables/timers.py): set when a hand ends
    # (the next may start from then on: the pause between hands), or to "now" by a command
    # that may make a deal possible; cleared by a deal, or by a try that could not deal.
    next_hand_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Commands that failed in a row with an unexpected error (a bug, not a refusal); at
    # two the table is paused with `paused_reason`, which the room status and the admin show.
    # Re-opening the table in the admin clears both (tables/services/command.py).
    failure_count = models.PositiveIntegerField(default=0, editable=False)
    paused_reason = models.CharField(max_length=500, blank=True, default="", editable=False)
    # The table's account in the chip ledger (tables/ledger.py), set when it is opened
    # (the first buy-in): read with the table, so that a hand's rake and a player's
    # cash-out do not look it up. Never changes, so no index: an action updates the
    # table row in place.
    ledger_account = models.ForeignKey(
        "cashier.LedgerAccount",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        editable=False,
        db_index=False,
        related_name="+",
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(seats__gte=2) & Q(seats__lte=10), name="table_seats_2_to_10"
            ),
        ]
        indexes = [
            # The timer loop's deals due (tables/timers.py): open tables not paused.
            models.Index(
                fields=["next_hand_at"],
                condition=Q(status="open", paused_reason="", next_hand_at__isnull=False),
                name="table_next_hand_due",
            )
        ]

    def __str__(self) -> str:
        return self.name


class Heartbeat(models.Model):
    """When a periodic job of the room last ran (`timers`: the timer loop; `celery`: beat's
    heartbeat task), for the room status (poker_room/room_status.py)."""

    name = models.CharField(max_length=40, primary_key=True)
    at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} at {self.at:%Y-%m-%d %H:%M:%S}"


class StreamOutage(models.Model):
    """A time the tables' stream could not reach the players (Redis unreachable from the
    timer loop): the loop timed no turn out and dealt no hand from `started_at`; once the
    stream was back (`back_at`) every turn still running was given a fresh clock, and the
    outage ended when all had been (`ended_at`). Kept here, not in the loop's memory: a
    loop that takes over or restarts during the outage finds it (tables/stream_outage.py).
    """

    started_at = models.DateTimeField()
    back_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            # One outage open at most (its NULL `ended_at` counts as equal to another's).
            models.UniqueConstraint(
                fields=["ended_at"],
                condition=Q(ended_at__isnull=True),
                nulls_distinct=False,
                name="stream_outage_one_open",
            ),
        ]

    def __str__(self) -> str:
        return f"table stream outage from {self.started_at:%Y-%m-%d %H:%M:%S}"


class SeatStatus(models.TextChoices):
    # Seated, waiting for the big blind to reach them (or to post one; RULES §4).
    WAITING = "waiting", "Waiting for the big blind"
    # Dealt into the next hand.
    ACTIVE = "active", "Playing"
    SITTING_OUT = "sitting_out", "Sitting out"


class Seat(models.Model):
    """A player sitting at a table. The row exists while they sit; leaving deletes it.

    `stack` is the player's chips at the table as of the last hand's settlement; while a
    hand is in progress the hand's engine state holds the live figure. The table's
    ledger account always equals the sum of its seats' `stack`.
    """

    # No index of its own: `seat_unique_number` (table, number) starts with the same
    # column and serves every lookup by table. An index that serves no lookup still
    # costs a write with every insert (and every update not made in place); the hands'
    # foreign keys below go without one for the same reason.
    table = models.ForeignKey(
        Table, on_delete=models.PROTECT, related_name="seat_set", db_index=False
    )
    number = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    player = models.ForeignKey("accounts.User", on_delete=models.PROTECT, related_name="seats")
    stack = models.BigIntegerField(validators=[MinValueValidator(0)])
    status = models.CharField(max_length=11, choices=SeatStatus.choices, default=SeatStatus.WAITING)
    post_big_blind = models.BooleanField(
        default=False, help_text="Post a live big blind to be dealt in at once."
    )
    wants_straddle = models.BooleanField(default=False)
    wants_overblind = models.BooleanField(default=False)
    leave_after_hand = models.BooleanField(default=False)
    sit_out_after_hand = models.BooleanField(default=False)
    consecutive_timeouts = models.PositiveSmallIntegerField(default=0)
    # A ticked advance action (fold, check, check_fold, call, bet_raise) waiting for the
    # player's turn, with the situation it was ticked in (see services/advance.py).
    advance = models.JSONField(null=True, blank=True)
    # The player's last connection to the table closed (no other socket of theirs open on
    # that server process) at `dropped_at`, during their own turn `dropped_turn` (the
    # hand's `turn_version`) if it was theirs. The reconnect bonus is for that turn only;
    # their next connection clears both (services/play.py seat_disconnected/_reconnected).
    dropped_at = models.DateTimeField(null=True, blank=True)
    dropped_turn = models.PositiveIntegerField(null=True, blank=True)
    sat_down_at = models.DateTimeField(auto_now_add=True)
    # The buy-in that made this seat: a retried sit request (same idempotency key) finds
    # its seat through it and is answered as the first time, never seated twice.
    buy_in_transaction = models.OneToOneField(
        "cashier.LedgerTransaction",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="seat",
    )

    class Meta:
        ordering = ["table", "number"]
        constraints = [
            models.UniqueConstraint(fields=["table", "number"], name="seat_unique_number"),
            models.UniqueConstraint(fields=["table", "player"], name="seat_one_per_player"),
            models.CheckConstraint(condition=Q(stack__gte=0), name="seat_stack_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.table} seat {self.number}"


class HandStatus(models.TextChoices):
    IN_PROGRESS = "in_progress", "In progress"
    FINISHED = "finished", "Finished"


class Hand(models.Model):
    """One hand: the engine state as JSON, its rules, and the deck commitment.

    The deck and salt sit in `state` during play and are only ever shown to auditors
    after the hand (RULES §9).
    """

    # No index of its own (`hand_unique_number` serves lookups by table, as on Seat). No
    # index may cover a column an action changes (`HAND_FIELDS_OF_PLAY` in
    # tables/services/command.py; tests/foundation/test_schema.py checks):
    # PostgreSQL then updates the row in place (HOT), writing no index entry, and prunes
    # its old versions from the page without a vacuum. Indexing `turn_deadline` wrote
    # an entry in each of the hand's four indexes at every action.
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="hands", db_index=False)
    number = models.PositiveIntegerField(help_text="Counts the table's hands from 1.")
    status = models.CharField(
        max_length=11, choices=HandStatus.choices, default=HandStatus.IN_PROGRESS
    )
    state = models.JSONField(help_text="The engine's hand state.")
    button = models.PositiveSmallIntegerField()
    deck_commitment = models.CharField(max_length=64)
    # Secret until the hand ends; then shown to auditors with the deck (RULES §9).
    salt = models.CharField(max_length=64)
    # The turn now waiting: bumped on every action so a stale timeout task does nothing.
    turn_version = models.PositiveIntegerField(default=0)
    turn_deadline = models.DateTimeField(null=True, blank=True)
    # The reconnect bonus is granted once per decision (RULES finer point 10).
    turn_bonus_used = models.BooleanField(default=False)
    events_logged = models.PositiveIntegerField(default=0)
    rake = models.BigIntegerField(default=0)
    # Set by the deal (its rows are written at the end of the deal's command, which may
    # settle the hand too: stamped then, a hand would end before it started).
    started_at = models.DateTimeField(default=timezone.now, editable=False)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at"]
        constraints = [
            models.UniqueConstraint(fields=["table", "number"], name="hand_unique_number"),
            models.UniqueConstraint(
                fields=["table"],
                condition=Q(status="in_progress"),
                name="hand_one_in_progress_per_table",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.table} hand #{self.number}"


class HandEvent(models.Model):
    """The append-only log of a hand: one row per engine or table event, in order."""

    # Indexed by `hand_event_unique_seq` (about 45 rows a hand: the most written table).
    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="events", db_index=False)
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=32)
    data = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["hand", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["hand", "seq"], name="hand_event_unique_seq"),
        ]

    def __str__(self) -> str:
        return f"{self.hand} event {self.seq} {self.type}"


class ProtectionUse(models.Model):
    """One all-in protection a player received, for `allin_protection_per_day`."""

    player = models.ForeignKey(
        "accounts.User", on_delete=models.PROTECT, related_name="protections"
    )
    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="protections")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.player} protected in {self.hand}"


class Departure(models.Model):
    """A player leaving a stake level with a stack, for the no-ratholing rule (RULES §4).

    Owed by the player's next sit at the stake level within `rathole_minutes`, until a
    sit honours it (`honoured_by`: the buy-in of that sit; the rule is
    `tables.selectors.rathole_departure`'s).
    """

    player = models.ForeignKey("accounts.User", on_delete=models.PROTECT, related_name="departures")
    stake_level = models.ForeignKey(StakeLevel, on_delete=models.PROTECT)
    stack = models.BigIntegerField(validators=[MinValueValidator(0)])
    left_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # The buy-in of the sit that honoured it. One-to-one: a sit honours one departure at
    # most (one return to the stake level answers one departure).
    honoured_by = models.OneToOneField(
        "cashier.LedgerTransaction",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="honoured_departure",
    )

    def __str__(self) -> str:
        return f"{self.player} left {self.stake_level} with {self.stack}"


class HandPlayer(models.Model):
    """Who was dealt into a hand at which seat: the user, and their screen name then.

    Written when the hand is dealt. Every question of who a hand's player is (whose hole
    cards these are, whose turn, whose stack to settle, whose rake, whose history) is
    answered by `user`, never by the screen name in the engine state, which is kept for
    display and the hand-history formats: a screen name can be renamed and then taken by
    someone else.
    """

    # Indexed by the unique constraints and the index below (see Seat).
    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="players", db_index=False)
    seat = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    user = models.ForeignKey(
        "accounts.User", on_delete=models.PROTECT, related_name="hand_seats", db_index=False
    )
    screen_name = models.CharField(max_length=150, help_text="The user's screen name then.")

    class Meta:
        ordering = ["hand", "seat"]
        constraints = [
            models.UniqueConstraint(fields=["hand", "seat"], name="hand_player_unique_seat"),
            models.UniqueConstraint(fields=["hand", "user"], name="hand_player_unique_user"),
        ]
        indexes = [models.Index(fields=["user", "hand"])]

    def __str__(self) -> str:
        return f"{self.hand} seat {self.seat}: {self.screen_name}"


class ChatMessage(models.Model):
    """A line of a table's chat, kept for staff (the admin lists them) and for the
    snapshot's recent lines."""

    # Indexed by the Meta indexes that start with each (see Seat).
    table = models.ForeignKey(
        Table, on_delete=models.CASCADE, related_name="chat_messages", db_index=False
    )
    author = models.ForeignKey(
        "accounts.User", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    # The author's seat when they wrote it (they may have left since).
    seat = models.PositiveSmallIntegerField()
    text = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["table", "created_at"]),
            models.Index(fields=["author", "table", "created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.author} at {self.table}: {self.text[:40]}"


class ChatMute(models.Model):
    """`muter` no longer reads `muted`'s chat, at any table."""

    # Indexed by `chat_mute_once` (see Seat).
    muter = models.ForeignKey(
        "accounts.User", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    muted = models.ForeignKey("accounts.User", on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["muter", "muted"], name="chat_mute_once"),
        ]

    def __str__(self) -> str:
        return f"{self.muter} mutes {self.muted}"


class AutoTopUp(models.TextChoices):
    OFF = "off", "Off"
    MAX = "max", "Back to the maximum buy-in after every hand"
    BELOW = "below", "Back to the maximum when below a number of big blinds"


class PlayerSettings(models.Model):
    """A player's table settings, the same at every table they sit at."""

    user = models.OneToOneField(
        "accounts.User", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    auto_top_up = models.CharField(max_length=5, choices=AutoTopUp.choices, default=AutoTopUp.OFF)
    # For `below`: top up when the stack is under this many big blinds.
    auto_top_up_below = models.PositiveSmallIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.user}: auto top-up {self.auto_top_up}"


# ---------------------------------------------------------------------------------------
# Rake accounting (RULES.md section 6, finer point 13)
#
# The ledger holds the rake as one `rake` transaction per hand (table -> house). The rows
# below attribute it: `RakeContribution` is each player's share of one hand's rake, as the
# engine computed it (`HandResult.contributed_rake`), written in the transaction that
# settles the hand. The daily reports are derived data, rebuilt whole for a day by
# `tables.rake.rake_report_build` (a Celery beat task runs it for yesterday); they are
# never edited by hand.
# ---------------------------------------------------------------------------------------


class RakeContribution(models.Model):
    """One player's share of one hand's rake (only non-zero shares are stored)."""

    # Indexed by `rake_contribution_one_per_player` (see Seat).
    hand = models.ForeignKey(
        Hand, on_delete=models.PROTECT, related_name="rake_contributions", db_index=False
    )
    player = models.ForeignKey(
        "accounts.User", on_delete=models.PROTECT, related_name="rake_contributions"
    )
    seat = models.PositiveSmallIntegerField()
    amount = models.BigIntegerField(help_text="Cents.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["hand", "seat"]
        constraints = [
            models.UniqueConstraint(
                fields=["hand", "player"], name="rake_contribution_one_per_player"
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="rake_contribution_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.player} paid {self.amount} cents of rake in {self.hand}"


class RakeReport(models.Model):
    """The rake of one UTC day (hands that ended that day), all tables together."""

    date = models.DateField(unique=True)
    built_at = models.DateTimeField(default=timezone.now)
    hands = models.PositiveIntegerField()
    raked_hands = models.PositiveIntegerField()
    rake = models.BigIntegerField(help_text="Cents.")

    class Meta:
        ordering = ["-date"]

    def __str__(self) -> str:
        return f"rake report of {self.date}"

    @property
    def average_rake(self) -> int:
        """Rake per hand dealt, in cents rounded down."""
        return self.rake // self.hands if self.hands else 0


class RakeReportTable(models.Model):
    """One table's rake on the report's day, with the stake level it had then."""

    # Indexed by the unique constraint below (see Seat).
    report = models.ForeignKey(
        RakeReport, on_delete=models.CASCADE, related_name="tables", db_index=False
    )
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="+")
    stake_level = models.ForeignKey(StakeLevel, on_delete=models.PROTECT, related_name="+")
    hands = models.PositiveIntegerField()
    raked_hands = models.PositiveIntegerField()
    rake = models.BigIntegerField(help_text="Cents.")

    class Meta:
        ordering = ["report", "stake_level", "table"]
        constraints = [
            models.UniqueConstraint(fields=["report", "table"], name="rake_report_table_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.table} on {self.report.date}"

    @property
    def average_rake(self) -> int:
        """Rake per hand dealt, in cents rounded down."""
        return self.rake // self.hands if self.hands else 0


class RakeReportPlayer(models.Model):
    """One player's contributed rake on the report's day."""

    # Indexed by the unique constraint below (see Seat).
    report = models.ForeignKey(
        RakeReport, on_delete=models.CASCADE, related_name="players", db_index=False
    )
    player = models.ForeignKey("accounts.User", on_delete=models.PROTECT, related_name="+")
    raked_hands = models.PositiveIntegerField()
    rake = models.BigIntegerField(help_text="Cents.")

    class Meta:
        ordering = ["report", "-rake", "player"]
        constraints = [
            models.UniqueConstraint(fields=["report", "player"], name="rake_report_player_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.player} on {self.report.date}"
