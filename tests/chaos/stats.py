"""How far a chaos run got: examples and steps, and the step where it first failed.

`counted` wraps a rule and `checked` an invariant: a rule counts a step, and both
remember where the first failure happened (before Hypothesis starts shrinking it),
which the test prints, so a run says how many steps it took to find a bug.
"""

import functools
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])


@dataclass
class Stats:
    examples: int = 0
    steps: int = 0
    first_failure: tuple[int, int, str] | None = None  # (example, step, what)
    outcomes: Counter[str] = field(default_factory=Counter)

    def note(self, outcome: str) -> None:
        self.outcomes[outcome] += 1

    def example(self) -> None:
        self.examples += 1
        progress = os.environ.get("CHAOS_PROGRESS")
        if progress:  # a long run that may be stopped from outside says how far it got
            with open(progress, "a") as out:
                out.write(self.summary().replace("\n", " ") + "\n")

    def reset(self) -> None:
        self.examples = self.steps = 0
        self.first_failure = None
        self.outcomes.clear()

    def summary(self) -> str:
        found = ""
        if self.first_failure is not None:
            example, step, what = self.first_failure
            found = f"; first failure in example {example} at step {step}: {what}"
        outcomes = ", ".join(f"{k} {n}" for k, n in self.outcomes.most_common())
        return f"chaos: {self.examples} examples, {self.steps} steps{found}\n  {outcomes}"


STATS = Stats()


def _tracked(func: F, *, is_rule: bool) -> F:
    @functools.wraps(func)
    def run(*args: object, **kwargs: object) -> object:
        if is_rule:
            STATS.steps += 1
        try:
            return func(*args, **kwargs)
        except Exception as exc:
            if STATS.first_failure is None:
                STATS.first_failure = (
                    STATS.examples,
                    STATS.steps,
                    f"{func.__name__}: {type(exc).__name__}: {str(exc)[:300]}",
                )
            raise

    return run  # type: ignore[return-value]


def counted(func: F) -> F:
    """A rule: one step."""
    return _tracked(func, is_rule=True)


def checked(func: F) -> F:
    """An invariant: no step of its own, but its failure is recorded."""
    return _tracked(func, is_rule=False)
