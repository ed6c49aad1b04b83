"""PhysElite: bilingual (zh/en) olympiad physics, every problem answered in both languages.

Two release layouts, chosen by the benchmark config's `layout`: `long`, one row per problem x
language (the Hub release as a third-party loader reads it), and `wide`, one row per problem with
per-language columns (`problem_text_cn`, `problem_text_en`, ...: the paper's appendix C.2). The
column names are not settled, so the mapping from our fields to the release's columns lives in the
config (`fields`; in the wide layout `{language}` in a column name stands for each language's
suffix, `languages`; in the long layout `languages` lists the codes a row may have). A problem may
have one or more subjects (a list): it counts under each.
The official answer score comes from LLM judges; the rule judge compares the "FINAL ANSWER:"
line with the reference answer within the numeric tolerance (5% by default). An empty reference
answer is valid: the LLM judges then take the result from the reference solution (paper, F.3);
the rule judge cannot decide such a problem and says so. An empty answer with no solution is refused.

Every table is per setting (the suites' `setting`: schematic only, with process diagrams, with a
hint), never pooled across settings; within a setting, the zh and en suites are averaged as the
paper does (F.1). A variant suite names its `baseline` suite, and the paper's Table 4 compares the
two on the same problems.
"""

from __future__ import annotations

import atexit
import hashlib
import io
import math
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from omegaconf import OmegaConf
from PIL import Image

from olympiad_eval import lazy_import
from olympiad_eval.benchmarks import (
    Filter,
    JudgeTask,
    Placement,
    ReportSection,
    ReportTable,
    Score,
    Scoring as BaseScoring,
    Suite as BaseSuite,
    choices,
    delimited,
    failed_tasks,
    json_reply,
)
from olympiad_eval.benchmarks.release import (
    MIME_BY_FORMAT,
    SUFFIX_BY_MIME,
    UNREADABLE_IMAGE,
    Fields,
    as_text,
    load_figure,
    release_path,
)
from olympiad_eval.core.records import AnswerSlot, Figure, InputError, Problem, RecordError, iter_json_lines
from olympiad_eval.core.templates import fill
from olympiad_eval.scoring import answers
from olympiad_eval.scoring.checks import Check, Equivalence
from olympiad_eval.scoring.expressions import numbers_close, to_number

np, pd = lazy_import("numpy"), lazy_import("pandas")  # for Parquet releases and the tables only

REQUIRED = ("id", "text", "answer")  # and, in the long layout, "language"
LAYOUTS = ("long", "wide")
LANGUAGE_SUFFIX = "{language}"  # in a wide layout's column name: the language's suffix (`languages`)
# A problem's subjects, as one text (the records keep one subject field); tables split them again.
SUBJECT_SEPARATOR = "; "

# See `benchmarks/__init__.py`: bump a version with any change that can alter a verdict or a score.
PROTOCOL_VERSIONS = {"official": 3}  # one protocol: the paper's
PARTS = ("process",)  # the mean of the judges' process scores, 0-1

# ---------------------------------------------------------------- suites

Figures = choices("Figures", ("none", "schematic", "schematic+process"))  # paper, Table 4
HintMode = choices("HintMode", ("none", "first_step", "without_result"))


@dataclass
class Hint:
    """A textual solution hint after the problem (see `hint`)."""

    mode: HintMode = HintMode.none
    step_separator: str = r"\n+"
    label: str = "Hint:"
    answer_tolerance: float = 0.05


@dataclass
class Scoring(BaseScoring):
    """The paper's protocol: answer verdicts (5% numeric tolerance) and, unless turned off, the
    process score, from each judge of the ensemble. Prompts: `answer`, `process`, `error_type`."""

    rel_tol: float = 0.05
    process: bool = True  # also grade the derivation's steps
    error_types: bool = False  # also classify the error of a wrong answer (the paper's six types)


@dataclass
class Suite(BaseSuite):
    setting: Optional[str] = None  # the row its results take in every table (null: the suite's own name)
    baseline: Optional[str] = None  # the suite a variant setting is compared with
    figures: Figures = Figures.schematic
    figure_placement: Placement = Placement.after_text
    hint: Hint = field(default_factory=Hint)
    subjects: Optional[list[str]] = None  # only problems tagged with one of these subjects; null: all
    difficulty: Optional[list[int]] = None  # only these difficulties (1-7: [6, 7] is the hard band); null: all
    scoring: Scoring = field(default_factory=Scoring)


def filters(suite) -> list[Filter]:
    """PhysElite's own parts of the release: `subjects` (a problem with several subject tags is
    in each) and `difficulty`, as its tables report them."""
    return [
        Filter("subjects", suite.subjects, lambda problem: subjects_of(problem.subject)),
        Filter("difficulty", suite.difficulty, lambda problem: (problem.level,)),
    ]


