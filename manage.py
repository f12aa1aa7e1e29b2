#!/usr/bin/env python
"""Django's command-line utility for the poker room."""

import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["phh_replay"]:
        # Replaying PHH files needs no database: skip Django's set-up (1-2 s of imports)
        # unless Django's own options are used (tables/engine/phh_cli.py).
        from tables.engine import phh_cli

        if phh_cli.runs_without_django(sys.argv[2:]):
            sys.exit(phh_cli.main(sys.argv[2:]))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
