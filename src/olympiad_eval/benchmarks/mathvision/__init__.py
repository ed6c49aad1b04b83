"""MATH-Vision: competition maths with figures, multiple choice and free form, scored by rules.

Release layout (github mathllm/MATH-V): `data/<split>.jsonl` (test: 3,040, testmini: 304) and
`images/<id>.jpg`. Accuracy is reported overall, per level (1-5) and per subject.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from olympiad_eval import lazy_import
from olympiad_eval.benchmarks import (
    Filter,
    ReportSection,
    ReportTable,
    Score,
    Scoring as BaseScoring,
    Suite as BaseSuite,
    choices,
    no_judge_tasks,
    rules_alone,
)
from olympiad_eval.benchmarks.hipho import evalscope as hipho_evalscope
from olympiad_eval.benchmarks.mathvision import evalscope as mathvision_evalscope, official as mathvision_official
from olympiad_eval.benchmarks.release import Fields, as_text, load_figure
from olympiad_eval.core.records import AnswerSlot, InputError, Problem, RecordError, iter_json_lines
from olympiad_eval.scoring.checks import Check, ProtocolCheck

pd = lazy_import("pandas")  # for the tables only

REQUIRED = ("id", "question", "answer")

# See `benchmarks/__init__.py`: bump a version with any change that can alter a verdict or a score.
PROTOCOL_VERSIONS = {"official": 3, "evalscope": 4}
PARTS = ()  # rules alone: the score is all there is
LETTERS = "ABCDE"
LEVELS = range(1, 6)  # the release's difficulty levels; its tables report each

Figures = choices("Figures", ("all", "none"))


@dataclass
class Scoring(BaseScoring):
    """official: MATH-V's own scorer, reproduced (`mathvision_official`); evalscope: evalscope
    1.14.1's scoring, reproduced (`mathvision_evalscope`). Scored by rules alone."""

    rel_tol: float = 0.0


@dataclass
class Suite(BaseSuite):
    figures: Figures = Figures.all
    levels: Optional[list[int]] = None  # only these levels (1-5); null: all
    subjects: Optional[list[str]] = None  # only these subjects (`metric geometry - area`, as the release spells them)
    scoring: Scoring = field(default_factory=Scoring)


def filters(suite) -> list[Filter]:
    """MATH-Vision's own parts of the release: `levels` and `subjects`, as its tables report them."""
    return [
        Filter("levels", suite.levels, lambda problem: (problem.level,)),
        Filter("subjects", suite.subjects, lambda problem: (problem.subject,)),
    ]


def load(root: Path, cfg, benchmark: str) -> list[Problem]:
    split = cfg.get("split", "test")
    path = root / "data" / f"{split}.jsonl"
    if not path.is_file():
        raise InputError(f"benchmark '{benchmark}': {path} not found")
    require_figures = bool(cfg.get("require_figures", True))
    return [
        _problem(_repair(data), path, line, root, benchmark, require_figures) for line, data in iter_json_lines(path)
    ]


def _repair(item: dict) -> dict:
    """The release has a form feed where `\f` was meant (`\frac` read as an escape): put it back."""
    fix = lambda text: text.replace("\x0c", "\\f") if isinstance(text, str) else text  # noqa: E731
    return {key: [fix(v) for v in value] if isinstance(value, list) else fix(value) for key, value in item.items()}


def _problem(item: dict, path: Path, line: int, root: Path, benchmark: str, require_figures: bool) -> Problem:
    fields = Fields(item, f"{path}:{line}")
    fields.require("id")
    for name in REQUIRED:
        fields.text(name)
    level = fields.level("level")
    if level is not None and level not in LEVELS:
        raise RecordError(fields.where, fields.record, "level", f"must be {LEVELS[0]} to {LEVELS[-1]}, got {level}")
    choices = tuple(
        as_text(option, where=fields.where, record=fields.record, field_name="options")
        for option in fields.list("options")
    )
    figures = ()
    if item.get("image") not in (None, ""):
        image = fields.path("image", root)
        if require_figures or image.is_file():
            figures = (
                load_figure(
                    image, release_file=fields.where, record=fields.record, field_name="image", name=item["image"]
                ),
            )
    subject = fields.text("subject", required=False)
    return Problem(
        origin=f"data/{path.name}:{line}",
        id=fields.record,
        benchmark=benchmark,
        language="en",
        subset=subject,
        subject=subject,
        level=level,
        question=fields.text("question"),
        choices=choices,
        figures=figures,
        answers=(AnswerSlot(value=fields.gold("answer"), kind="Multiple Choice" if choices else "Free Form"),),
        solution=fields.text("solution", required=False),
    )


def template_fields(problem: Problem, suite) -> tuple[str, dict]:
    """`choices` as evalscope lists them ("A) ..."); `options` as MATH-V's own script does
    ("(A) ...", one per line, and nothing when the options are only the letters)."""
    choices = "\n".join(f"{letter}) {text}" for letter, text in zip(LETTERS, problem.choices))
    letters_only = "".join(problem.choices) == LETTERS[: len(problem.choices)]
    options = "" if letters_only else "".join(f"({letter}) {text}\n" for letter, text in zip(LETTERS, problem.choices))
    key = "multiple_choice" if problem.choices else "free_form"
    return key, {"question": problem.question, "choices": choices, "options": options}


def figures(problem: Problem, suite) -> list:
    return list(problem.figures) if suite.figures != "none" else []


