"""What a bot run measured, and its verdict: `BotReport`.

Counts are gathered while the bots play: hands per table (distinct hands that ended),
actions sent, errors by code (split into those a deliberately misbehaving step expected
and the rest), timeouts seen (`timed_out` events), reconnects and resyncs, and the
round-trip latency of `act` commands (from sending to the ack). A run is `ok` when
nothing unexpected happened: no unexpected error, no unhealed gap, no stalled table,
every bot's stack back in its wallet.

The load test adds, over its measuring window (`window_seconds`, after the warm-up):
decisions (acts acknowledged and timeouts), the `act` to `acted` latency on the other
players' sockets, how late timeouts came after their deadline, and the CPU seconds of
each group of room processes and of the load generator (tables.bots.cpu). Shards of a
run (one per process) each make a report; `merge` adds them up.
"""

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# The summary lists this many tables (a load test has hundreds).
TABLES_LISTED = 24


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of `values` (0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(len(ordered) * fraction))
    return ordered[rank - 1]


@dataclass
class TableReport:
    """One table of the run."""

    id: int
    name: str
    game: str
    structure: str
    hands: int = 0
    timeouts: int = 0
    seconds: float = 0.0


@dataclass
class BotReport:
    """The outcome of `run_bots`."""

    tables: list[TableReport] = field(default_factory=list)
    bots: int = 0
    # Bots that got a seat (a room past its capacity refuses new ones: tables.capacity).
    bots_seated: int = 0
    actions: int = 0
    commands: int = 0
    errors_unexpected: Counter[str] = field(default_factory=Counter)
    errors_expected: Counter[str] = field(default_factory=Counter)
    # Acts refused as their turn had ended on the way by another player's command (among
    # the expected errors): the stream showed that end.
    acts_overtaken: int = 0
    reconnects: int = 0
    server_closes: int = 0
    # The room went away (restart, crash) and came back: connections lost with it,
    # connection attempts it refused meanwhile, commands whose answer was lost, and bots
    # whose wallet could not be checked exactly (a top-up's answer was lost).
    restarts_seen: int = 0
    connect_failures: int = 0
    connect_errors: Counter[str] = field(default_factory=Counter)
    answers_lost: int = 0
    books_unverified: int = 0
    gaps: int = 0
    reordered: int = 0
    resyncs: int = 0
    deliberate_timeouts: int = 0
    # Human pace: players who left between hands to come back after a pause.
    breaks: int = 0
    # Straddles and overblinds the bots asked for (RULES §7).
    blind_options_asked: int = 0
    deposits: int = 0
    latencies: list[float] = field(default_factory=list)
    # Seconds from a turn's start (its deadline less the clock) to its arrival at the bot.
    turn_lags: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # The load test's measures, over its window (tables.bots.player.RunClock).
    decisions: int = 0
    broadcasts: list[float] = field(default_factory=list)
    timeout_lateness: list[float] = field(default_factory=list)
    # How late the generator's event loop woke up (tables.bots.runner._loop_lag).
    loop_lags: list[float] = field(default_factory=list)
    window_seconds: float = 0.0
    # CPU seconds by group of room processes (tables.bots.cpu.GROUPS), and the generator's.
    cpu: dict[str, float] = field(default_factory=dict)
    cpu_processes: dict[str, int] = field(default_factory=dict)
    generator_cpu: float = 0.0
    procs: int = 1

    def merge(self, other: "BotReport") -> None:
        """Add another shard's report of the same run to this one."""
        for f in dataclasses.fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, list | Counter):
                mine += theirs  # lists extend, counters add
            elif isinstance(mine, int) and f.name != "procs":
                setattr(self, f.name, mine + theirs)
        self.seconds = max(self.seconds, other.seconds)

    @property
    def ok(self) -> bool:
        return not self.problems and not self.errors_unexpected

    @property
    def hands(self) -> int:
        return sum(table.hands for table in self.tables)

    def latency_ms(self) -> dict[str, float]:
        """p50/p90/p99/max of the act round trips, in milliseconds."""
        return _percentiles_ms(self.latencies)

    def cpu_ms_per_decision(self) -> dict[str, float]:
        """Milliseconds of CPU per decision, by group, the room's total and the generator's."""
        per = 1000 / max(self.decisions, 1)
        room = {group: seconds * per for group, seconds in self.cpu.items()}
        total = self.room_cpu() * per
        return {**room, "room_total": total, "generator": self.generator_cpu * per}

    def room_cpu(self) -> float:
        """The room's CPU seconds; the postmaster's exited children are every database's,
        so they are shown on their own and left out of this total."""
        return sum(seconds for group, seconds in self.cpu.items() if group != "postgres_exited")

    def figures(self) -> dict[str, Any]:
        """The load test's figures, for `--json`."""
        window = self.window_seconds or self.seconds or 1.0
        return {
            "tables": len(self.tables),
            "bots": self.bots,
            "bots_seated": self.bots_seated,
            "procs": self.procs,
            "seconds": round(self.seconds, 3),
            "window_seconds": round(self.window_seconds, 3),
            "hands": self.hands,
            "decisions": self.decisions,
            "decisions_per_second": round(self.decisions / window, 2),
            "act_to_ack_ms": self.latency_ms() | {"n": len(self.latencies)},
            "act_to_broadcast_ms": _percentiles_ms(self.broadcasts) | {"n": len(self.broadcasts)},
            "timeout_lateness_ms": _percentiles_ms(self.timeout_lateness)
            | {"n": len(self.timeout_lateness)},
            "generator_loop_lag_ms": _percentiles_ms(self.loop_lags) | {"n": len(self.loop_lags)},
            "deliberate_timeouts": self.deliberate_timeouts,
            "breaks": self.breaks,
            "errors_unexpected": dict(self.errors_unexpected),
            "errors_expected": dict(self.errors_expected),
            "acts_overtaken": self.acts_overtaken,
            "gaps": self.gaps,
            "resyncs": self.resyncs,
            "reordered": self.reordered,
            "connect_failures": self.connect_failures,
            "connect_errors": dict(self.connect_errors),
            "server_closes": self.server_closes,
            "cpu_seconds": {group: round(value, 3) for group, value in self.cpu.items()},
            "room_cpu_seconds": round(self.room_cpu(), 3),
            "cpu_processes": self.cpu_processes,
            "generator_cpu_seconds": round(self.generator_cpu, 3),
            "cpu_ms_per_decision": {
                group: round(value, 3) for group, value in self.cpu_ms_per_decision().items()
            },
            "problems": self.problems,
            "ok": self.ok,
        }

    def render_load(self) -> str:
        """The load test's table of figures (the window's), below `render()`'s summary."""
        window = self.window_seconds or self.seconds or 1.0
        lines = [
            f"measured over {window:.1f} s: {self.decisions} decisions, "
            f"{self.decisions / window:.1f} decisions/s; {self.breaks} left a table for a "
            "while (whole run)",
            f"{'latency ms':<24} {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8} {'n':>7}",
        ]
        for name, values in (
            ("act -> ack", self.latencies),
            ("act -> acted (others)", self.broadcasts),
            ("timeout lateness", self.timeout_lateness),
            ("generator loop lag", self.loop_lags),
        ):
            p = _percentiles_ms(values)
            lines.append(
                f"{name:<24} {p['p50']:>8.1f} {p['p90']:>8.1f} {p['p99']:>8.1f} "
                f"{p['max']:>8.1f} {len(values):>7}"
            )
        lines.append(
            f"failed connects {self.connect_failures} ({_counts(self.connect_errors)}), "
            f"gaps {self.gaps}, resyncs {self.resyncs}, errors: {_counts(self.errors_unexpected)}"
        )
        if self.connect_errors["closed_4429"]:
            lines.append(
                "closed_4429: the room's limits per viewer (README, "
                '"Limits per viewer"): every bot connects from one address; start the room '
                "with TABLE_SOCKETS_PER_ADDRESS above the bots it serves"
            )
        lines.append(f"{'CPU':<24} {'seconds':>8} {'ms/dec':>8} {'procs':>8}")
        per = self.cpu_ms_per_decision()
        for group, seconds in self.cpu.items():
            count = self.cpu_processes.get(group, 0)
            lines.append(f"{group:<24} {seconds:>8.2f} {per[group]:>8.2f} {count:>8}")
        lines.append(f"{'room total':<24} {self.room_cpu():>8.2f} {per['room_total']:>8.2f}")
        lines.append(
            f"{'load generator':<24} {self.generator_cpu:>8.2f} {per['generator']:>8.2f} "
            f"{self.cpu_processes.get('generator', 0):>8}"
        )
        return "\n".join(lines)

    def render(self) -> str:
        """The human-readable summary `play_bots` prints."""
        lines = [f"{'table':<44} {'game':<7} {'str':<3} {'hands':>5} {'timeouts':>8}"]
        for t in self.tables[:TABLES_LISTED]:
            lines.append(
                f"{t.name[:44]:<44} {t.game:<7} {t.structure:<3} {t.hands:>5} {t.timeouts:>8}"
            )
        if len(self.tables) > TABLES_LISTED:
            lines.append(f"... and {len(self.tables) - TABLES_LISTED} more tables")
        lat = self.latency_ms()
        per_second = self.seconds or 1.0
        lines += [
            "",
            f"bots {self.bots} ({self.bots_seated} got a seat), hands {self.hands}, "
            f"actions sent {self.actions} "
            f"(commands {self.commands}) in {self.seconds:.1f} s: "
            f"{self.actions / per_second:.1f} actions/s, {self.hands / per_second:.2f} hands/s",
            f"timeouts seen {sum(t.timeouts for t in self.tables)} "
            f"(deliberate {self.deliberate_timeouts}), reconnects {self.reconnects} "
            f"(after the room dropped us: {self.server_closes}; it went away "
            f"{self.restarts_seen}, refused {self.connect_failures} attempts, lost "
            f"{self.answers_lost} answers, {self.books_unverified} wallets unverified), "
            f"out-of-order healed {self.reordered}, gaps {self.gaps}, resyncs {self.resyncs}, "
            f"deposits {self.deposits}, straddles/overblinds asked {self.blind_options_asked}",
            "act latency ms: "
            + ", ".join(f"{name} {value:.1f}" for name, value in lat.items())
            + f" (n={len(self.latencies)})",
            "turn notice lag ms: "
            + ", ".join(
                f"{name} {value:.1f}" for name, value in _percentiles_ms(self.turn_lags).items()
            )
            + " (from a turn's start to its arrival)",
            "errors expected: "
            + _counts(self.errors_expected)
            + f" (acts whose turn another's command ended on the way: {self.acts_overtaken})",
            "errors unexpected: " + _counts(self.errors_unexpected),
        ]
        lines += [f"PROBLEM: {problem}" for problem in self.problems]
        lines.append("OK" if self.ok else "FAILED")
        return "\n".join(lines)


def _percentiles_ms(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "p50": percentile(ms, 0.50),
        "p90": percentile(ms, 0.90),
        "p99": percentile(ms, 0.99),
        "max": max(ms, default=0.0),
    }


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{code} {n}" for code, n in sorted(counter.items())) or "none"
