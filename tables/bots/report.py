"""What a bot run measured, and its verdict: `BotReport`.

Counts are gathered while the bots play: hands per table (distinct hands that ended),
actions sent, errors by code (split into those a deliberately misbehaving step expected
and the rest), timeouts seen (`timed_out` events), reconnects and resyncs, and the
round-trip latency of `act` commands (from sending to the ack). A run is `ok` when
nothing unexpected happened: no unexpected error, no unhealed gap, no stalled table,
every bot's stack back in its wallet.
"""

import math
from collections import Counter
from dataclasses import dataclass, field


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
    actions: int = 0
    commands: int = 0
    errors_unexpected: Counter[str] = field(default_factory=Counter)
    errors_expected: Counter[str] = field(default_factory=Counter)
    reconnects: int = 0
    server_closes: int = 0
    # The room went away (restart, crash) and came back: connections lost with it,
    # connection attempts it refused meanwhile, commands whose answer was lost, and bots
    # whose wallet could not be checked exactly (a top-up's answer was lost).
    restarts_seen: int = 0
    connect_failures: int = 0
    answers_lost: int = 0
    books_unverified: int = 0
    gaps: int = 0
    reordered: int = 0
    resyncs: int = 0
    deliberate_timeouts: int = 0
    # Straddles and overblinds the bots asked for (RULES §7).
    blind_options_asked: int = 0
    deposits: int = 0
    latencies: list[float] = field(default_factory=list)
    # Seconds from a turn's start (its deadline less the clock) to its arrival at the bot.
    turn_lags: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems and not self.errors_unexpected

    @property
    def hands(self) -> int:
        return sum(table.hands for table in self.tables)

    def latency_ms(self) -> dict[str, float]:
        """p50/p90/p99/max of the act round trips, in milliseconds."""
        return _percentiles_ms(self.latencies)

    def render(self) -> str:
        """The human-readable summary `play_bots` prints."""
        lines = [f"{'table':<44} {'game':<7} {'str':<3} {'hands':>5} {'timeouts':>8}"]
        for t in self.tables:
            lines.append(
                f"{t.name[:44]:<44} {t.game:<7} {t.structure:<3} {t.hands:>5} {t.timeouts:>8}"
            )
        lat = self.latency_ms()
        per_second = self.seconds or 1.0
        lines += [
            "",
            f"bots {self.bots}, hands {self.hands}, actions sent {self.actions} "
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
            "errors expected: " + _counts(self.errors_expected),
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
