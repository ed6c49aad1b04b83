"""PhysElite: bilingual (zh/en) olympiad physics, every problem answered in both languages.

The Hub release has one row per problem x language; its column names are not settled, so the
mapping from our fields to the release's columns lives in the benchmark config (`fields`).
The official answer score comes from LLM judges; the rule judge compares the "FINAL ANSWER:"
line with the reference answer within the numeric tolerance (5% by default).
"""

from __future__ import annotations

import atexit
import hashlib
import io
import math
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from olympiad_eval import answers
from olympiad_eval.benchmarks import JudgeTask, Score, delimited, failed_tasks, json_reply
from olympiad_eval.fetch import SUFFIX_BY_MIME, MIME_BY_FORMAT, UNREADABLE_IMAGE, Fields, load_figure, release_path
from olympiad_eval.render import fill
from olympiad_eval.records import InputError, AnswerSlot, Figure, Problem, RecordError, iter_json_lines

REQUIRED = ("id", "language", "text", "answer")

# See `benchmarks/__init__.py`: bump a version with any change that can alter a verdict or a score.
PROTOCOL_KEY = None  # one protocol: the paper's
PROTOCOL_VERSIONS = {"official": 2}


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
    columns = dict(cfg.fields)
    images = _EmbeddedImages()
    shards = _parquet_shards(data, split)
    if shards:
        return [
            _problem(row, f"{shard}:row {index}", root, columns, benchmark, images)
            for shard in shards
            for index, row in enumerate(_parquet_rows(shard))
        ]
    path = data / f"{split}.jsonl"
    if not path.is_file():
        raise InputError(
            f"benchmark '{benchmark}': {path} not found (nor {data}/{split}.parquet or {data}/{split}-*.parquet)"
        )
    return [_problem(row, f"{path}:{line}", root, columns, benchmark, images) for line, row in iter_json_lines(path)]


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


def _problem(row: dict, where: str, root: Path, columns: dict, benchmark: str, images: _EmbeddedImages) -> Problem:
    fields = Fields(row, where, columns)
    fields.require(*REQUIRED)
    figures: list[Figure] = []
    for name, role in (("images", "schematic"), ("process_images", "process")):
        figures += _figures(fields.raw(name), root, where, fields.record, fields.column(name), role, images,
                            len(figures))
    return Problem(
        id=fields.record,
        origin=Path(where).relative_to(root).as_posix(),
        benchmark=benchmark,
        language=fields.text("language"),
        group=fields.record,
        subset=fields.text("subject", required=False),
        subject=fields.text("subject", required=False),
        level=fields.level("difficulty"),
        question=fields.text("text"),
        solution=fields.text("solution", required=False),
        answers=(AnswerSlot(value=fields.text("answer"), kind="Open"),),
        figures=tuple(figures),
    )


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
        raise RecordError(where, record, field_name, f"expected a figure or a list of figures, got {type(items).__name__} {items!r:.80}")
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
            raise RecordError(where, record, field_name, f"figure {number} has neither a path nor image bytes: {item!r:.80}")
        figures.append(load_figure(path, release_file=where, record=record, field_name=field_name, name=name, role=role))
    return figures


def template_fields(problem: Problem, suite) -> tuple[str, dict]:
    hint = f"\n\nHint (reference solution):\n{problem.solution}" if suite.get("hint") else ""
    return "default", {"problem": problem.question + hint}


def figures(problem: Problem, suite) -> list[Figure]:
    wanted = {"none": (), "schematic": ("schematic",), "schematic+process": ("schematic", "process")}
    roles = wanted[suite.get("figures", "schematic")]
    return [figure for figure in problem.figures if figure.role in roles]


def reference(problem: Problem, suite) -> str:
    return f"Reference derivation.\nFINAL ANSWER: {problem.answers[0].value}"


def judge_reference(problem: Problem) -> str:
    return problem.answers[0].value


def score(problem: Problem, response: str, check, rel_tol: float, cfg=None) -> Score:
    gold = problem.answers[0].value
    given = answers.final_answer_line(response) or ""
    verdicts = check([(gold, given, rel_tol, None)]) if given else []
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
ERROR_TYPES = ("physical_perception", "physical_law", "algebraic_symbolic", "incomplete_derivation",
               "geometric_visual", "numerical")


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


def judge_tasks(problem: Problem, response: str, rules, cfg) -> list[JudgeTask]:
    """The answer verdict (the paper's judge prompt) and, unless turned off, the process grading."""
    fenced, guard = delimited(response)
    fields = {"question": problem.question, "reference": judge_reference(problem), "solution": problem.solution,
              "response": fenced}
    ask = lambda prompt: ({"role": "system", "content": guard},  # noqa: E731
                          {"role": "user", "content": fill(str(prompt.text), fields)})
    tasks = [JudgeTask("answer", ask(cfg.prompts.physelite_answer), parse_verdict)]
    if cfg.get("process", True):
        tasks.append(JudgeTask("process", ask(cfg.prompts.physelite_process), parse_steps))
    if cfg.get("error_types", False):
        tasks.append(JudgeTask("error_type", ask(cfg.prompts.physelite_error_type), parse_error_type))
    return tasks