def load(root: Path, cfg, benchmark: str) -> list[Problem]:
    """The split's problems, in the release's row order.

    Two layouts: the Hub's Parquet (`data/<split>-00000-of-0000N.parquet` shards, read in name
    order, or `data/<split>.parquet`), whose image columns hold `{"bytes", "path"}` structs; and
    `data/<split>.jsonl` with images as paths relative to the release. Parquet wins when both
    are there. A record is named `<file>:<line>` (JSONL, 1-based) or `<file>:row <n>` (Parquet,
    0-based within the shard, as the Hub's dataset viewer and pandas count).
    """
    split = str(cfg.get("split", "test"))
    data = root / "data"
    problems_of = _row_reader(cfg, root, benchmark, _EmbeddedImages())
    shards = _parquet_shards(data, split)
    if shards:
        return [
            problem
            for shard in shards
            for index, row in enumerate(_parquet_rows(shard))
            for problem in problems_of(row, f"{shard}:row {index}")
        ]
    path = data / f"{split}.jsonl"
    if not path.is_file():
        raise InputError(
            f"benchmark '{benchmark}': {path} not found (nor {data}/{split}.parquet or {data}/{split}-*.parquet)"
        )
    return [problem for line, row in iter_json_lines(path) for problem in problems_of(row, f"{path}:{line}")]


def _row_reader(cfg, root: Path, benchmark: str, images: _EmbeddedImages):
    """(row, where) -> the row's problems: one (long layout) or one per language (wide layout)."""
    columns = {name: str(column) for name, column in dict(cfg.fields).items()}
    layout = cfg.get("layout", "long")
    languages = cfg.get("languages")
    if layout == "long":
        if not languages or not (OmegaConf.is_config(languages) or isinstance(languages, (list, tuple, dict))):
            raise InputError(
                f"benchmark '{benchmark}': `languages` must list the release's language codes "
                f"([en, zh]), got {languages!r}"
            )
        known = [str(code) for code in languages]
        return lambda row, where: [_problem(row, where, root, columns, benchmark, images, known=known)]
    if layout != "wide":
        raise InputError(
            f"benchmark '{benchmark}': layout must be one of {', '.join(LAYOUTS)} (long: one row per "
            f"problem and language; wide: one row per problem, per-language columns), got {layout!r}"
        )
    if not languages or not hasattr(languages, "items"):
        raise InputError(
            f"benchmark '{benchmark}': the wide layout needs `languages`, each language's code and the "
            f"suffix of its columns (zh: cn, en: en), got {languages!r}"
        )
    if not any(LANGUAGE_SUFFIX in column for column in columns.values()):
        raise InputError(
            f"benchmark '{benchmark}': in the wide layout some `fields` must name per-language columns "
            f"with '{LANGUAGE_SUFFIX}' (text: problem_text_{LANGUAGE_SUFFIX})"
        )
    per_language = {
        str(code): {name: column.replace(LANGUAGE_SUFFIX, str(suffix)) for name, column in columns.items()}
        for code, suffix in languages.items()
    }
    return lambda row, where: [
        _problem(row, where, root, language_columns, benchmark, images, language=code)
        for code, language_columns in per_language.items()
    ]


def _parquet_shards(data: Path, split: str) -> list[Path]:
    # `<split>-<digit>...`: the Hub's shard names; a split "test" must not read "test-hard-*".
    shards = sorted(path for path in data.glob(f"{split}-[0-9]*.parquet") if path.is_file())
    single = data / f"{split}.parquet"
    return shards or ([single] if single.is_file() else [])


def _parquet_rows(path: Path) -> list[dict]:
    frame = pd.read_parquet(path)
    return [{column: _plain(value) for column, value in row.items()} for row in frame.to_dict(orient="records")]


