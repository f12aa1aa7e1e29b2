"""`play_bots`: bot players fill N tables and play H hands each over the room's APIs.

    python manage.py play_bots --url ws://127.0.0.1:8000 --tables 4 --players-per-table 3 --hands 10

Prints hands per table, actions, errors by code, timeouts and `act` latency percentiles;
exits non-zero when anything unexpected happened (see tables.bots.report).

At human pace (`--think 1 3 --timeout-share 0.02 --leave-share 0.02`) the bots think
before acting, let some turns time out and leave and come back between hands;
`--duration S` plays for S seconds instead of H hands, `--quick` skips the log-in form
(sessions made directly, wallets funded in bulk). `bench/load.py` is the load test.
"""

import asyncio
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tables.bots.player import Pace
from tables.bots.runner import run_bots
from tables.bots.setup import BotTimers


class Command(BaseCommand):
    help = "Bots log in, fund their wallets, and play hands at bot tables over WebSockets."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="ws://127.0.0.1:8000", help="The room's base URL.")
        parser.add_argument("--tables", type=int, default=4)
        parser.add_argument("--players-per-table", type=int, default=3)
        parser.add_argument("--hands", type=int, default=5, help="Hands to play per table.")
        parser.add_argument("--prefix", default="bot", help="Bot screen names: <prefix>001...")
        parser.add_argument("--seed", type=int, default=None, help="Repeatable decisions.")
        parser.add_argument(
            "--steady", action="store_true", help="No bot misbehaves (no timeouts, no drops)."
        )
        parser.add_argument(
            "--action-seconds", type=int, default=1, help="Bot tables' clock (RULES §5)."
        )
        parser.add_argument("--time-bank-seconds", type=int, default=2)
        parser.add_argument("--stall-seconds", type=float, default=30.0)
        parser.add_argument("--timeout", type=float, default=600.0, help="Bound on the run.")
        parser.add_argument(
            "--trace", type=Path, default=None, help="Write every frame as JSON lines here."
        )
        parser.add_argument(
            "--think", type=float, nargs=2, default=None, metavar=("MIN", "MAX"),
            help="Human pace: seconds to think before each action.",
        )  # fmt: skip
        parser.add_argument("--timeout-share", type=float, default=0.0)
        parser.add_argument("--leave-share", type=float, default=0.0)
        parser.add_argument(
            "--duration", type=float, default=None, help="Play this long instead of --hands."
        )
        parser.add_argument("--quick", action="store_true", help="No log-in form (sessions).")

    def handle(self, *args: Any, **options: Any) -> None:
        trace_file = options["trace"].open("w") if options["trace"] else None

        def trace(bot: str, direction: str, frame: dict[str, Any]) -> None:
            if trace_file is not None:
                trace_file.write(json.dumps({"bot": bot, "dir": direction, "frame": frame}) + "\n")

        pace = Pace(
            think=tuple(options["think"] or (0.0, 0.0)),
            timeout_share=options["timeout_share"],
            leave_share=options["leave_share"],
        )
        try:
            report = asyncio.run(
                run_bots(
                    options["url"],
                    options["tables"],
                    options["players_per_table"],
                    None if options["duration"] else options["hands"],
                    prefix=options["prefix"],
                    seed=options["seed"],
                    misbehave=not options["steady"],
                    timers=BotTimers(
                        action_seconds=options["action_seconds"],
                        time_bank_seconds=options["time_bank_seconds"],
                    ),
                    stall_seconds=options["stall_seconds"],
                    timeout_seconds=options["timeout"],
                    trace=trace if trace_file else None,
                    pace=pace,
                    duration=options["duration"],
                    quick=options["quick"],
                )
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            if trace_file is not None:
                trace_file.close()
        self.stdout.write(report.render())
        if options["duration"] or options["think"]:
            self.stdout.write(report.render_load())
        if not report.ok:
            raise CommandError("the bots saw something unexpected (see above)")
