"""Reading OlympiadBench's release, in its first layout or its current one, with the figures each problem names."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from olympiad_eval.benchmarks.olympiadbench import official
from olympiad_eval.benchmarks.release import Fields, FigureStore, as_text, release_path
from olympiad_eval.core.records import AnswerSlot, Figure, InputError, Problem, RecordError

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


def auto_scored(problem: Problem) -> bool:
    return bool(problem.attributes["support_auto_scoring"])


def load(root: Path, cfg, benchmark: str, store: FigureStore) -> list[Problem]:
    layout = str(cfg.get("layout", "first_release"))
    if layout not in LAYOUTS:
        raise InputError(f"benchmark '{benchmark}': layout '{layout}' is not one of {', '.join(LAYOUTS)}")
    files = sorted((root / "data").glob("*.json"))
    if not files:
        raise InputError(f"benchmark '{benchmark}': no data/*.json in {root}")
    problems = [problem for path in files for problem in _load_file(path, root, layout, benchmark, store)]
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


def _load_file(path: Path, root: Path, layout: str, benchmark: str, store: FigureStore) -> list[Problem]:
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
    return [_problem(item, path, root, meta, benchmark, store) for item in records]


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


def _problem(item: dict, path: Path, root: Path, meta: dict, benchmark: str, store: FigureStore) -> Problem:
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
        official.precision(error, finals, answer_type)  # read when judged: refused now
    except ValueError as problem:
        raise RecordError(path, fields.record, "error", str(problem)) from None
    figures, absent = _figures(context + "\n" + question, root, path, fields.record, store)
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


def _figures(
    text: str, root: Path, path: Path, record: str, store: FigureStore
) -> tuple[tuple[Figure, ...], list[str]]:
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
            held.append(store.file(found[1], release_file=path, record=record, field_name="question", name=found[0]))
    absent += [link or "(an image link without a target)" for link in MARKDOWN_IMAGE.findall(text)]
    return tuple(held), absent
