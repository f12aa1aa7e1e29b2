"""The WebSocket chaos machine with the room's load shedding live (tables/capacity.py):
every rule of ws_machine.py, at the room's default thresholds instead of the suite's
(which never shed), plus viewers without a seat flooding the table (`snapshot`, `mute`,
`auto_top_up`, an `act` at a table they do not play) before someone sits.

Checked after every step: no seat was refused (`room_busy`) unless the measure said
the room was full at that moment (the seated players' play past SEATING_SLOW_CPU, or
seating closed), and every `room_busy` a client saw was such a refusal. A few players
never fill a room: in practice, no seat is refused at all (issue #46, finding 2: a
flood of viewers refused every new seat).
"""

from dataclasses import dataclass
from typing import Any

from django.test import override_settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule

from poker_room.settings import base
from tables import capacity, consumers
from tables.capacity import Seating
from tables.exceptions import RoomBusy
from tables.models import Seat
from tests.chaos.stats import checked, counted
from tests.chaos.ws_machine import WebSocketMachine


@dataclass(frozen=True)
class Refusal:
    """A sit refused: how the room took seats then, and its measure."""

    seating: Seating
    share: float


class SheddingWebSocketMachine(WebSocketMachine):
    """ws_machine.py's machine with the room's load shedding live; see above."""

    @initialize()
    def seating_measured(self) -> None:
        self.refusals: list[Refusal] = []
        self.busy_answers = 0
        self.seating = override_settings(
            SEATING_SHED_CPU=base.SEATING_SHED_CPU,
            SEATING_SLOW_CPU=base.SEATING_SLOW_CPU,
            SEATING_SLOW_INTERVAL=base.SEATING_SLOW_INTERVAL,
            SEATING_OPEN=True,
        )
        self.seating.enable()
        real = capacity.refuse_new_seat_when_busy

        def refuse_new_seat_when_busy(**sit: Any) -> None:
            seating, share = capacity.seating_now()
            try:
                real(**sit)
            except RoomBusy:
                self.refusals.append(Refusal(seating, share))
                raise

        # The consumer's (imported by name) and the service's (looked up in the module).
        self.refuse_real = real
        capacity.refuse_new_seat_when_busy = refuse_new_seat_when_busy
        consumers.refuse_new_seat_when_busy = refuse_new_seat_when_busy

    def teardown(self) -> None:
        try:
            super().teardown()
        finally:
            if hasattr(self, "seating"):
                self.seating.disable()
                capacity.refuse_new_seat_when_busy = self.refuse_real
                consumers.refuse_new_seat_when_busy = self.refuse_real

    @rule(
        data=st.data(),
        frames=st.lists(
            st.sampled_from(("snapshot", "mute", "auto_top_up", "act")), min_size=5, max_size=15
        ),
    )
    @counted
    def viewers_flood_then_one_sits(self, data, frames: list[str]) -> None:
        """A spectator and a player without a seat send what viewers without a seat can,
        as fast as they are answered; then that player sits (a fresh key)."""
        seats = Seat.objects.filter(table=self.table)
        seated = set(seats.values_list("player_id", flat=True))
        standing = [u for u in self.world.players if u.pk not in seated]
        if not standing:
            return
        viewer = data.draw(st.sampled_from(standing))
        spectator = next((s for s in self.sockets if s.user is None), None)
        spectator = spectator or self.open_socket(None)
        own = self.socket_of(data, viewer)
        other = next(u for u in self.world.players if u != viewer)
        fields = {
            "snapshot": {},
            "mute": {"player": other.username, "on": True},
            "auto_top_up": {"mode": "max"},
            "act": {"action": "call"},
        }
        for cmd in frames:
            self.command(spectator, "snapshot")
            answer = self.command(own, cmd, **fields[cmd])
            assert answer.get("code") != "room_busy", answer
        free = set(range(1, self.table.seats + 1)) - set(seats.values_list("number", flat=True))
        if free:
            answer = self.command(own, "sit", seat=min(free), buy_in=10_000)
            if answer.get("code") == "room_busy":
                assert self.refusals and self.refusals[-1].seating is not Seating.OPEN

    @invariant()
    @checked
    def no_seat_refused_unless_the_room_is_full(self) -> None:
        if not hasattr(self, "refusals"):
            return
        for sock in self.sockets:
            start = getattr(sock, "busy_checked", 0)  # the messages looked at already
            self.busy_answers += sum(
                message.get("code") == "room_busy" for message in sock.messages[start:]
            )
            sock.busy_checked = len(sock.messages)
        assert self.busy_answers <= len(self.refusals), "a room_busy no refusal made"
        for refusal in self.refusals:
            assert refusal.seating is not Seating.OPEN, refusal
            assert refusal.share > base.SEATING_SLOW_CPU, refusal
