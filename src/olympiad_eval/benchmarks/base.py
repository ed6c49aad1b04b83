"""What a benchmark is: a subclass of `Benchmark`, and the plain records it hands the generic stages.

A benchmark's package (`benchmarks/<kind>/`: its loading, prompts, scoring, tables and report)
defines one subclass and exposes an instance as `BENCHMARK`; `benchmarks.plugin(kind)` finds it.
The generic stages call only what `Benchmark` lists, so adding a benchmark is its package, its
config files, its sample data and its tests. Only loading, prompts, rule scoring and tables must
be written; the rest has defaults that suit a benchmark scored by rules alone.

The contract is checked where it is kept: every method a subclass writes is wrapped so that what
it returns is checked against what `Benchmark` promises the stages (`RETURNS`), and a wrong type
stops the stage with one line naming the benchmark, the method and what came back
(`ContractError`), instead of failing later, far from the cause.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from olympiad_eval.benchmarks.suites import Suite
from olympiad_eval.core.records import Figure, InputError, Problem
from olympiad_eval.scoring.checks import Equivalence, ProtocolCheck

if TYPE_CHECKING:
    from olympiad_eval.benchmarks.release import FigureStore
    from olympiad_eval.scoring.checks import Check, Verdict
    from olympiad_eval.scoring.environments import Environment


@dataclass(frozen=True)
class Score:
    """What rules made of one response: the fraction of points earned and why."""

    score: float
    points: float
    extracted: tuple[str, ...] = ()
    slots: tuple[dict, ...] = ()
    verdict: str | None = None
    detail: str = ""
    undecided: tuple[str, ...] = field(default=())  # the checks that could not finish, and why (not matched)
    unscorable: str = ""  # why rules cannot score this response at all (only an LLM judge can)
    # What rules cannot decide though they scored the rest (HiPhO's open-ended answer slots): a rule
    # judge leaves the response undecided (not scored: it lowers coverage); an LLM protocol's own
    # score (`combine`) decides it.
    rules_cannot_decide: str = ""
    parts: dict = field(default_factory=dict)  # the protocol's own parts of the score (`score_parts`)
    details: tuple[dict, ...] = ()  # per judge and task: what each judge said


@dataclass(frozen=True)
class JudgeTask:
    """One question to an LLM judge about one response. `parse` turns a reply into a dict, or
    None when the reply does not follow the asked schema (it is then asked again)."""

    key: str
    messages: tuple[dict, ...]
    parse: Callable[[str], dict | None]


@dataclass(frozen=True)
class Filter:
    """One option of a suite that takes part of its benchmark (`exams: [IPhO_2025]`): the problems
    that have one of the `wanted` values, by the values `values_of(problem)` gives. Unset or empty
    `wanted` takes every problem."""

    key: str  # the option, as a suite's file spells it
    wanted: Any  # the suite's values for it (a list), or None
    values_of: Callable[[Problem], Any]  # the values a problem has for it (a problem may have several)


@dataclass(frozen=True)
class ReportTable:
    """A table of a report section: its column names and rows of plain values (text, numbers,
    None for none), escaped by the report; the columns in `math` hold text that may carry LaTeX,
    typeset in the browser with its raw text beside it."""

    css: str  # the table's class in the page: "criteria", "steps"
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    math: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReportSection:
    """A part of a problem page that a benchmark's `report_sections` adds: facts as (label, value)
    lines (scheme totals, the scheme that won), then tables."""

    css: str  # the section's class in the page: "criteria", "verdicts", "choices"
    title: str
    facts: tuple[tuple[str, str], ...] = ()
    tables: tuple[ReportTable, ...] = ()


@dataclass(frozen=True)
class ReportChart:
    """A bar chart of `report_charts`: one bar per (label, series) with its value; series stack
    when `stacked` (medal counts), else stand side by side."""

    title: str
    unit: str  # what a value counts: "%", "medals"
    bars: tuple[tuple[str, str, float], ...]  # (label, series, value)
    stacked: bool = False


class ContractError(InputError):
    """A benchmark gave the stages something its contract does not allow."""


class Benchmark(ABC):
    """A benchmark: its release, its prompts, its protocols' scoring, its tables and its report.

    Class attributes:
    - `name`: the benchmark family's name: its pipeline in params.yaml (`pipelines.<name>`) and the
      folder of its cells' outputs. A built-in benchmark's `name` is its kind.
    - `Suite`: the dataclass schema of its suites' configs (`conf/suite/*.yaml`), extending
      `suites.Suite` with enums for option values; its `scoring` (a `suites.Scoring`) holds the
      protocol settings, which travel with the rendered suite (`suite.json`) to the judge.
    - `protocol_versions`: each protocol's version. Bump one with any change that can alter a verdict
      or a score: `tests/test_protocol_versions.py` pins the verdicts of each version, and every
      judgment, metric and table records the version that made it (`suites.provenance`).
    - `score_parts`: the names of the protocol's own parts of a score (`Score.parts`, then
      `Judgment.parts`: HiPhO's answer and step level in points, PhysElite's process score), each a
      column of the frame its `tables` reads, empty where a judgment lacks it.
    - `cluster_unit`: what one cluster of `cluster_of` is, as the tables' notes and the metrics
      name it ("problem"; HiPhO's "exam problem").
    - `protocol_extras`: the protocols that need packages beyond the project's own, each as (the
      module to import, the extra of pyproject that installs it): a suite of such a protocol is
      refused without it (`suites.check_protocol_extras`), never scored as if its checks failed.
    - `environments`: the pinned environments of their own that its protocols' checks run in
      (`scoring.environments`; OlympiadBench's official scorer), which `olympiad-eval environments`
      lists, builds ahead of time and checks.

    The methods, in the order the stages call them, are documented one by one below. Scoring is in
    two steps: `rule_checks` gives the checks a response needs, which the judge stage runs in its
    check workers with every other response's at once; `rule_score` makes the score from their
    verdicts. An LLM-judged protocol then asks `judge_tasks` (at once) and
    `judge_tasks_after_rules` (once the rules' score is known); a protocol whose questions depend
    on a judge's earlier replies asks further rounds of that judge (`judge_tasks_next`) until it
    asks none; then it `combine`s the replies.
    """

    name: ClassVar[str]
    Suite: ClassVar[type] = Suite
    protocol_versions: ClassVar[dict[str, int]]
    score_parts: ClassVar[tuple[str, ...]] = ()
    cluster_unit: ClassVar[str] = "problem"
    protocol_extras: ClassVar[dict[str, tuple[str, str]]] = {}
    environments: ClassVar[tuple[Environment, ...]] = ()
    # The modules of a benchmark's package whose functions are its methods: each function defined
    # in one of them and named as a method below is that method (so a package's `__init__` names
    # its modules instead of repeating every method). Methods written in the class come first.
    modules: ClassVar[tuple[ModuleType, ...]] = ()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        for method, function in _functions_of(cls.__dict__.get("modules", ()), cls.__qualname__).items():
            if method not in cls.__dict__:
                setattr(cls, method, staticmethod(function))
        for method, (promised, kept) in RETURNS.items():
            if method in cls.__dict__:
                setattr(cls, method, _checked(cls.__dict__[method], method, promised, kept))

    # ---------------------------------------------------------------- fetch
    @abstractmethod
    def load(self, root: Path, cfg, benchmark: str, store: FigureStore) -> list[Problem]:
        """The problems of a release laid out as officially published, each figure handed to `store`
        (which keeps it where the fetch stage writes); refusing with file, record and field what
        could not be scored right (see `release.Fields`)."""

    # ---------------------------------------------------------------- render
    def filters(self, suite) -> list[Filter]:
        """The benchmark's own ways to take part of it (HiPhO's `exams`, MATH-Vision's `levels`),
        options of its `Suite`. The render stage applies them after the generic ones (`ids`,
        `subsets`, then `limit`) and refuses a value that selects nothing. Default: none."""
        return []

    @abstractmethod
    def template_fields(self, problem: Problem, suite) -> tuple[str, dict]:
        """(the key of the suite's template to fill, the fields that fill it)."""

    @abstractmethod
    def figures(self, problem: Problem, suite) -> list[Figure] | dict[int, Figure]:
        """The figures sent with the prompt: a list (the N-th is `[figureN]`), or by each figure's
        own number where the benchmark knows it."""

    @abstractmethod
    def reference(self, problem: Problem, suite) -> str:
        """The gold answer written as the prompt asks for it (the `reference` model's reply)."""

    # ---------------------------------------------------------------- judge
    @abstractmethod
    def rule_checks(self, problem: Problem, response: str, scoring) -> list[Check]:
        """The checks the rules need for this response (`scoring.checks`)."""

    @abstractmethod
    def rule_score(self, problem: Problem, response: str, scoring, verdicts: list[Verdict]) -> Score:
        """The rules' score from the verdicts of `rule_checks`, in their order."""

    def judge_tasks(self, problem: Problem, response: str, scoring) -> list[JudgeTask]:
        """The questions every LLM judge is asked at once. Default: none (rules alone)."""
        return []

    def judge_tasks_after_rules(self, problem: Problem, response: str, rules: Score | str, scoring) -> list[JudgeTask]:
        """The questions asked once the rules' score is known (HiPhO's answer slots the rules
        missed). Default: none."""
        return []

    def judge_tasks_after_rules_at_most(self, problem: Problem, response: str, scoring) -> list[JudgeTask]:
        """The most that `judge_tasks_after_rules` and every later round (`judge_tasks_next`) could
        ask of a response (as if the rules matched none of its answers, and every judge's reply
        called for the next round): what the cost plan counts before the response exists. Default:
        none."""
        return []

    def judge_tasks_next(
        self, problem: Problem, response: str, rules: Score | str, replies: dict, scoring
    ) -> list[JudgeTask]:
        """A further round of questions to one judge, where a protocol asks depending on that
        judge's replies (VLMEvalKit's HiPhO asks an answer slot again about the text after its last
        `=` when the judge said no, and every criterion again when a scheme's awards overflow).
        `replies`: that judge's parsed replies so far by task key (a str where a task has none, and
        why). Called once every earlier question to the judge about the response is answered, then
        after each round, until it gives none; a task key is asked once. Default: none."""
        return []

    def judge_tasks_next_at_most(self, problem: Problem, response: str, rules: Score | str, scoring) -> list[JudgeTask]:
        """The most that the later rounds (`judge_tasks_next`) could ask of a response whose rules'
        score is known, as if every reply called for the next round: what the cost plan adds to a
        known response's first two rounds. Default: none."""
        return []

    def combine(self, problem: Problem, rules: Score | str, replies: dict, scoring) -> Score | str:
        """The protocol's score from the rules' score and each judge's parsed replies
        (`replies[judge][task key]`), or why it cannot score. Default: the rules' score."""
        return rules

    # ---------------------------------------------------------------- aggregate and report
    @abstractmethod
    def tables(self, frame, cfg) -> dict:
        """The benchmark's tables (name: DataFrame) from its judgments; `cfg` is the benchmark's
        config with `suites`, the composed config of each of the plan's suites of it."""

    def cluster_of(self, judgment) -> str:
        """The cluster a judgment belongs to: judgments that share a parent, and so are not
        independent, share a cluster, and the tables' 95% intervals and `cli.compare`'s paired
        test resample whole clusters (the cluster bootstrap). Named in the frame's `cluster`
        column. Default: the problem's id, so that the samples of a problem, and its answers in
        several languages (PhysElite's zh and en), are one cluster."""
        return judgment.id

    def report_sections(self, problem: Problem, judgment) -> list[ReportSection] | None:
        """What the report shows of one judgment beyond the generic view (the status, score and
        points, the extracted answers against the gold, the rule checks): plain data the report
        escapes and lays out, standing in for the judges' raw replies. Default: None, the generic
        view with the raw replies."""
        return None

    def report_charts(self, tables: dict) -> list[ReportChart]:
        """Bar charts of the benchmark's own tables (by name, as `tables` made them), drawn beside
        the report's generic ones. Default: none."""
        return []

    def report_task_label(self, key: str) -> str:
        """A judge task's key (`JudgeTask.key`) as a problem's page names it over its judge
        conversation: numbered as the benchmark's `report_sections` number what it asked about, so
        that a page has one numbering (HiPhO's `criterion 0.1` is the marking table's 1.2). Default:
        the key."""
        return key


def _list_of(*kinds: type) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and all(isinstance(item, kinds) for item in value)


def _figures(value) -> bool:
    items = value.values() if isinstance(value, dict) else value
    return isinstance(value, (list, dict)) and all(isinstance(item, Figure) for item in items)


# What each method must return: (said in an error, the test).
RETURNS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "load": ("a list of Problem", _list_of(Problem)),
    "filters": ("a list of Filter", _list_of(Filter)),
    "template_fields": (
        "a pair (template key, fields)",
        lambda v: isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], dict),
    ),
    "figures": ("a list of Figure, or a dict from number to Figure", _figures),
    "reference": ("a str", lambda v: isinstance(v, str)),
    "rule_checks": ("a list of checks (Equivalence, ProtocolCheck)", _list_of(Equivalence, ProtocolCheck)),
    "rule_score": ("a Score", lambda v: isinstance(v, Score)),
    "judge_tasks": ("a list of JudgeTask", _list_of(JudgeTask)),
    "judge_tasks_after_rules": ("a list of JudgeTask", _list_of(JudgeTask)),
    "judge_tasks_after_rules_at_most": ("a list of JudgeTask", _list_of(JudgeTask)),
    "judge_tasks_next": ("a list of JudgeTask", _list_of(JudgeTask)),
    "judge_tasks_next_at_most": ("a list of JudgeTask", _list_of(JudgeTask)),
    "combine": ("a Score, or a str saying why it cannot score", lambda v: isinstance(v, (Score, str))),
    "tables": ("a dict of tables by name", lambda v: isinstance(v, dict)),
    "cluster_of": ("a str", lambda v: isinstance(v, str)),
    "report_sections": ("None or a list of ReportSection", lambda v: v is None or _list_of(ReportSection)(v)),
    "report_charts": ("a list of ReportChart", _list_of(ReportChart)),
    "report_task_label": ("a str", lambda v: isinstance(v, str)),
}


