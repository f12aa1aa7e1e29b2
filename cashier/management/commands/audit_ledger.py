"""`manage.py audit_ledger`: run the ledger audit; exit 1 with the first discrepancies."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from cashier.audit import ledger_audit


class Command(BaseCommand):
    help = "Check that the ledger balances; exit non-zero on any discrepancy."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--show", type=int, default=20, help="discrepancies to print")

    def handle(self, *args: object, **options: int) -> None:
        report = ledger_audit()
        self.stdout.write(report.summary())
        if not report.ok:
            for discrepancy in report.discrepancies[: options["show"]]:
                self.stderr.write(str(discrepancy))
            raise CommandError(f"the ledger audit found {len(report.discrepancies)} discrepancies")
