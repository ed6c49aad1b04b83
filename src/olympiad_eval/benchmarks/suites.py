"""A suite's config, typed: what every suite has (`Suite`) and the protocol settings it scores by
(`Scoring`), which a benchmark's own `Suite` extends; and the provenance every judgment records:
which protocol, at which version, made it.

A benchmark's `protocol_versions`: bump a version with any change that can alter a verdict or a score:
`tests/test_protocol_versions.py` pins the verdicts of each version, and every judgment, metric
and table records the version that made it (`provenance`). The history, the same for every
benchmark's protocols:
  - v1: the first releases;
  - v2: HiPhO exact points and cited figures, PhysElite settings, MATH-Vision's old parser, the
    physics rules (Greek variants, degrees, unordered sets), and provenance itself;
  - v3: a rule check that cannot finish is undecided (scored as not matched, or decided by the
    protocol's LLM judge) where it failed the judgment; a refusal scores 0 unjudged, and a reply
    with no content is a failed generation, where both were judged as an empty answer;
  - v4 (MATH-Vision's evalscope protocol only): evalscope 1.14.1's own scoring reproduced
    (`benchmarks.mathvision.evalscope`), where v3 read answers by an approximate cascade of our own.
  - v4 (HiPhO's `olympiad_eval`, which v1-v3 called `official`, and PhysElite's `official`; v2 of
    OlympiadBench's `rules`): the rule chain no longer lets the parser's misreadings make different
    answers equal: `\\gamma`, `\\Gamma` and `I` are variables (latex2sympy2_extended read them as
    the gamma function, Euler's constant and the imaginary unit: `u^{\\gamma-2}` was equal to
    `-u^{\\gamma-2}`), an undefined value equals nothing, and tiny values compare relatively.
    HiPhO's `vlmevalkit` v1: VLMEvalKit's scoring reproduced (`benchmarks.hipho.vlmevalkit`).
  - v5 (HiPhO's `olympiad_eval`, PhysElite's `official`): a judge's verdict is its own last JSON
    object, never JSON of the student's that it quotes or echoes inside the fence, and several
    that disagree are an invalid reply (`benchmarks.judging.json_reply`), where v4 read the first
    object with the schema's field; HiPhO: an answer slot the rules cannot decide (an open-ended
    answer, no official one to compare) is undecided, where v4 scored it 0 with rules alone.
"""

from __future__ import annotations

import enum
import hashlib
import importlib
import json
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any, Optional

from omegaconf import MISSING, OmegaConf

from olympiad_eval.core.records import InputError
from olympiad_eval.scoring.checks import Options

if TYPE_CHECKING:
    from olympiad_eval.benchmarks.base import Benchmark


class Placement(enum.StrEnum):
    """Where a prompt's figures go: after each marker (`[figureN]`, `<imageN>`; the others after
    the text), all after the text, or all before it."""

    markers = "markers"
    after_text = "after_text"
    before_text = "before_text"


def choices(name: str, values: tuple[str, ...]) -> type[enum.StrEnum]:
    """An enum whose members are named by their values, so that configs write the values as they
    are (`schematic+process`) and the composed config reads back the same text."""
    return enum.StrEnum(name, {value: value for value in values})


@dataclass
class Scoring:
    """The protocol settings every benchmark's suites carry (`scoring:` in `conf/suite/*.yaml`).
    `rel_tol` has no default: a benchmark states its tolerance, never inherits 0 by omission."""

    protocol: str = "official"  # one of the benchmark's protocol_versions
    rel_tol: float = MISSING  # relative tolerance of numeric answers
    check_options: dict[str, bool] = field(default_factory=dict)  # mathcheck.Options, e.g. {percent: true}
    prompts: dict[str, Any] = field(default_factory=dict)  # the LLM judge's prompts, by task


@dataclass
class Suite:
    """What every suite config has; a benchmark's `Suite` extends it with its own options."""

    kind: str = MISSING
    language: Optional[str] = None  # null: every problem, in its own language
    templates: dict[str, Any] = field(default_factory=dict)  # the prompt template(s), from conf/prompt
    system_prompt: Optional[str] = None
    subsets: Optional[list[str]] = None  # only these subsets (exams, subjects); null: all
    # Part of the benchmark (`stages.render.select`), each option narrowing the one before; null: all.
    ids: Optional[list[str]] = None  # only these problems, by id
    limit: Optional[int] = None  # at most this many problems (by id): the first ones, or drawn with sample_seed
    # null: the first `limit` in id order; a number: `limit` drawn with it (no limit: every problem, whatever the seed)
    sample_seed: Optional[int] = None
    figure_placement: Placement = Placement.markers
    scoring: Scoring = field(default_factory=Scoring)


def suite_where(name: str) -> str:
    """How an error names a suite: where its settings come from."""
    return f"suite '{name}' (conf/suite/{name}.yaml or an override)"


