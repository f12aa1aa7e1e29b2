"""`manage.py createauditor NAME [--password P]`: an auditor and their API token.

The token is printed once: the database keeps only its hash. It expires after
API_TOKEN_TTL_DAYS; the auditor makes and revokes more at /accounts/tokens/.
"""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.models import User
from accounts.services import auditor_create


class Command(BaseCommand):
    help = "Create an auditor (read-only API access to hands and ledger) and print a token."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the auditor's screen name")
        parser.add_argument("--password", help="a password; a random one when omitted")

    def handle(self, *args: object, **options: str | None) -> None:
        name = options["name"] or ""
        if User.objects.filter(username__iexact=name).exists():
            raise CommandError(f"A user named {name!r} (in any case) already exists.")
        user, password, token = auditor_create(username=name, password=options["password"])
        self.stdout.write(f"auditor created: {user.username}")
        if not options["password"]:
            self.stdout.write(f"password: {password}")
        self.stdout.write(f"token: {token}")
        self.stdout.write("Use it as the header  Authorization: Token <token>")
        self.stdout.write(
            f"It is shown only now and expires in {settings.API_TOKEN_TTL_DAYS} days; "
            "more at /accounts/tokens/."
        )
