"""Load the demo data once: an admin, players alice/bob/carol and an auditor.

Safe to run again: what exists is left alone.
"""

from django.core.management.base import BaseCommand

from accounts.services import user_ensure

DEMO_PASSWORD = "pokerdemo"
DEMO_USERS = [
    {"username": "admin", "staff": True},
    {"username": "alice"},
    {"username": "bob"},
    {"username": "carol"},
    {"username": "auditor", "auditor": True},
]


class Command(BaseCommand):
    help = "Create the demo users (and, once tables exist, stake levels and tables)."

    def handle(self, *args: object, **options: object) -> None:
        for spec in DEMO_USERS:
            user, created = user_ensure(password=DEMO_PASSWORD, **spec)
            state = "created" if created else "exists"
            self.stdout.write(f"user {user.username}: {state}")