def _functions_of(modules, owner: str) -> dict[str, Callable]:
    """The functions the modules define under the names of the contract's methods, each once."""
    found: dict[str, Callable] = {}
    for module in modules:
        for method in RETURNS:
            function = getattr(module, method, None)
            if not callable(function) or getattr(function, "__module__", None) != module.__name__:
                continue  # not there, or imported from elsewhere
            if method in found:
                raise TypeError(
                    f"{owner}: {method} is defined in both {found[method].__module__} and {module.__name__}"
                )
            found[method] = function
    return found


def _checked(method, name: str, promised: str, kept: Callable[[Any], bool]):
    """`method` (a plain function, or a staticmethod) with its return value checked."""
    static = isinstance(method, staticmethod)
    function = method.__func__ if static else method

    @functools.wraps(function)
    def checked(*args, **kwargs):
        value = function(*args, **kwargs)
        if not kept(value):
            owner = function.__qualname__.rsplit(".", 1)[0]
            raise ContractError(
                f"benchmark {owner} ({function.__module__}): {name} returned {_described(value)}, not {promised} "
                "(see olympiad_eval.benchmarks.base.Benchmark)"
            )
        return value

    return staticmethod(checked) if static else checked


def _described(value) -> str:
    if isinstance(value, list) and value:
        return "a list of " + ", ".join(sorted({type(item).__name__ for item in value}))
    return "None" if value is None else type(value).__name__