def check_suite(typed, bench: Benchmark, where: str) -> None:
    """What a suite's schema cannot say: its protocol is one of its benchmark's, its tolerance is
    not negative, its check options exist, its limit takes a problem at least."""
    scoring = typed.scoring
    if scoring.protocol not in bench.protocol_versions:
        renamed = RENAMED.get((bench.name, scoring.protocol))
        raise InputError(
            f"{where}: scoring.protocol: '{scoring.protocol}' is not one of "
            f"{', '.join(bench.protocol_versions)} for {typed.kind}"
            + (f" ('{scoring.protocol}' is now called '{renamed[0]}': {renamed[1]})" if renamed else "")
        )
    check_protocol_extras(bench, scoring.protocol, where)
    if scoring.rel_tol < 0:
        raise InputError(f"{where}: scoring.rel_tol must be a number >= 0, got {scoring.rel_tol}")
    try:
        Options.from_mapping(scoring.check_options)
    except ValueError as error:
        raise InputError(f"{where}: scoring.check_options: {error}") from None
    if typed.limit is not None and typed.limit < 1:
        raise InputError(f"{where}: limit must be an integer >= 1 (null: every problem), got {typed.limit}")


def check_protocol_extras(bench: Benchmark, protocol_name: str, where: str) -> None:
    """A protocol that needs a package beyond the project's own (`Benchmark.protocol_extras`) is
    refused before any work where it is not installed, with the command that installs it: without
    it every check would fail, and the protocol would quietly score something else."""
    module, extra = bench.protocol_extras.get(protocol_name, (None, None))
    if module is None:
        return
    try:
        importlib.import_module(module)
    except ImportError:
        raise InputError(
            f"{where}: {bench.name}'s protocol '{protocol_name}' needs the package {module}, which is not "
            f"installed: pip install -e '.[{extra}]' (or pip install 'olympiad-eval[{extra}]')"
        ) from None


# Protocols renamed, by (benchmark, old name): (the new name, why), for the error a suite that still
# names the old one gets (its judgments would mix with none: the version was bumped too).
RENAMED = {
    ("hipho", "official"): (
        "olympiad_eval",
        "it is this project's implementation of the paper's marking, not the authors' code; "
        "their code's scoring is protocol 'vlmevalkit' (docs/protocols.md)",
    ),
}


# The packages whose behaviour decides verdicts (parsing and equivalence of answers), and ours.
VERDICT_PACKAGES = ("olympiad-eval", "sympy", "latex2sympy2_extended", "antlr4-python3-runtime")


@dataclass(frozen=True)
class Provenance:
    """What made a judgment: the benchmark's protocol and its version (with the versions of the
    judge prompts it sends), the judge's config (its name and a hash of every resolved setting),
    and the versions of the packages that decide verdicts."""

    protocol: str
    judge_config: str
    packages: str


def protocol(bench: Benchmark, scoring, judge_kind: str) -> str:
    """`hipho olympiad_eval v5 (prompts hipho_answer_judge v1, hipho_criterion_judge v1)`, or
    `... (rules only)` for a rule judge."""
    versions = bench.protocol_versions
    name = str(scoring.protocol)
    if name not in versions:
        raise InputError(f"suite scoring: protocol '{name}' is not one of {', '.join(versions)} for {bench.name}")
    check_protocol_extras(bench, name, "suite scoring")
    text = f"{bench.name} {name} v{versions[name]}"
    prompts = dict(scoring.get("prompts") or {})
    if judge_kind != "llm" or not prompts:
        return f"{text} (rules only)"
    unversioned = sorted(key for key, prompt in prompts.items() if prompt.get("version") is None)
    if unversioned:
        raise InputError(
            f"suite scoring: prompts {', '.join(unversioned)} have no `version`: every judge prompt "
            "states one, so that the judgments it makes say which wording made them"
        )
    used = ", ".join(f"{prompt.get('name', key)} v{prompt.version}" for key, prompt in sorted(prompts.items()))
    return f"{text} (prompts {used})"


def provenance(bench: Benchmark, judge_name: str, cfg, scoring) -> Provenance:
    """The judge config's fingerprint covers the suite's scoring settings too: both decide verdicts."""
    settings = json.dumps(
        {"judge": OmegaConf.to_container(cfg, resolve=True), "scoring": OmegaConf.to_container(scoring, resolve=True)},
        sort_keys=True,
        ensure_ascii=False,
    )
    return Provenance(
        protocol=protocol(bench, scoring, cfg.kind),
        judge_config=f"{judge_name}@{hashlib.sha256(settings.encode()).hexdigest()[:12]}",
        packages=", ".join(f"{name} {_version(name)}" for name in VERDICT_PACKAGES),
    )


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"
