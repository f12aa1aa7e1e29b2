"""A turn given its time back after an outage of the tables' stream (issue 46).

While Redis is away no viewer sees anything of the tables, and the timer loop times no
turn out (tables/stream_outage.py). When it is back, the loop runs `turn_resume` for
each turn that was running: a fresh clock, announced again, as RULES §5 gives a decision
its time from when it is announced:

* A decision gets `action_seconds` and then its `time_bank_seconds`, in full again (a
  question whether to run it twice, its `action_seconds`), from now, plus
  `RESYNC_ALLOWANCE`: the player can see the turn only once their web process's feed has
  subscribed again and their page has a fresh snapshot, and the feed tries Redis again
  only every few seconds (poker_room.channel_layer.RECEIVE_RETRY_MAX).
* Why not the time that was left when the stream went: it could be a second, spent
  before the player had even seen the table again; and how long a player looked at a
  screen that had stopped is no measure of their decision. The outage is the room's
  fault: the actor loses nothing by it, and the others wait at most one clock more.
* The clock is never shortened (a deadline already beyond it stays), and the reconnect
  bonus is untouched: it is still the same decision (RULES finer point 10).
* A turn whose deadline had passed before the outage began was not running: the timeout
  rule applies to it as it would have.

Idempotent: a turn whose deadline is already at least `back_at` (when the loop saw the
stream back) plus its fresh clock is left alone, so a loop that restarts or takes over
in the middle of the resumes runs them again safely. The same turn (`turn_version`) is
announced again, so an action sent for it still counts.
"""

from datetime import datetime, timedelta

from django.utils import timezone

from poker_room.channel_layer import RECEIVE_RETRY_MAX
from tables.messages import RunTwiceAsk
from tables.models import Table
from tables.services.command import TableCommand, table_command
from tables.services.hands import turn_announce

# Added to the fresh clock: how long a viewer may wait, after Redis is back, for their
# web process's feed to try it again and resync their page.
RESYNC_ALLOWANCE = timedelta(seconds=RECEIVE_RETRY_MAX + 1)


def resumed_seconds(table: Table, *, asking_run_twice: bool) -> timedelta:
    """A fresh clock for a turn at this table, with the resync allowance."""
    seconds = table.action_seconds + (0 if asking_run_twice else table.time_bank_seconds)
    return timedelta(seconds=seconds) + RESYNC_ALLOWANCE


@table_command
def turn_resume(cmd: TableCommand, *, hand_id: int, since: datetime, back_at: datetime) -> bool:
    """Give the turn running in hand `hand_id` a fresh clock, the tables' stream having
    been down from `since` until `back_at` (see above). Returns True when it did."""
    # Not the table working (its deal or its play): it must not clear a run of failures.
    cmd.moves_on = False
    hand = cmd.hand
    if hand is None or hand.id != hand_id or hand.turn_deadline is None:
        return False
    if hand.turn_deadline <= since:
        return False  # already out when the stream went: the timeout rule applies
    state = cmd.state
    asking = state.asking_run_twice
    if state.over or (not asking and state.actor is None):
        return False
    clock = resumed_seconds(cmd.table, asking_run_twice=asking)
    if hand.turn_deadline >= back_at + clock:
        return False  # given already (or never short of it)
    hand.turn_deadline = timezone.now() + clock
    cmd.save_hand()
    agreement = state.run_twice
    if asking and agreement is not None:
        cmd.emit(
            RunTwiceAsk(
                hand=hand.id,
                turn=hand.turn_version,
                deadline=hand.turn_deadline.isoformat(),
                seats=list(agreement.undecided),
            )
        )
    else:
        turn_announce(cmd)
    return True
