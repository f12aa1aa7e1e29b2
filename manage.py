#!/usr/bin/env python
"""Django's command-line utility for the poker room."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "poker_room.settings.dev")
    if sys.argv[1:2] == ["phh_replay"]:
        # Replaying PHH files uses none of the apps: the command runs without Django's
        # set-up, which would be most of its time (it is an ordinary command otherwise,
        # and `call_command("phh_replay", ...)` or `manage.py help phh_replay` work too).
        from tables.management.commands.phh_replay import Command

        Command().run_from_argv(sys.argv)
        return
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
