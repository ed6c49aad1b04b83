"""Reading PhysElite's release (JSONL or Parquet, long or wide): bilingual problems, their answers,
subjects and figures."""

from __future__ import annotations

import math
from pathlib import Path

from omegaconf import OmegaConf

from olympiad_eval import lazy_import
from olympiad_eval.benchmarks.release import (
    Fields,
    FigureStore,
    as_text,
    release_path,
)
from olympiad_eval.core.records import AnswerSlot, Figure, InputError, Problem, RecordError, iter_json_lines

REQUIRED = ("id", "text", "answer")  # and, in the long layout, "language"

np, pd = lazy_import("numpy"), lazy_import("pandas")  # for Parquet releases only


LAYOUTS = ("long", "wide")


LANGUAGE_SUFFIX = "{language}"  # in a wide layout's column name: the language's suffix (`languages`)


# A problem's subjects, as one text (the records keep one subject field); tables split them again.
SUBJECT_SEPARATOR = "; "


def load(root: Path, cfg, benchmark: str, store: FigureStore) -> list[Problem]:
    """The split's problems, in the release's row order.

    Two layouts: the Hub's Parquet (`data/<split>-00000-of-0000N.parquet` shards, read in name
    order, or `data/<split>.parquet`), whose image columns hold `{"bytes", "path"}` structs; and
    `data/<split>.jsonl` with images as paths relative to the release. Parquet wins when both
    are there. A record is named `<file>:<line>` (JSONL, 1-based) or `<file>:row <n>` (Parquet,
    0-based within the shard, as the Hub's dataset viewer and pandas count).
    """
    split = str(cfg.get("split", "test"))
    data = root / "data"
    problems_of = _row_reader(cfg, root, benchmark, store)
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


def _row_reader(cfg, root: Path, benchmark: str, store: FigureStore):
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
        return lambda row, where: [_problem(row, where, root, columns, benchmark, store, known=known)]
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
        _problem(row, where, root, language_columns, benchmark, store, language=code)
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


def _problem(
    row: dict,
    where: str,
    root: Path,
    columns: dict,
    benchmark: str,
    store: FigureStore,
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
            fields.raw(name), root, where, fields.record, fields.column(name), role, store, len(figures)
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
    items, root: Path, where: str, record: str, field_name: str, role: str, store: FigureStore, before: int
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
        if isinstance(item, dict) and item.get("bytes") is not None:
            data = item["bytes"]
            name = str(item.get("path") or f"{record}_{number}")
            if not isinstance(data, (bytes, bytearray)):
                raise RecordError(where, record, field_name, f"figure '{name}': bytes of type {type(data).__name__}")
            figures.append(
                store.data(bytes(data), release_file=where, record=record, field_name=field_name, name=name, role=role)
            )
            continue
        if isinstance(item, str):
            name = item
        elif isinstance(item, dict) and item.get("path"):
            name = item["path"]
        else:
            raise RecordError(
                where, record, field_name, f"figure {number} has neither a path nor image bytes: {item!r:.80}"
            )
        path = release_path(name, root=root, where=where, record=record, field_name=field_name)
        figures.append(store.file(path, release_file=where, record=record, field_name=field_name, name=name, role=role))
    return figures
