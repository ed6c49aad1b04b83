"""A rule check: one comparison the judge stage hands to its check workers (`pool.CheckPool`), and
its verdict.

A benchmark's `rule_checks` gives its checks typed: an `Equivalence` of a predicted answer with a
gold one by `mathcheck.equivalent` (the project's physics rules), or a `ProtocolCheck`, a comparison
of the benchmark's own (an official scorer reproduced: MATH-Vision's evalscope protocol, OlympiadBench's
official one) run by the same workers under the same limits. Checks are frozen and hashable: the judge
stage runs each distinct check once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from olympiad_eval.scoring.environments import Environment


@dataclass(frozen=True)
class Verdict:
    """`correct` is None when the check could not finish (timeout or a crash), with the reason;
    `answer`: what a benchmark's own check read as the answer, where it reads one itself."""

    correct: bool | None
    reason: str = ""
    answer: str = ""


@dataclass(frozen=True)
class Options:
    """The rules that only some protocols allow (rules 2 and 5 of the module docstring), all off
    by default. Options add up: `a | b` has every rule that `a` or `b` switches on."""

    percent: bool = False  # an answer ending in `%` may also read as the percentage over 100
    unordered: bool = False  # several answers may come in any order

    def __or__(self, other: Options) -> Options:
        return Options(**{f.name: getattr(self, f.name) or getattr(other, f.name) for f in fields(self)})

    @classmethod
    def from_mapping(cls, mapping) -> Options:
        """`{percent: true}` (a suite's `scoring.check_options`); raises ValueError naming
        an unknown option or a value that is not a boolean."""
        known = {f.name for f in fields(cls)}
        for name, value in dict(mapping or {}).items():
            if name not in known:
                raise ValueError(f"unknown check option '{name}'; known: {', '.join(sorted(known))}")
            if not isinstance(value, bool):
                raise ValueError(f"check option '{name}' must be true or false, got {value!r}")
        return cls(**dict(mapping or {}))


@dataclass(frozen=True)
class Equivalence:
    """Whether `predicted` states the same answer as `gold` (`mathcheck.equivalent`), within
    `rel_tol`, the gold's `unit` stripped; `options` are this check's own rules, added to those the
    cell's protocol switches on for every check."""

    gold: str
    predicted: str
    rel_tol: float = 0.0
    unit: str | None = None
    options: Options = field(default_factory=Options)

    def run(self, options: Options) -> Verdict:
        from olympiad_eval.scoring.mathcheck import equivalent

        return Verdict(bool(equivalent(self.gold, self.predicted, self.rel_tol, self.unit, options | self.options)))


@dataclass(frozen=True)
class ProtocolCheck:
    """A benchmark's own comparison: `function(*args)`, a module-level function (workers receive it
    by name) giving a `Verdict` or a bool. With an `environment` (`environments.Environment`), the
    function is that environment's module's, named as `function` is, and runs only in its workers
    (with packages of versions this interpreter cannot load), giving (correct, reason, answer)."""

    function: Callable[..., Verdict | bool]
    args: tuple = ()
    environment: Environment | None = None

    def run(self, options: Options) -> Verdict:
        if self.environment is not None:
            raise RuntimeError(f"{self.function.__name__} runs only in the environment '{self.environment.name}': "
                               "send it to a CheckPool")  # fmt: skip
        verdict = self.function(*self.args)
        return verdict if isinstance(verdict, Verdict) else Verdict(bool(verdict))


Check = Equivalence | ProtocolCheck