def _plain(value):
    """A Parquet cell as plain Python: arrays become lists, numpy scalars Python ones, nulls None."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (np.ndarray, list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


class _EmbeddedImages:
    """Image bytes embedded in the release, written once each (by content hash) to a temporary
    folder made on first use. The fetch stage copies figures into its own output, so the folder
    only has to outlive the fetch: it is removed when the interpreter exits."""

    def __init__(self) -> None:
        self.folder: Path | None = None

    def write(self, data: bytes, where: str, record: str, field_name: str, name: str) -> Path:
        try:
            with Image.open(io.BytesIO(data)) as image:
                image_format = image.format or ""
        except UNREADABLE_IMAGE as error:
            raise RecordError(where, record, field_name, f"figure '{name}' is not a readable image: {error}") from None
        mime = MIME_BY_FORMAT.get(image_format, f"image/{image_format.lower()}")
        suffix = SUFFIX_BY_MIME.get(mime, f".{image_format.lower()}")
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="physelite-images-"))
            atexit.register(shutil.rmtree, self.folder, ignore_errors=True)
        path = self.folder / (hashlib.sha256(data).hexdigest() + suffix)
        if not path.exists():
            path.write_bytes(data)
        return path


def _problem(
    row: dict,
    where: str,
    root: Path,
    columns: dict,
    benchmark: str,
    images: _EmbeddedImages,
    language: str | None = None,
    known: list[str] = (),
) -> Problem:
    """One problem in one language: the row's `language` column (long layout), one of `known`,
    or `language`."""
    fields = Fields(row, where, columns)
    fields.require(*REQUIRED, *(("language",) if language is None else ()))
    if language is None:
        language = fields.text("language")
        if language not in known:
            raise RecordError(
                where,
                fields.record,
                fields.column("language"),
                f"'{language}' is not one of the benchmark's languages ({', '.join(known)}; "
                f"`languages` in conf/benchmark/{benchmark}.yaml)",
            )
    answer, solution = fields.text("answer"), fields.text("solution", required=False)
    if not answer.strip() and not solution.strip():
        raise RecordError(
            where,
            fields.record,
            fields.column("answer"),
            f"empty, and so is {fields.column('solution')}: the judges take the result from the "
            "solution when the answer is empty, and there is neither",
        )
    subjects = _subjects(fields)
    figures: list[Figure] = []
    for name, role in (("images", "schematic"), ("process_images", "process")):
        figures += _figures(
            fields.raw(name), root, where, fields.record, fields.column(name), role, images, len(figures)
        )
    return Problem(
        id=fields.record,
        origin=Path(where).relative_to(root).as_posix(),
        benchmark=benchmark,
        language=language,
        group=fields.record,
        subset=subjects,
        subject=subjects,
        level=fields.level("difficulty"),
        question=fields.text("text"),
        solution=solution,
        answers=(AnswerSlot(value=answer, kind="Open"),),
        figures=tuple(figures),
    )


def _subjects(fields: Fields) -> str:
    """The problem's subject, or its subjects ("one or more" tags, paper appendix B) joined by
    SUBJECT_SEPARATOR; "" when none."""
    raw = fields.raw("subject")
    names = raw if isinstance(raw, list) else [raw]
    texts = [
        as_text(
            name, where=fields.where, record=fields.record, field_name=fields.column("subject"), required=False
        ).strip()
        for name in names
    ]
    for text in texts:
        if SUBJECT_SEPARATOR.strip() in text:
            raise RecordError(
                fields.where,
                fields.record,
                fields.column("subject"),
                f"subject '{text}' contains '{SUBJECT_SEPARATOR.strip()}', which separates subjects",
            )
    return SUBJECT_SEPARATOR.join(text for text in texts if text)


def subjects_of(subject: str) -> list[str]:
    """The subjects a problem counts under (its `subject` field split again)."""
    return [name.strip() for name in str(subject or "").split(SUBJECT_SEPARATOR.strip()) if name.strip()]


def _figures(
    items, root: Path, where: str, record: str, field_name: str, role: str, images: _EmbeddedImages, before: int
) -> list[Figure]:
    """A column's figures: paths relative to the release, or `{"bytes", "path"}` structs (a
    single image or a list). An embedded image is named by its struct's `path`, else
    `<problem id>_<n>` with n counting the problem's figures from 1."""
    if items is None:
        return []
    if isinstance(items, (str, dict)):
        items = [items]
    if not isinstance(items, list):
        raise RecordError(
            where,
            record,
            field_name,
            f"expected a figure or a list of figures, got {type(items).__name__} {items!r:.80}",
        )
    figures = []
    for number, item in enumerate(items, start=before + 1):
        if isinstance(item, str):
            path, name = release_path(item, root=root, where=where, record=record, field_name=field_name), item
        elif isinstance(item, dict) and item.get("bytes") is not None:
            data = item["bytes"]
            name = str(item.get("path") or f"{record}_{number}")
            if not isinstance(data, (bytes, bytearray)):
                raise RecordError(where, record, field_name, f"figure '{name}': bytes of type {type(data).__name__}")
            path = images.write(bytes(data), where, record, field_name, name)
        elif isinstance(item, dict) and item.get("path"):
            name = item["path"]
            path = release_path(name, root=root, where=where, record=record, field_name=field_name)
        else:
            raise RecordError(
                where, record, field_name, f"figure {number} has neither a path nor image bytes: {item!r:.80}"
            )
        figures.append(
            load_figure(path, release_file=where, record=record, field_name=field_name, name=name, role=role)
        )
    return figures


def template_fields(problem: Problem, suite) -> tuple[str, dict]:
    text = hint(problem, suite)
    label = suite.hint.label
    return "default", {"problem": problem.question + (f"\n\n{label}\n{text}" if text else "")}


