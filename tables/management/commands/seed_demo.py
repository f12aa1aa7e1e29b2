"""Load the demo data once: users, stake levels of every game and structure, a few tables,
and a starting deposit for the players.

Safe to run again: what exists is left alone. The users are admin, alice, bob, carol and
an auditor (password `pokerdemo`); the stake levels are the catalogue of
tables.bots.stakes (Omaha, Omaha Hi-Lo 8 and Hold'em in fixed, spread, pot and no limit);
the tables keep the default timers. Deposits go through the cashier service with a fixed
idempotency key per player, so a second run deposits nothing.
"""

from django.core.management.base import BaseCommand
from django.db import transaction

from accounts.services import user_ensure
from cashier.services import deposit_create
from tables.bots.stakes import DEMO_STAKES, stake_level_ensure
from tables.models import StakeLevel, Table

DEMO_PASSWORD = "pokerdemo"
DEMO_USERS = [
    {"username": "admin", "staff": True},
    {"username": "alice"},
    {"username": "bob"},
    {"username": "carol"},
    {"username": "auditor", "auditor": True},
]
DEMO_PLAYERS = ("alice", "bob", "carol")
DEMO_DEPOSIT = 100_000  # cents: $1,000 each
# (table name, stake level name, seats)
DEMO_TABLES = [
    ("Amsterdam", "PLO 0.50/1", 6),
    ("Bergen", "Omaha Hi-Lo 8 FL 2/4 kill", 9),
    ("Cordoba", "Hold'em NL 1/2", 9),
    ("Dublin", "Hold'em SL 1-3", 6),
    ("Esbjerg", "Omaha Hi-Lo 8 PL 0.50/1", 6),
    ("Florence", "Hold'em FL 2/4", 10),
]


class Command(BaseCommand):
    help = "Create the demo users, stake levels, tables and starting deposits (once)."

    def handle(self, *args: object, **options: object) -> None:
        users = {}
        for spec in DEMO_USERS:
            user, created = user_ensure(password=DEMO_PASSWORD, **spec)
            users[user.username] = user
            self.stdout.write(f"user {user.username}: {'created' if created else 'exists'}")
        for stake_spec in DEMO_STAKES:
            stake, created = stake_level_ensure(spec=stake_spec)
            self.stdout.write(f"stake level {stake.name}: {'created' if created else 'exists'}")
        for name, stake_name, seats in DEMO_TABLES:
            with transaction.atomic():
                table, created = Table.objects.get_or_create(
                    name=name,
                    defaults={
                        "stake_level": StakeLevel.objects.get(name=stake_name),
                        "seats": seats,
                    },
                )
            self.stdout.write(f"table {table.name}: {'created' if created else 'exists'}")
        for username in DEMO_PLAYERS:
            # The same key every run: the cashier replays the first deposit, moving nothing.
            deposit_create(
                user=users[username],
                amount=DEMO_DEPOSIT,
                idempotency_key=f"seed-demo:{username}:starting-deposit",
            )
            self.stdout.write(f"deposit for {username}: {DEMO_DEPOSIT} cents (once)")