def reference(problem: Problem, suite) -> str:
    """The gold answer boxed (MATH-V's prompt), and for multiple choice also on an "ANSWER:" line
    (evalscope's prompt): one reference serves both suites."""
    gold = problem.answers[0].value
    return (
        f"The answer is \\boxed{{{gold}}}.\nANSWER: {gold}" if problem.choices else f"The answer is \\boxed{{{gold}}}."
    )


def rule_checks(problem: Problem, response: str, scoring) -> list[Check]:
    """The official scorer and evalscope's multiple choice decide in this process (`rule_score`);
    evalscope's free form is one check of its own (Math-Verify, in the check workers)."""
    if scoring.protocol == "official" or problem.choices:
        return []
    mathvision_evalscope.require_math_verify()
    completion = hipho_evalscope.completion(response)
    return [ProtocolCheck(mathvision_evalscope.free_form_check, (completion, problem.answers[0].value))]


def rule_score(problem: Problem, response: str, scoring, verdicts: list) -> Score:
    """By the official MATH-V scorer (the default), or as evalscope 1.14.1 scores (a suite's
    `scoring.protocol: evalscope`; see `mathvision_evalscope`): a response evalscope leaves out of
    its mean is one the rules cannot score; a check that could not finish is not matched (undecided)."""
    gold = problem.answers[0].value
    if scoring.protocol == "official":
        given, correct = mathvision_official.verdict(response, gold, problem.choices)
        return _score(problem, given, correct, ())
    if problem.choices:
        given = mathvision_evalscope.choice(hipho_evalscope.completion(response), len(problem.choices))
        return _score(problem, given, bool(given) and given == gold.strip(), ())
    verdict = verdicts[0]
    if verdict.correct is None and verdict.reason.startswith(mathvision_evalscope.EXCLUDED):
        return Score(score=0.0, points=0.0, extracted=(verdict.answer,), unscorable=verdict.reason)
    # a check that overran the judge's `check_timeout` (evalscope waits 30 s, then excludes) is not matched
    return _score(problem, verdict.answer, bool(verdict.correct), (verdict.reason,) if verdict.correct is None else ())


def _score(problem: Problem, given: str, correct: bool, undecided: tuple) -> Score:
    return Score(
        score=1.0 if correct else 0.0,
        points=1.0 if correct else 0.0,
        extracted=(given,),
        slots=({"expected": problem.answers[0].value, "given": given, "correct": correct, "points": 1.0},),
        undecided=undecided,
    )


# MATH-Vision is scored by rules alone: nothing to ask an LLM judge.
judge_tasks = judge_tasks_after_rules = judge_tasks_after_rules_at_most = no_judge_tasks
combine = rules_alone


def tables(frame: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """Accuracy (%) overall, per level, per subject, and per subject x level, each as MATH-V's
    evaluation prints it in `<MODEL>_result.json` (`-all`, `-level<n>`, `<subject>`,
    `<subject>_level<n>`), digit for digit."""
    rows, accuracy = ["suite", "model", "judge"], _accuracy
    overall = frame.groupby(rows).apply(accuracy, include_groups=False).rename("overall")
    by_level = frame.assign(level=frame["level"].map(lambda v: f"level {int(v)}" if pd.notna(v) else "level ?"))
    levels = by_level.groupby([*rows, "level"]).apply(accuracy, include_groups=False).unstack("level")
    subjects = frame.groupby([*rows, "subject"]).apply(accuracy, include_groups=False).unstack("subject")
    crossed = by_level.groupby([*rows, "subject", "level"]).apply(accuracy, include_groups=False).unstack("level")
    return {
        "accuracy": pd.concat([overall, levels], axis=1).reset_index(),
        "accuracy_by_subject": subjects.reset_index(),
        "accuracy_by_subject_and_level": crossed.reset_index(),
    }


def _accuracy(group: pd.DataFrame) -> float:
    """Right over rows in percent, computed and rounded as the official evaluation does
    (`round(right / total * 100, 2)`, Python's rounding, not numpy's): so `17.66`, `12.5`, `0.0`.
    A response that failed or was not scored counts as wrong; except under evalscope's protocol,
    whose mean leaves out the responses it excludes (the rules' judge errors there)."""
    if "protocol" in group and "status" in group:
        group = group[
            ~(
                group["protocol"].astype(str).str.startswith("mathvision evalscope ")
                & (group["status"] == "judge_error")
            )
        ]
    right = float(group["score"].fillna(0).sum())
    return round(right / max(len(group), 1) * 100, 2)


# ---------------------------------------------------------------- the report


def report_sections(problem: Problem, judgment) -> list[ReportSection]:
    """A multiple-choice problem's options, with the gold one and the one the response chose."""
    if not problem.choices:
        return []
    gold = problem.answers[0].value.strip() if problem.answers else ""
    chosen = {str(e).strip() for e in judgment.extracted}
    letters = [chr(ord("A") + index) for index in range(len(problem.choices))]
    rows = tuple(
        (letter, choice, letter == gold or choice.strip() == gold, letter in chosen or choice.strip() in chosen)
        for letter, choice in zip(letters, problem.choices)
    )
    return [
        ReportSection(
            "choices",
            "Choices",
            (("level", "–" if problem.level is None else str(problem.level)), ("subject", problem.subject or "–")),
            (ReportTable("choices", ("option", "text", "gold", "chosen"), rows, math=("text",)),),
        )
    ]