# A number the text states as a result: right after "=", "≈", "\approx" or "\simeq".
_STATED_NUMBER = re.compile(
    r"(?:=|≈|\\approx|\\simeq)\s*\{?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:\s*\\times\s*10\^\{?[-+]?\d+\}?)?)"
)
_SPACING = re.compile(r"\s+|\$|\\[,;:! ]")
_PART_LABEL = re.compile(r"^\s*(?:\(\d+(?:\.\d+)*\)|\d+(?:\.\d+)*[.)]\s)\s*")  # "(1.1) ", "2. "


def hint(problem: Problem, suite) -> str:
    """The textual solution hint of a hint suite (paper, Table 4), never the answer.

    The reference solution is cut into steps at `hint.step_separator` (a regex; line breaks by
    default). `first_step` hints with the first step, `without_result` with every step but the
    last (the concluding result). Steps are then dropped from the end while the hint still states
    the final answer (`states_answer`): a hint may lead to the result, never give it. "" when
    nothing is left, or for mode `none`."""
    config = suite.hint
    if config.mode == "none":
        return ""
    steps = [step.strip() for step in re.split(config.step_separator, problem.solution) if step.strip()]
    steps = steps[:1] if config.mode == "first_step" else steps[:-1]
    tolerance = float(config.answer_tolerance)
    while steps and states_answer("\n".join(steps), problem.answers[0].value, tolerance):
        steps.pop()
    return "\n".join(steps)


def states_answer(text: str, answer: str, rel_tol: float = 0.05) -> bool:
    """Whether `text` states the final `answer` or one of its parts (split at ";", each without its
    label "(1)"). A numerical
    part is stated when a number the text gives as a result ("= 279.7", "\\approx 280") lies
    within `rel_tol` of it (a bare "2" in "\\frac{1}{2}" is no result); any other part when its
    text, or for "r = ..." its right-hand side, appears in the text, spacing and `$` aside. An
    empty answer is never stated."""
    squeeze = lambda part: _SPACING.sub("", part)  # noqa: E731
    body = squeeze(text)
    stated = [value for match in _STATED_NUMBER.finditer(text) if (value := to_number(match.group(1))) is not None]
    for part in filter(str.strip, re.split(r"[;；]", answer)):
        part = _PART_LABEL.sub("", part)
        value = to_number(part.strip())
        if value is not None:
            if any(numbers_close(value, number, rel_tol) for number in stated):
                return True
        elif any(form in body for form in {squeeze(part), squeeze(part.split("=")[-1])} - {""}):
            return True
    return False


def figures(problem: Problem, suite) -> list[Figure]:
    wanted = {"none": (), "schematic": ("schematic",), "schematic+process": ("schematic", "process")}
    roles = wanted[suite.figures]
    return [figure for figure in problem.figures if figure.role in roles]


def reference(problem: Problem, suite) -> str:
    """The gold answer as the prompt asks for it; with no reference answer, the reference solution
    (whose result the judges then extract, as the paper's F.3 says)."""
    if not problem.answers[0].value.strip():
        return f"Reference derivation.\n{problem.solution}"
    return f"Reference derivation.\nFINAL ANSWER: {problem.answers[0].value}"


def judge_reference(problem: Problem) -> str:
    return problem.answers[0].value


NO_REFERENCE = (
    "the release gives no reference answer: only the LLM judges can take it from the reference solution (paper, F.3)"
)


def rule_checks(problem: Problem, response: str, scoring) -> list[Check]:
    gold, given = problem.answers[0].value, answers.final_answer_line(response) or ""
    return [Equivalence(gold, given, scoring.rel_tol)] if gold.strip() and given else []


def rule_score(problem: Problem, response: str, scoring, verdicts: list) -> Score:
    """The "FINAL ANSWER:" line against the reference answer."""
    gold = problem.answers[0].value
    given = answers.final_answer_line(response) or ""
    if not gold.strip():
        return Score(score=0.0, points=0.0, extracted=(given,), verdict="undecided", unscorable=NO_REFERENCE)
    correct = bool(verdicts and verdicts[0].correct)
    return Score(
        score=1.0 if correct else 0.0,
        points=1.0 if correct else 0.0,
        extracted=(given,),
        slots=({"expected": gold, "given": given, "correct": correct, "points": 1.0},),
        verdict="correct" if correct else "incorrect",
        undecided=tuple(v.reason for v in verdicts if v.correct is None),
    )


# ---------------------------------------------------------------- LLM judges (the paper's protocol)

VERDICTS = ("correct", "partially_correct", "incorrect")
GRADES = (0.0, 0.5, 1.0)
ERROR_TYPES = (
    "physical_perception",
    "physical_law",
    "algebraic_symbolic",
    "incomplete_derivation",
    "geometric_visual",
    "numerical",
)