def combine(problem: Problem, rules, replies: dict, cfg) -> Score | str:
    """Each judge scores on its own; the scores are the mean over judges (the paper's ensemble).
    Answer accuracy is strict: only "correct" counts."""
    failure = failed_tasks(replies)
    if failure:
        return failure
    verdicts = [judged["answer"]["verdict"] for judged in replies.values()]
    correct = sum(verdict == "correct" for verdict in verdicts) / len(verdicts)
    processes = [sum(s["grade"] for s in judged["process"]["steps"]) / len(judged["process"]["steps"])
                 for judged in replies.values() if "process" in judged]
    top = max(VERDICTS, key=verdicts.count)
    majority = top if verdicts.count(top) * 2 > len(verdicts) else "split"
    return Score(
        score=round(correct, 6),
        points=round(correct * problem.points, 6),
        verdict=majority,
        process=round(sum(processes) / len(processes), 6) if processes else None,
        details=tuple({"judge": name, **{key: reply for key, reply in judged.items()}} for name, judged in replies.items()),
        detail=f"{len(verdicts)} judges: " + ", ".join(verdicts),
    )


def tables(frame: pd.DataFrame, cfg) -> dict[str, pd.DataFrame]:
    """The paper's Table 3 (answer accuracy per subject and overall, process score; the mean of
    the zh and en results), the same per language, accuracy per difficulty band, and, where LLM
    judges graded steps and verdicts, the failure analyses of its section 5."""
    rows = ["model", "judge"]
    accuracy = lambda group: group["score"].fillna(0).mean() * 100  # noqa: E731
    process = lambda group: group["process"].mean() * 100  # noqa: E731
    per_language = [*rows, "language"]
    by_subject = frame.groupby([*per_language, "subject"]).apply(accuracy, include_groups=False).unstack("subject")
    by_subject["Ans."] = frame.groupby(per_language).apply(accuracy, include_groups=False)
    by_subject["Proc."] = frame.groupby(per_language).apply(process, include_groups=False)
    averaged = by_subject.groupby(rows).mean().round(1)
    languages = by_subject[["Ans.", "Proc."]].unstack("language").round(1)
    languages.columns = [f"{measure} {language}" for measure, language in languages.columns]
    bands = frame.assign(band=frame["level"].map(lambda level: band_of(level, cfg)))
    by_band = bands.groupby([*per_language, "band"]).apply(accuracy, include_groups=False).unstack("band")
    order = [*dict((cfg or {}).get("difficulty_bands") or DEFAULT_BANDS), "unrated"]
    by_band = by_band[[band for band in order if band in by_band.columns]]
    tables = {
        "accuracy": averaged.reset_index(),
        "accuracy_by_language": languages.reset_index(),
        "accuracy_by_difficulty": by_band.groupby(rows).mean().round(1).reset_index(),
    }
    analyses = failure_analyses(frame)
    if analyses is not None:
        tables["failure_analyses"] = analyses
    return tables


DEFAULT_BANDS = {"Easy": [1, 2], "Medium": [3, 5], "Hard": [6, 7]}  # appendix H.3 (Table 2 uses 1-3 / 4-5 / 6-7)


def band_of(level, cfg) -> str:
    bands = dict((cfg or {}).get("difficulty_bands") or DEFAULT_BANDS)
    for name, (low, high) in bands.items():
        if level is not None and pd.notna(level) and low <= level <= high:
            return name
    return "unrated"


def failure_analyses(frame: pd.DataFrame) -> pd.DataFrame | None:
    """Section 5 of the paper, from each judge's graded steps: where the first error falls (1-based,
    mean over responses with one), how many responses complete without one, the share of failed
    steps graded 0.5 (soft failures), responses whose only failed step is the last, the error
    types of classified failures, and how often all judges agree on the verdict."""
    records = []
    for row in frame.itertuples():
        for judged in row.details or ():
            steps = [step["grade"] for step in (judged.get("process") or {}).get("steps", [])]
            failed = [index for index, grade in enumerate(steps, start=1) if grade < 1.0]
            records.append({
                "model": row.model, "judge": row.judge, "graded": bool(steps),
                "first error": failed[0] if failed else None, "complete": bool(steps) and not failed,
                "failed steps": len(failed), "soft": sum(steps[i - 1] == 0.5 for i in failed),
                "last only": failed == [len(steps)] if steps else False,
                "error type": (judged.get("error_type") or {}).get("error_type"),
            })
    if not records:
        return None
    steps = pd.DataFrame(records)
    graded = steps[steps["graded"]].groupby(["model", "judge"])
    table = pd.DataFrame({
        "first error (mean step)": graded["first error"].mean(),
        "complete (%)": graded["complete"].mean() * 100,
        "soft failures (%)": graded["soft"].sum() / graded["failed steps"].sum().replace(0, float("nan")) * 100,
        "last-step-only (%)": graded["last only"].mean() * 100,
    })
    types = steps[steps["error type"].notna() & (steps["error type"] != "none")]
    if not types.empty:
        shares = types.groupby(["model", "judge"])["error type"].value_counts(normalize=True).unstack() * 100
        table = table.join(shares.add_prefix("error: "), how="outer")
    verdicts = frame.assign(agree=frame["details"].map(
        lambda details: len({d["answer"]["verdict"] for d in details if "answer" in d}) == 1 if details else None))
    table["judges agree (%)"] = verdicts.groupby(["model", "judge"])["agree"].apply(
        lambda agree: agree.dropna().mean() * 100 if agree.notna().any() else float("nan"))
    return table.round(1).reset_index()
