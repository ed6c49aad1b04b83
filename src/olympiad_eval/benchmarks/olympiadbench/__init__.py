"""OlympiadBench (ACL 2024, OpenBMB): olympiad and Gaokao (CEE) maths and physics, zh and en.

Two release layouts, chosen by the benchmark config's `layout`:
- `first_release`: `data/<CLASSIFICATION>.json` (`English_Olympiad_Physics`, `Gaokao_Maths`, ...),
  text only, each record with its `label` (open-ended or theorem proving), `source` and
  `support_auto_scoring`;
- `current`: `data/<TYPE>_<MODALITY>_<subject>_<lang>_<SOURCE>.json` (`OE_MM_physics_en_COMP.json`:
  open-ended or theorem proving, multimodal or text only, maths or physics, en or zh, competition or
  CEE), with `context` and figures in `images/img_<N>.jpg`, named in the text by `<img_N>` markers.

A problem whose text refers to a figure the release does not hold (every one of the first release's
"如图" / "as shown in the figure" and its Markdown links to images it does not hold; a marker whose
image is absent) is kept, marked, counted in a
log line, and left out of the suites that take only `figure_status: [complete]` (all of ours):
never sent without its figure unless a suite asks for it. Problems the official protocol does not
score automatically (theorem proving, `support_auto_scoring: false`) are left out the same way
(`scoring_modes: [auto]`); the suite's selection, and so every table, says how many of each.

Prompts are the official ones (`inference/code/evaluators/evaluator.py`): the instruction per answer
type, unit and multiple-answer wording, in the problem's language, then the problem. Scoring is the
official automatic scorer, reproduced in `olympiadbench_official`; `rules` scores the same extracted
answer by our physics rules (`mathcheck.equivalent`) instead.

A problem's own metadata is in `Problem.attributes`; its `subset` is the current release's file
stem (`OE_TO_maths_en_COMP`, for both layouts) and its `subject` the release's subfield, which is
what judgments carry to the tables.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from olympiad_eval import lazy_import
from olympiad_eval.benchmarks import (
    Filter,
    Score,
    Scoring as BaseScoring,
    Suite as BaseSuite,
    no_judge_tasks,
    rules_alone,
)
from olympiad_eval.benchmarks.olympiadbench import official as olympiadbench_official
from olympiad_eval.benchmarks.release import Fields, as_text, load_figure, release_path
from olympiad_eval.core.records import AnswerSlot, Figure, InputError, Problem, RecordError
from olympiad_eval.core.stats import ratio_bootstrap
from olympiad_eval.core.templates import fill
from olympiad_eval.scoring.checks import Check, Equivalence

np, pd = lazy_import("numpy"), lazy_import("pandas")  # for the tables only

# See `benchmarks/__init__.py`: bump a version with any change that can alter a verdict or a score.
PROTOCOL_VERSIONS = {"official": 1, "rules": 1}
PARTS = ()  # rules alone: the score is all there is

LAYOUTS = ("first_release", "current")
# The first release's files: <English|Chinese>_Olympiad_<Physics|Mathematics> and Gaokao_<Physics|Maths>.
FIRST_RELEASE_FILE = re.compile(
    r"(?:(?P<lang>English|Chinese)_Olympiad|(?P<cee>Gaokao))_(?P<subject>Physics|Mathematics|Maths)"
)
CURRENT_FILE = re.compile(
    r"(?P<type>OE|TP)_(?P<modality>MM|TO)_(?P<subject>maths|physics)_(?P<lang>en|zh)_(?P<source>COMP|CEE)"
)
MARKER = re.compile(r"<img_(\d+)>")
FIGURE_SUFFIXES = (".jpg", ".png")  # the official code reads .jpg; a PNG is taken too
# A Markdown image (`![](https://cdn.mathpix.com/...)`): the first release links its figures so, to
# files it does not hold.
MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*([^)\s]*)")
# Words by which a text refers to a figure ("如图所示", "图甲", "as shown in the figure", "diagram below").
FIGURE_REFERENCE = re.compile(
    r"如图|图中|图示|见图|下图|上图|右图|左图|图[甲乙丙丁]|图\s*[（(]?\s*[0-9a-d]"
    r"|(?i:\b(?:figures?|fig\.|diagrams?|pictures?)\b|\bshown (?:below|above|in the)\b)"
)
AUTO = "auto"  # scored by the official automatic scorer
HUMAN = "human"  # the official protocol leaves it to human evaluation (proofs, free-form answers)
COMPLETE, MISSING = "complete", "missing"


@dataclass
class Scoring(BaseScoring):
    """official: the official automatic scorer (`olympiadbench_official`), its tolerance per problem
    (`error`); rules: our physics rules on the same extracted answer, within `rel_tol`."""

    rel_tol: float = 0.0


@dataclass
class Suite(BaseSuite):
    figure_status: Optional[list[str]] = None  # [complete]: leave out problems whose figure the release lacks
    scoring_modes: Optional[list[str]] = None  # [auto]: only the problems the official scorer scores
    subjects: Optional[list[str]] = None  # maths, physics
    sources: Optional[list[str]] = None  # COMP, CEE
    modalities: Optional[list[str]] = None  # TO, MM
    scoring: Scoring = field(default_factory=Scoring)


def filters(suite) -> list[Filter]:
    """OlympiadBench's parts of the release, as its tables report them, and the two that keep a
    suite to what can be asked and scored (`figure_status`, `scoring_modes`)."""
    own = lambda name: lambda problem: (problem.attributes[name],)  # noqa: E731
    return [
        Filter(
            "figure_status", suite.figure_status, lambda p: (MISSING if p.attributes["figure_missing"] else COMPLETE,)
        ),
        Filter("scoring_modes", suite.scoring_modes, lambda p: (AUTO if auto_scored(p) else HUMAN,)),
        Filter("subjects", suite.subjects, own("subject")),
        Filter("sources", suite.sources, own("source")),
        Filter("modalities", suite.modalities, own("modality")),
    ]


def auto_scored(problem: Problem) -> bool:
    return bool(problem.attributes["support_auto_scoring"])


# ---------------------------------------------------------------- loading


def load(root: Path, cfg, benchmark: str) -> list[Problem]:
    layout = str(cfg.get("layout", "first_release"))
    if layout not in LAYOUTS:
        raise InputError(f"benchmark '{benchmark}': layout '{layout}' is not one of {', '.join(LAYOUTS)}")
    files = sorted((root / "data").glob("*.json"))
    if not files:
        raise InputError(f"benchmark '{benchmark}': no data/*.json in {root}")
    problems = [problem for path in files for problem in _load_file(path, root, layout, benchmark)]
    missing = sum(problem.attributes["figure_missing"] for problem in problems)
    if missing:
        logging.getLogger(__name__).warning(
            "benchmark '%s': %d of %d problems refer to a figure the release does not hold; suites with "
            "figure_status [complete] leave them out",
            benchmark,
            missing,
            len(problems),
        )
    return problems


def _load_file(path: Path, root: Path, layout: str, benchmark: str) -> list[Problem]:
    pattern = FIRST_RELEASE_FILE if layout == "first_release" else CURRENT_FILE
    named = pattern.fullmatch(path.stem)
    if named is None:
        raise InputError(
            f"{path}: not a file of OlympiadBench's {layout} layout (expected names like "
            f"{'Gaokao_Physics.json' if layout == 'first_release' else 'OE_MM_physics_en_COMP.json'})"
        )
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"{path}: not a JSON file: {error}") from None
    if not isinstance(records, list):
        raise InputError(f"{path}: expected a JSON list of problems, got {type(records).__name__}")
    meta = _file_meta(named, layout)
    for index, item in enumerate(records):
        if not isinstance(item, dict):
            raise RecordError(path, f"at index {index}", "(json)", "not a JSON object")
    return [_problem(item, path, root, meta, benchmark) for item in records]


def _file_meta(named: re.Match, layout: str) -> dict:
    """What a file's name says of its problems: language, subject, source (and, in the current
    layout, type and modality)."""
    if layout == "current":
        return {
            "language": named["lang"],
            "subject": named["subject"],
            "source": named["source"],
            "type": named["type"],
            "modality": named["modality"],
        }
    return {
        "language": "en" if named["lang"] == "English" else "zh",
        "subject": "physics" if named["subject"] == "Physics" else "maths",
        "source": "CEE" if named["cee"] else "COMP",
    }


def _problem(item: dict, path: Path, root: Path, meta: dict, benchmark: str) -> Problem:
    fields = Fields(item, path)
    fields.require("id", "question")
    question, context = fields.text("question"), fields.text("context", required=False)
    answer_type = fields.text("answer_type", required=False)
    finals = [
        as_text(value, where=path, record=fields.record, field_name="final_answer")
        for value in fields.list("final_answer")
    ]
    kind = meta.get("type") or ("TP" if fields.text("label", required=False) == "Theorem_Proving" else "OE")
    auto = _auto_scored(fields, kind, answer_type)
    if auto and not (finals and finals[0].strip()):
        raise RecordError(path, fields.record, "final_answer", "empty: the official scorer compares responses with it")
    if auto and not answer_type.strip():
        raise RecordError(path, fields.record, "answer_type", "missing: the prompt states the answer type")
    error = fields.text("error", required=False)
    try:
        olympiadbench_official.precision(error, finals, answer_type)  # read when judged: refused now
    except ValueError as problem:
        raise RecordError(path, fields.record, "error", str(problem)) from None
    figures, absent = _figures(context + "\n" + question, root, path, fields.record)
    figure_missing = bool(absent) or (bool(FIGURE_REFERENCE.search(context + "\n" + question)) and not figures)
    modality = meta.get("modality") or ("MM" if figure_missing else "TO")
    attributes = {
        "type": kind,
        "modality": modality,
        "subject": meta["subject"],
        "source": meta["source"],
        "subfield": fields.text("subfield", required=False),
        "answer_type": answer_type,
        "error": error,
        "is_multiple_answer": _flag(fields, "is_multiple_answer"),
        "support_auto_scoring": auto,
        "label": fields.text("label", required=False),
        "competition": fields.text("source", required=False),
        "final_answers": finals,
        "figure_missing": figure_missing,
        "missing_figures": absent,
    }
    unit = fields.text("unit", required=False)
    return Problem(
        origin=f"data/{path.name}",
        id=fields.record,
        benchmark=benchmark,
        language=meta["language"],
        question=question,
        context=context,
        subset=f"{kind}_{modality}_{meta['subject']}_{meta['language']}_{meta['source']}",
        subject=attributes["subfield"],
        figures=figures,
        answers=(AnswerSlot(value=finals[0] if finals else "", kind=answer_type, unit=unit or None),),
        solution=_solution(fields),
        attributes=attributes,
    )


def _solution(fields: Fields) -> str:
    """The official solutions (a list: several ways), one after another."""
    steps = fields.list("solution") if isinstance(fields.raw("solution"), list) else [fields.raw("solution")]
    return "\n\n".join(
        as_text(step, where=fields.where, record=fields.record, field_name="solution", required=False) for step in steps
    )


def _flag(fields: Fields, name: str) -> bool | None:
    value = fields.raw(name)
    if value is not None and not isinstance(value, bool):
        raise RecordError(fields.where, fields.record, name, f"expected true, false or null, got {value!r:.80}")
    return value


def _auto_scored(fields: Fields, kind: str, answer_type: str) -> bool:
    """The release's `support_auto_scoring` where it has one (the first release); the current one
    says it by its files: open-ended problems whose answer type is not left to humans."""
    given = _flag(fields, "support_auto_scoring")
    if given is not None:
        return given
    return kind == "OE" and bool(answer_type) and "Need_human_evaluate" not in answer_type


def _figures(text: str, root: Path, path: Path, record: str) -> tuple[tuple[Figure, ...], list[str]]:
    """The figures the markers name, in order of first mention, and those the release does not hold:
    markers without their image (`images/img_<N>.jpg`, as the official inference code reads them, or
    `.png`), and Markdown image links (the first release's, to a CDN)."""
    held, absent = [], []
    for number in dict.fromkeys(MARKER.findall(text)):
        names = [f"images/img_{number}{suffix}" for suffix in FIGURE_SUFFIXES]
        images = [release_path(name, root=root, where=path, record=record, field_name="question") for name in names]
        found = next(((name, image) for name, image in zip(names, images) if image.is_file()), None)
        if found is None:
            absent.append(names[0])
        else:
            held.append(load_figure(found[1], release_file=path, record=record, field_name="question", name=found[0]))
    absent += [link or "(an image link without a target)" for link in MARKDOWN_IMAGE.findall(text)]
    return tuple(held), absent


# ---------------------------------------------------------------- prompts


def template_key(problem: Problem) -> str:
    kind = "theorem_proving" if problem.attributes["type"] == "TP" else "open_ended"
    return f"{kind}_{problem.language}"


def template_fields(problem: Problem, suite) -> tuple[str, dict]:
    """The official instruction (`Evaluator.make_prompt`), filled from the template's own wording
    (answer types, multiple answers, units: `conf/prompt/olympiadbench_*.yaml`), and the problem:
    physics problems with their context first, maths problems without it, as the official code
    does. `<img_N>` markers become `<imageK>` (K: the figure's place in `figures`), where render
    puts each figure."""
    key = template_key(problem)
    template = dict(suite.templates).get(key)
    if template is None:
        return key, {}  # render names the missing template
    fields = {"subject": template["subjects"][problem.attributes["subject"]], "question": _content(problem)}
    if problem.attributes["type"] == "OE":
        fields.update(_answer_wording(problem, template))
    return key, fields


def _content(problem: Problem) -> str:
    text = problem.question
    if problem.attributes["subject"] == "physics" and problem.context:
        text = problem.context + "\n" + problem.question
    numbers = {Path(figure.name).stem: index for index, figure in enumerate(problem.figures, start=1)}
    return MARKER.sub(lambda m: f"<image{numbers[f'img_{m[1]}']}>" if f"img_{m[1]}" in numbers else m[0], text)


def _answer_wording(problem: Problem, template) -> dict:
    """`answer_type_text`, `answer_format` and `unit_text`, as `make_prompt` composes them."""
    multiple = bool(problem.attributes["is_multiple_answer"])
    answer_format = template["multiple_answer_format" if multiple else "answer_format"]
    unit_text = ""
    if problem.answers[0].unit:
        answer_format += template["unit_format"]
        unit_text = template["unit_text"]
    try:
        types = answer_type_text(problem.attributes["answer_type"], multiple, template)
    except ValueError as error:  # the official code stops there too (`exit`)
        raise InputError(f"{problem.origin}: record {problem.id}: field 'answer_type': {error}") from None
    return {"answer_type_text": types, "answer_format": answer_format, "unit_text": unit_text}


def answer_type_text(answer_type: str, multiple: bool, template) -> str:
    """`get_answer_type_text` of the official code: nothing for tuples and free-form answers (the
    word 'tuple' misleads, it says); else the single type, or the multiple answers' types."""
    if "Need_human_evaluate" in answer_type or "Tuple" in answer_type:
        return ""
    if not multiple:
        return fill(template["one_answer"], {"type": _type_name(answer_type, template)})
    names = [_type_name(part, template) for part in answer_type.split(",")]
    if len(set(names)) == 1:
        return fill(template["multiple_answers_same_type"], {"type": names[0]})
    return fill(template["multiple_answers_in_order"], {"types": template["types_joiner"].join(names)})


def _type_name(answer_type: str, template) -> str:
    """The first of the official types found in the text (so `Expression,Numerical` of a problem
    with one answer reads as numerical, as the official loop does)."""
    for name, wording in template["answer_types"].items():
        if name in answer_type:
            return wording
    raise ValueError(f"'{answer_type}' is none of {', '.join(template['answer_types'])}: the prompt cannot name it")


def figures(problem: Problem, suite) -> list:
    return list(problem.figures)


_MATH = re.compile(r"\$([^$]*)\$")
_BETWEEN_ANSWERS = re.compile(r"[\s\u3000,，、]*")


def gold_text(problem: Problem) -> str:
    """The official gold answer (`final_answer[0]`, as the official judge reads it) without its `$`;
    several answers, each in its own `$...$` with only spaces or commas between them, joined by
    commas, as the prompt asks for multiple answers."""
    gold = problem.answers[0].value.strip()
    pieces = _MATH.findall(gold)
    if len(pieces) > 1 and all(_BETWEEN_ANSWERS.fullmatch(rest) for rest in _MATH.split(gold)[::2]):
        return ", ".join(piece.strip() for piece in pieces)
    return gold.replace("$", "").strip()


def reference(problem: Problem, suite) -> str:
    """The gold answer ended as the prompt asks: "So the final answer is \\boxed{...}(unit)." (or
    its Chinese); for a proof, the official solution."""
    if problem.attributes["type"] == "TP" or not problem.answers[0].value.strip():
        return problem.solution
    unit = f"({problem.answers[0].unit})" if problem.answers[0].unit else ""
    if problem.language == "zh":
        return f"所以最终答案是\\boxed{{{gold_text(problem)}}}{unit}。"
    return f"So the final answer is \\boxed{{{gold_text(problem)}}}{unit}."


# ---------------------------------------------------------------- scoring

NOT_AUTO = (
    "the official protocol leaves this problem to human evaluation (theorem proving, or not "
    "support_auto_scoring) and no judge protocol is configured for it"
)


def extracted(problem: Problem, response: str) -> str:
    return olympiadbench_official.extract_answer(response, problem.language)


def rule_checks(problem: Problem, response: str, scoring) -> list[Check]:
    """One check per response: the official judge of the extracted answer against the gold, with
    the problem's tolerance; under `rules`, our physics rules on the same answer."""
    if not auto_scored(problem):
        return []
    answer = extracted(problem, response)
    if scoring.protocol == "rules":
        return [Equivalence(gold_text(problem), _boxed(answer), scoring.rel_tol, problem.answers[0].unit)]
    attributes = problem.attributes
    tolerance = olympiadbench_official.precision(
        attributes["error"], attributes["final_answers"], attributes["answer_type"]
    )
    return [olympiadbench_official.check(attributes["final_answers"], answer, tolerance)]


_BOXED = re.compile(r"\\boxed\s*\{")


def _boxed(text: str) -> str:
    """The contents of the boxes in `text`, joined by commas (the text itself without a box)."""
    found = []
    for match in _BOXED.finditer(text):
        depth, end = 1, match.end()
        while end < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        found.append(text[match.end() : end - 1])
    return ", ".join(found) if found else text.replace("$", "").strip().rstrip(".。")


def rule_score(problem: Problem, response: str, scoring, verdicts: list) -> Score:
    if not auto_scored(problem):
        return Score(score=0.0, points=0.0, unscorable=NOT_AUTO)
    verdict = verdicts[0]
    given = verdict.answer or extracted(problem, response)
    correct = bool(verdict.correct)
    return Score(
        score=1.0 if correct else 0.0,
        points=1.0 if correct else 0.0,
        extracted=(given,),
        slots=({"expected": problem.answers[0].value, "given": given, "correct": correct, "points": 1.0},),
        verdict="correct" if correct else "incorrect",
        undecided=(verdict.reason,) if verdict.correct is None else (),
    )


# OlympiadBench is scored by rules alone: nothing to ask an LLM judge.
judge_tasks = judge_tasks_after_rules = judge_tasks_after_rules_at_most = no_judge_tasks
combine = rules_alone


# ---------------------------------------------------------------- tables

CELL = ["suite", "model", "judge"]
BREAKDOWNS = {
    "subject": "subject",
    "language": "language",
    "source": "source",
    "modality": "modality",
    "subfield": "subfield",
}


def tables(frame: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """Accuracy (%) overall and per subject (maths, physics), language, source (COMP: competitions,
    CEE: the Gaokao), modality and subfield, as the paper reports it, each with its 95% bootstrap
    interval (problems resampled). A judgment the rules could not score (a problem left to human
    evaluation, asked anyway) is counted in `not scored` and left out of the accuracy, as the
    official evaluation leaves such problems out; a failed generation counts as wrong."""
    parts = frame["subset"].str.split("_", expand=True).reindex(columns=range(5))
    frame = frame.assign(
        type=parts[0],
        modality=parts[1],
        subject=parts[2],
        source=parts[4],
        subfield=frame["subject"].replace("", "(none)"),
    )
    result = {"accuracy": _accuracy(frame, [])}
    for name, column in BREAKDOWNS.items():
        result[f"accuracy_by_{name}"] = _accuracy(frame, [column])
    return result


def _accuracy(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    rows = []
    for keys, group in frame.groupby([*CELL, *by], sort=True):
        scored = group[group["status"] != "judge_error"]
        per_problem = scored.assign(score=scored["score"].fillna(0)).groupby("id")["score"].mean().to_numpy()
        low, high = interval(per_problem)
        rows.append(
            (
                *keys,
                len(per_problem),
                int(group["id"][group["status"] == "judge_error"].nunique()),
                round(100 * per_problem.mean(), 2) if per_problem.size else float("nan"),
                low,
                high,
            )
        )
    columns = [*CELL, *by, "problems", "not scored", "accuracy (%)", "95% CI low", "95% CI high"]
    return pd.DataFrame(rows, columns=columns)


def interval(scores) -> tuple[float, float]:
    """The 95% bootstrap interval of the accuracy (%) over problems resampled with replacement."""
    low, high = ratio_bootstrap(scores, np.ones(len(scores)), seed=0)
    return (low, high) if np.isnan(low) else (round(low, 2), round(high, 2))