def parse_verdict(text: str) -> dict | None:
    """`{"verdict": ..., "reasoning": ...}` with one of the three verdicts, else None."""
    data = json_reply(text)
    if not data or data.get("verdict") not in VERDICTS:
        return None
    return {"verdict": data["verdict"], "reasoning": str(data.get("reasoning", ""))[:1000]}


def parse_steps(text: str) -> dict | None:
    """`{"steps": [{"step": ..., "grade": 1 | 0.5 | 0}, ...]}` with at least one step, else None."""
    data = json_reply(text)
    steps = data.get("steps") if data else None
    if not isinstance(steps, list) or not steps:
        return None
    graded = []
    for step in steps:
        grade = step.get("grade") if isinstance(step, dict) else None
        if isinstance(grade, bool) or not isinstance(grade, (int, float)) or float(grade) not in GRADES:
            return None
        graded.append({"step": str(step.get("step", ""))[:500], "grade": float(grade)})
    return {"steps": graded}


def parse_error_type(text: str) -> dict | None:
    data = json_reply(text)
    if not data or data.get("error_type") not in ("none", *ERROR_TYPES):
        return None
    return {"error_type": data["error_type"], "reasoning": str(data.get("reasoning", ""))[:1000]}


def judge_tasks(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    """The answer verdict (the paper's judge prompt) and, unless turned off, the process grading."""
    fenced, guard = delimited(response)
    fields = {
        "question": problem.question,
        "reference": judge_reference(problem),
        "solution": problem.solution,
        "response": fenced,
    }
    ask = lambda prompt: (
        {"role": "system", "content": guard},  # noqa: E731
        {"role": "user", "content": fill(str(prompt.text), fields)},
    )
    tasks = [JudgeTask("answer", ask(scoring.prompts.answer), parse_verdict)]
    if scoring.process:
        tasks.append(JudgeTask("process", ask(scoring.prompts.process), parse_steps))
    if scoring.error_types:
        tasks.append(JudgeTask("error_type", ask(scoring.prompts.error_type), parse_error_type))
    return tasks


def judge_tasks_after_rules(problem: Problem, response: str, rules, scoring) -> list[JudgeTask]:
    """None: the judges grade every response whatever the rules made of it."""
    return []


def judge_tasks_after_rules_at_most(problem: Problem, response: str, scoring) -> list[JudgeTask]:
    return []


def combine(problem: Problem, rules, replies: dict, scoring) -> Score | str:
    """Each judge scores on its own; the scores are the mean over judges (the paper's ensemble).
    Answer accuracy is strict: only "correct" counts."""
    failure = failed_tasks(replies)
    if failure:
        return failure
    verdicts = [judged["answer"]["verdict"] for judged in replies.values()]
    correct = sum(verdict == "correct" for verdict in verdicts) / len(verdicts)
    processes = [
        sum(s["grade"] for s in judged["process"]["steps"]) / len(judged["process"]["steps"])
        for judged in replies.values()
        if "process" in judged
    ]
    top = max(VERDICTS, key=verdicts.count)
    majority = top if verdicts.count(top) * 2 > len(verdicts) else "split"
    return Score(
        score=round(correct, 6),
        points=round(correct * problem.points, 6),
        verdict=majority,
        parts={"process": round(sum(processes) / len(processes), 6) if processes else None},
        details=tuple(
            {"judge": name, **{key: reply for key, reply in judged.items()}} for name, judged in replies.items()
        ),
        detail=f"{len(verdicts)} judges: " + ", ".join(verdicts),
    )


# ---------------------------------------------------------------- tables

ROWS = ["setting", "model", "judge"]  # every table's rows: settings never pool
PER_LANGUAGE = [*ROWS, "language"]


def tables(frame: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """Per setting (see `settings`), each the mean of its zh and en results as the paper reports:
    its Table 3 (answer accuracy per subject and overall, process score), the same per language,
    accuracy per difficulty band, its Table 4 (each variant against its baseline on the same
    problems), and, where LLM judges graded steps and verdicts, the analyses of its section 5.
    `cfg` is the benchmark's config with `suites`, the composed config of each suite of the plan."""
    suites = dict(cfg.get("suites") or {})
    frame = frame.assign(setting=settings(frame, suites))
    tables = {
        "accuracy": _accuracy(frame),
        "accuracy_by_language": _accuracy_by_language(frame),
        "accuracy_by_difficulty": _accuracy_by_difficulty(frame, cfg),
    }
    effects = extra_information(frame, suites)
    if effects is not None:
        tables["extra_information"] = effects
    steps = graded_steps(frame)
    if steps is not None:
        tables["failure_analyses"] = failure_analyses(frame, steps)
        tables["first_step_errors_by_subject"] = first_step_errors_by_subject(steps)
    types = error_types(frame)
    if types is not None:
        tables["error_types"] = types
    return tables


def settings(frame: pd.DataFrame, suites: dict) -> pd.Series:
    """Each judgment's setting: its suite's `setting` (the suite's own name where it sets none).
    One suite per setting and language: two would be pooled into one number."""
    setting_of = {suite: str((suites.get(suite) or {}).get("setting") or suite) for suite in frame["suite"].unique()}
    column = frame["suite"].map(setting_of)
    pairs = frame.assign(setting=column).groupby(["setting", "language"])["suite"].unique()
    for (setting, language), names in pairs.items():
        if len(names) > 1:
            raise InputError(
                f"suites {', '.join(sorted(names))} are all setting '{setting}' in language '{language}': "
                "a setting averages one suite per language; give the others their own `setting`"
            )
    return column


def _percent(values: pd.Series) -> float:
    return values.mean() * 100


def _accuracy_of(group: pd.DataFrame) -> float:
    return group["score"].fillna(0).mean() * 100  # a failed response counts, as wrong


def _per_subject(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per judgment and subject: a problem with several subjects counts under each."""
    return frame.assign(subject=frame["subject"].map(lambda subject: subjects_of(subject) or ["no subject"])).explode(
        "subject"
    )


def _mean_over_languages(table: pd.DataFrame) -> pd.DataFrame:
    """Per setting, the mean of its languages' values (the paper's zh and en mean), and which."""
    averaged = table.groupby(ROWS).mean().round(1)
    languages = table.reset_index().groupby(ROWS)["language"].agg(lambda names: "+".join(sorted(set(names))))
    averaged.insert(0, "languages", languages)
    return averaged.reset_index()


def _accuracy(frame: pd.DataFrame) -> pd.DataFrame:
    by_subject = _per_subject(frame).groupby([*PER_LANGUAGE, "subject"]).apply(_accuracy_of, include_groups=False)
    table = by_subject.unstack("subject")
    table["Ans."] = frame.groupby(PER_LANGUAGE).apply(_accuracy_of, include_groups=False)
    table["Proc."] = frame.groupby(PER_LANGUAGE)["process"].mean() * 100
    return _mean_over_languages(table)


def _accuracy_by_language(frame: pd.DataFrame) -> pd.DataFrame:
    table = (
        pd.DataFrame(
            {
                "Ans.": frame.groupby(PER_LANGUAGE).apply(_accuracy_of, include_groups=False),
                "Proc.": frame.groupby(PER_LANGUAGE)["process"].mean() * 100,
            }
        )
        .unstack("language")
        .round(1)
    )
    table.columns = [f"{measure} {language}" for measure, language in table.columns]
    return table.reset_index()


def _accuracy_by_difficulty(frame: pd.DataFrame, cfg) -> pd.DataFrame:
    bands = _bands(cfg)
    banded = frame.assign(band=frame["level"].map(lambda level: band_of(level, bands)))
    table = banded.groupby([*PER_LANGUAGE, "band"]).apply(_accuracy_of, include_groups=False).unstack("band")
    table = table[[band for band in [*bands, "unrated"] if band in table.columns]]
    return _mean_over_languages(table)


def _bands(cfg) -> dict:
    bands = (cfg or {}).get("difficulty_bands")
    if not bands:
        raise InputError(
            "the benchmark config needs `difficulty_bands` (name: [lowest, highest]): the paper gives "
            "1-2/3-5/6-7 (H.3) and 1-3/4-5/6-7 (Table 2), so the choice is the config's"
        )
    return {str(name): (low, high) for name, (low, high) in dict(bands).items()}


def band_of(level, bands: dict) -> str:
    for name, (low, high) in bands.items():
        if level is not None and pd.notna(level) and low <= level <= high:
            return name
    return "unrated"


def extra_information(frame: pd.DataFrame, suites: dict) -> pd.DataFrame | None:
    """The paper's Table 4: each variant setting against its baseline on the same problems, per
    model (columns) and judge, answer accuracy and process score as "value (change)". A variant
    suite names its baseline suite (`baseline`, same language); the problems compared are those
    both suites answered, and each setting's value is the mean over its languages."""
    variants = {
        suite: str(config["baseline"])
        for suite, config in suites.items()
        if config.get("baseline") and suite in set(frame["suite"])
    }
    if not variants:
        return None
    setting_of = dict(zip(frame["suite"], frame["setting"]))
    records = []
    for variant, baseline in variants.items():
        _check_baseline(variant, baseline, suites, frame)
        ours, theirs = frame[frame["suite"] == variant], frame[frame["suite"] == baseline]
        for (model, judge), answered in ours.groupby(["model", "judge"]):
            base = theirs[(theirs["model"] == model) & (theirs["judge"] == judge)]
            same = set(answered["id"]) & set(base["id"])
            answered, base = answered[answered["id"].isin(same)], base[base["id"].isin(same)]
            records.append(
                {
                    "setting": setting_of[variant],
                    "baseline": setting_of[baseline],
                    "model": model,
                    "judge": judge,
                    "problems": len(same),
                    "Answer": _accuracy_of(answered),
                    "Answer baseline": _accuracy_of(base),
                    "Process": answered["process"].mean() * 100,
                    "Process baseline": base["process"].mean() * 100,
                }
            )
    compared = pd.DataFrame(records)
    baselines = compared.groupby("setting")["baseline"].unique()
    for setting, names in baselines.items():
        if len(names) > 1:
            raise InputError(
                f"the suites of setting '{setting}' name baselines of different settings "
                f"({', '.join(sorted(names))}): Table 4 compares a setting with one baseline setting"
            )
    keys = ["setting", "baseline", "judge", "model"]
    means = compared.groupby(keys)[["Answer", "Answer baseline", "Process", "Process baseline"]].mean()
    problems = compared.groupby(keys)["problems"].sum()
    rows = []
    for (setting, baseline, judge), group in means.groupby(level=[0, 1, 2]):
        models = group.index.get_level_values("model")
        for metric in ("Answer", "Process"):
            cells = [_with_change(value, base) for value, base in zip(group[metric], group[f"{metric} baseline"])]
            rows.append(
                {"setting": setting, "baseline": baseline, "judge": judge, "metric": metric, **dict(zip(models, cells))}
            )
        counts = problems.loc[(setting, baseline, judge)]
        rows.append(
            {
                "setting": setting,
                "baseline": baseline,
                "judge": judge,
                "metric": "problems compared",
                **{model: str(int(counts.loc[model])) for model in models},
            }
        )
    return pd.DataFrame(rows)


def _check_baseline(variant: str, baseline: str, suites: dict, frame: pd.DataFrame) -> None:
    if baseline not in suites or baseline not in set(frame["suite"]):
        raise InputError(
            f"suite '{variant}' names baseline '{baseline}', which is not a suite of this benchmark in the "
            "plan: add it to the plan (Table 4 compares the two on the same problems)"
        )
    language, base_language = suites[variant].get("language"), suites[baseline].get("language")
    if language != base_language:
        raise InputError(
            f"suite '{variant}' ({language}) names baseline '{baseline}' ({base_language}): "
            "a variant is compared with the baseline in its own language"
        )


def _with_change(value: float, baseline: float) -> str | None:
    """ "26.7 (+2.7)", as the paper's Table 4 prints it; the change from the unrounded values."""
    if pd.isna(value) or pd.isna(baseline):
        return None
    change = round(value - baseline, 1) + 0.0  # no "-0.0"
    return f"{value:.1f} ({change:+.1f})"


def graded_steps(frame: pd.DataFrame) -> pd.DataFrame | None:
    """One row per response and judge that graded its steps (the ensemble's judges each grade; a
    response's analyses are the mean over its judges, as its process score is)."""
    records = []
    for row in frame.itertuples():
        for judged in row.details or ():
            steps = [step["grade"] for step in (judged.get("process") or {}).get("steps", [])]
            if not steps:
                continue
            failed = [index for index, grade in enumerate(steps, start=1) if grade < 1.0]
            records.append(
                {
                    "setting": row.setting,
                    "model": row.model,
                    "judge": row.judge,
                    "language": row.language,
                    "subject": row.subject,
                    "first error": failed[0] if failed else None,
                    "complete": not failed,
                    "fails at step 1": failed[:1] == [1],
                    "failed steps": len(failed),
                    "soft": sum(steps[i - 1] == 0.5 for i in failed),
                    "last only": failed == [len(steps)],
                }
            )
    return pd.DataFrame(records) if records else None


def failure_analyses(frame: pd.DataFrame, steps: pd.DataFrame) -> pd.DataFrame:
    """Section 5 of the paper, per setting (the mean of its languages): where the first error falls
    (1-based, mean over responses with one), the share of responses that fail at step 1, that
    complete without an error, the share of failed steps graded 0.5 (soft failures, also per
    language: the paper finds them higher in Chinese), responses whose only failed step is the
    last, and how often all judges agree on the verdict."""
    graded = steps.groupby(PER_LANGUAGE)
    soft = graded["soft"].sum() / graded["failed steps"].sum().replace(0, float("nan")) * 100
    table = pd.DataFrame(
        {
            "first error (mean step)": graded["first error"].mean(),
            "fails at step 1 (%)": graded["fails at step 1"].apply(_percent),
            "complete (%)": graded["complete"].apply(_percent),
            "soft failures (%)": soft,
            "last-step-only (%)": graded["last only"].apply(_percent),
        }
    )
    verdicts = frame.assign(
        agree=frame["details"].map(
            lambda details: len({d["answer"]["verdict"] for d in details if "answer" in d}) == 1 if details else None
        )
    )
    table["judges agree (%)"] = verdicts.groupby(PER_LANGUAGE)["agree"].apply(
        lambda agree: agree.dropna().astype(float).mean() * 100 if agree.notna().any() else float("nan")
    )
    averaged = _mean_over_languages(table)
    by_language = soft.unstack("language").round(1)
    by_language.columns = [f"soft failures {language} (%)" for language in by_language.columns]
    return averaged.merge(by_language.reset_index(), on=ROWS, how="left")


def first_step_errors_by_subject(steps: pd.DataFrame) -> pd.DataFrame:
    """Per subject, the share of graded responses whose first step is already wrong (the paper's
    first-step error rate, section 5.3: highest in Optics, lowest in Thermodynamics)."""
    per_subject = _per_subject(steps)
    table = per_subject.groupby([*PER_LANGUAGE, "subject"])["fails at step 1"].apply(_percent).unstack("subject")
    return _mean_over_languages(table)


def error_types(frame: pd.DataFrame) -> pd.DataFrame | None:
    """The error types of wrong answers (the paper's Figure 5 and Table 7), per setting, model and
    judge. Only responses the answer judges did not find correct (the ensemble's verdict: a
    majority of "correct" is correct) are classified; each counts once, its judges' error types
    sharing its weight, "unclassified" where none named one. Both languages of a setting pooled:
    shares of its failed responses."""
    records = []
    for row in frame.itertuples():
        said = [judged["error_type"]["error_type"] for judged in row.details or () if judged.get("error_type")]
        if row.status != "scored" or row.verdict == "correct" or not said:  # right, or not classified at all
            continue
        named = [error for error in said if error != "none"] or ["unclassified"]
        records += [
            {
                "setting": row.setting,
                "model": row.model,
                "judge": row.judge,
                "response": (row.suite, row.id, row.sample),
                "error type": error,
                "weight": 1 / len(named),
            }
            for error in named
        ]
    if not records:
        return None
    weights = pd.DataFrame(records)
    wrong = weights.groupby(ROWS)["response"].nunique().rename("wrong answers")
    shares = weights.groupby([*ROWS, "error type"])["weight"].sum().unstack("error type").fillna(0.0)
    order = [error for error in (*ERROR_TYPES, "unclassified") if error in shares.columns]
    shares = (shares[order].div(wrong, axis=0) * 100).round(1).add_prefix("error: ").add_suffix(" (%)")
    return pd.concat([wrong, shares], axis=1).reset_index()


# ---------------------------------------------------------------- the report


def report_sections(problem: Problem, judgment) -> list[ReportSection]:
    """Each judge's answer verdict with its reason and, where asked, the error type; the ensemble's
    majority; and the process steps each judge graded (1, 0.5 or 0). A rules-only judgment shows
    the rules' verdict."""
    entries = [entry for entry in judgment.details if isinstance(entry, dict)]
    verdicts = tuple(
        (
            str(entry.get("judge", "")),
            _field(entry, "answer", "verdict"),
            _field(entry, "answer", "reasoning"),
            _field(entry, "error_type", "error_type"),
            _field(entry, "error_type", "reasoning"),
        )
        for entry in entries
    )
    if not verdicts:
        verdicts = (
            (judgment.judge, judgment.verdict or "", "rules: " + (judgment.detail or "the answer compared"), "", ""),
        )
    process = (judgment.parts or {}).get("process")
    facts = (
        ("verdict", judgment.verdict or "–"),
        ("process score", "not graded" if process is None else f"{process:g} (mean over the judges)"),
    )
    sections = [
        ReportSection(
            "verdicts",
            "Verdicts per judge",
            facts,
            (
                ReportTable(
                    "verdicts",
                    ("judge", "verdict", "reason", "error type", "error reason"),
                    verdicts,
                    math=("reason", "error reason"),
                ),
            ),
        )
    ]
    steps = tuple(
        (str(entry.get("judge", "")), number + 1, step.get("step", ""), step.get("grade"))
        for entry in entries
        for number, step in enumerate(_steps(entry))
    )
    if steps:
        sections.append(
            ReportSection(
                "process",
                "Process steps, as each judge graded them",
                (),
                (ReportTable("steps", ("judge", "step", "text", "grade"), steps, math=("text",)),),
            )
        )
    return sections


def _field(entry: dict, task: str, key: str) -> str:
    reply = entry.get(task)
    return str(reply.get(key, "")) if isinstance(reply, dict) else ("" if reply is None else str(reply))


def _steps(entry: dict) -> list[dict]:
    reply = entry.get("process")
    steps = reply.get("steps") if isinstance(reply, dict) else None
    return [step for step in steps or [] if isinstance(step, dict)]
