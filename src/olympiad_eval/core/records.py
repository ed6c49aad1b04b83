"""The records that flow between stages, and their one deterministic JSONL form.

Every stage reads and writes these through `read_jsonl` / `write_jsonl`: keys sorted, records
sorted by their natural key, UTF-8, no timestamps or latencies. The same inputs therefore give the
same bytes, and DVC stops the chain when a rerun changes nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import glob
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar


class InputError(Exception):
    """Bad input or configuration that the user can fix; the message says what and where."""


class RecordError(InputError):
    """A record that cannot be read: the message names the file, the record and the field."""

    def __init__(self, path: str | os.PathLike, record: str, field_name: str, problem: str):
        self.path, self.record, self.field = str(path), record, field_name
        super().__init__(f"{path}: record {record}: field '{field_name}': {problem}")


# Field metadata: a field added after files were written, left out of a record's JSON while it holds
# its default, so that the files of every record without it keep their bytes (and their DVC hashes).
OMITTED_WHEN_DEFAULT = {"omitted_when_default": True}


@dataclass(frozen=True)
class Figure:
    """An image stored once by content hash; `path` is where the fetch stage put it."""

    sha256: str
    path: str
    mime: str
    name: str = ""  # the release's own name for it, e.g. "image_question/IPhO_2025_1_b_1.png"
    role: str = ""  # "schematic" or "process" where a release tells them apart


@dataclass(frozen=True)
class AnswerSlot:
    """One gradable final answer of a problem."""

    value: str
    kind: str = ""  # "Numerical Value", "Expression", "Multiple Choice", ...
    unit: str | None = None
    points: float = 1.0


@dataclass(frozen=True)
class Criterion:
    """One line of an official marking scheme and the points it can award."""

    text: str
    points: float


@dataclass(frozen=True)
class Problem:
    """One problem in one language, normalised from a release."""

    id: str
    benchmark: str
    language: str
    question: str
    subset: str = ""  # the grouping tables report by: exam, subject
    context: str = ""
    information: str = ""  # an exam-wide constants sheet
    figures: tuple[Figure, ...] = ()
    answers: tuple[AnswerSlot, ...] = ()
    marking: tuple[tuple[Criterion, ...], ...] = ()  # alternative schemes; graders take the best
    choices: tuple[str, ...] = ()  # option texts of a multiple-choice problem, for A, B, C, ...
    solution: str = ""
    subject: str = ""
    level: int | None = None  # MATH-Vision level or PhysElite difficulty
    group: str = ""  # the same problem in other languages shares it
    origin: str = ""  # where in the release it was read: "data/IPhO_2025.json", "data/test.jsonl:17"
    # A benchmark's own metadata that no field above holds (OlympiadBench's source, modality, answer
    # types, tolerance, ...), read back by its own module only; written only when there is some.
    attributes: dict = field(default_factory=dict, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def exact_points(self) -> Fraction:
        return sum((exact(slot.points) for slot in self.answers), Fraction(0))

    @property
    def points(self) -> float:
        return float(self.exact_points)

    @property
    def key(self) -> tuple:
        return (natural_key(self.id), self.language)


@dataclass(frozen=True)
class Prompt:
    """What is sent for one problem of a suite.

    `messages` are OpenAI-style chat messages whose image parts name a figure by hash and path
    (`{"type": "image", "sha256", "path", "mime"}`); the generate stage inlines the bytes.
    `reference` is the gold answer written the way the prompt asks for it: the `reference`
    model answers with it, as an upper-bound check of the whole pipeline.
    """

    id: str
    suite: str
    language: str
    messages: tuple[dict, ...]
    prompt_hash: str
    reference: str = ""

    @property
    def key(self) -> tuple:
        return (natural_key(self.id),)


@dataclass(frozen=True)
class Selection:
    """What a suite's selection options (`limit`, `ids`, HiPhO's `exams`, ...) took of its
    benchmark: the options as the suite gives them, and how many problems (by id) they kept of
    the suite's language's. The render stage writes it into `suite.json` (a suite without such
    options has none); the tables and the report mark a partial suite with `describe()`."""

    options: dict
    selected: int
    of: int

    @property
    def partial(self) -> bool:
        return self.selected < self.of

    def describe(self) -> str:
        """`5 of 403 problems (limit 5)`: options in name order, long id lists counted."""
        said = [f"{key} {_option_text(value)}" for key, value in sorted(self.options.items())]
        return f"{self.selected} of {self.of} problems ({'; '.join(said)})"


@dataclass(frozen=True)
class SuiteInfo:
    """What the render stage records of a suite beside its prompts (`suite.json`): its benchmark and
    kind, its language (None: every problem in its own), the name of each of its templates, the
    protocol settings its judges score by (the suite's `scoring`), and what its selection options
    took of the benchmark (None for a whole suite)."""

    suite: str
    benchmark: str
    kind: str
    language: str | None
    templates: dict
    scoring: dict
    selection: Selection | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


def write_suite_info(path: str | os.PathLike, info: SuiteInfo) -> None:
    write_json(path, to_dict(info))


def read_suite_info(path: str | os.PathLike) -> SuiteInfo:
    """A rendered suite's `suite.json`; a file that is not one names itself and what is wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise RecordError(path, "suite", "(json)", f"not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise RecordError(path, "suite", "(json)", "not a JSON object")
    return from_dict(SuiteInfo, data, path=path)


def _option_text(value) -> str:
    if not isinstance(value, (list, tuple)):
        return str(value)
    shown = ", ".join(map(str, value[:3]))
    return shown if len(value) <= 3 else f"{shown} and {len(value) - 3} more"


@dataclass(frozen=True)
class Generation:
    """One sampled response. A failed request is recorded in `error`, never as a response.

    `refusal` is set when the model answered by declining: its refusal message, or "content filter"
    where the endpoint's filter stopped the reply (`finish_reason` then says `content_filter`).
    Such a response scores nothing and is counted apart (`refusals` in the tables); whatever text
    came with it stays in `response`, unjudged."""

    id: str
    suite: str
    model: str
    sample: int
    response: str | None
    request_hash: str
    finish_reason: str | None = None
    reasoning: str | None = None
    error: str | None = None
    refusal: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    # The model the endpoint says served the reply, where it is another than the one asked (a
    # router's fallback): the response is still scored, and counted in the tables apart.
    served_model: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def key(self) -> tuple:
        return (natural_key(self.id), self.sample)


@dataclass(frozen=True)
class Judgment:
    """The grade of one generation.

    `status` is "scored", "generation_error" or "judge_error": errors are counted in the tables,
    never silently a zero. `score` is the fraction of the problem's points earned. A refusal (see
    `Generation.refusal`) is scored 0 without being judged, and marked `refused`.
    """

    id: str
    suite: str
    model: str
    judge: str
    sample: int
    language: str
    subset: str
    status: str
    score: float | None
    points: float | None
    max_points: float
    truncated: bool = False
    refused: bool = field(default=False, metadata=OMITTED_WHEN_DEFAULT)
    extracted: tuple[str, ...] = ()
    slots: tuple[dict, ...] = ()
    verdict: str | None = None
    detail: str = ""
    subject: str = ""
    level: int | None = None
    # The benchmark protocol's own parts of the score, by the names its benchmark declares (`score_parts`:
    # HiPhO's answer and step level in points, PhysElite's process score); written only when there
    # are some.
    parts: dict = field(default_factory=dict, metadata=OMITTED_WHEN_DEFAULT)
    details: tuple[dict, ...] = ()  # what each judge said, per task
    # The rule checks that could not finish (hostile LaTeX past the check timeout), and why: each
    # counted as not matched, unless the protocol's LLM judge decided it. Written only when there
    # are some, so that every other judgment keeps its bytes.
    undecided: tuple[str, ...] = dataclasses.field(default=(), metadata=OMITTED_WHEN_DEFAULT)
    # What made this judgment (see `benchmarks.Provenance`): a changed verdict never mixes unseen
    # with old results, because the tables and metrics carry these and refuse a cell that mixes them.
    protocol: str = ""
    judge_config: str = ""
    packages: str = ""

    @property
    def key(self) -> tuple:
        return (natural_key(self.id), self.sample)


@dataclass(frozen=True)
class Conversation:
    """What a judge cell asked its LLM judges about one generation, and every raw reply.

    `tasks` in the order the protocol asked them, each `{"task": key, "messages": [...], "replies":
    {judge: [reply, ...]}}`: the messages sent (images named by their sha256, as in the request
    key), the same to every judge of the ensemble and on every re-ask; per judge each ask's reply,
    the re-asks after it (`text`, `reasoning`, `finish_reason`, `refusal`, `error`, `usage`,
    `attempts`, `received`: what the request cache keeps of a reply, so that a rerun over the cache
    writes the same bytes). Kept apart from the judgments (whose `details` hold the parsed replies):
    it is the bulk of what was sent, which only the report reads."""

    id: str
    suite: str
    model: str
    judge: str
    sample: int
    tasks: tuple[dict, ...] = ()

    @property
    def key(self) -> tuple:
        return (natural_key(self.id), self.sample)


@dataclass(frozen=True)
class SampleReply:
    """What a sample's request cost and when its reply came, as the request cache keeps the reply
    (so that a rerun over the cache writes the same bytes): its `usage` (token counts), HTTP
    `attempts` (retries included), the UTC date it was `received`, how long it took (`latency`) and
    the model the endpoint said served it (`served_model`). Written by the generate stage beside the
    generations (which hold only what the scores read) for a provider that sends requests; only the
    report reads it."""

    id: str
    suite: str
    model: str
    sample: int
    usage: dict = field(default_factory=dict)
    attempts: int = 1
    received: str | None = None
    served_model: str | None = None
    latency: float | None = None  # seconds from the request going out to its reply, retries included

    @property
    def key(self) -> tuple:
        return (natural_key(self.id), self.sample)


R = TypeVar("R")


def exact(value: float | int | Fraction) -> Fraction:
    """A point value as the decimal it is written as (0.1 is 1/10, not the double nearest it), so that
    sums and ratios of points are exact: 1 of 3 one-point slots is 1 point, not 0.999999. A stored
    float reads back as its shortest repr, which is the decimal that was written."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        return Fraction(str(value))  # str, not repr: numpy 2 writes repr(np.float64(0.1)) as "np.float64(0.1)"
    return Fraction(value)


_NESTED = {
    Problem: {"figures": Figure, "answers": AnswerSlot},
}
_ONE_NESTED = {(SuiteInfo, "selection"): Selection}  # a field holding one record, or None


def natural_key(text: str) -> tuple:
    """Sort "2" before "10" and "P1_b" before "P1_c"; the text itself breaks ties ("1" vs "01")."""
    parts = tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)
    return (*parts, (2, 0, text))


def to_dict(record: Any) -> dict:
    """Every field, but those marked OMITTED_WHEN_DEFAULT only when not at their default (reading
    fills the default in): a field added later leaves the bytes of existing records unchanged."""
    data = dataclasses.asdict(record)
    for name, default in _omitted_when_default(type(record)):
        if data[name] == default:
            del data[name]
    return data


@functools.cache
def _omitted_when_default(cls: type) -> tuple[tuple[str, Any], ...]:
    return tuple(
        (f.name, f.default if f.default is not dataclasses.MISSING else f.default_factory())
        for f in dataclasses.fields(cls)
        if f.metadata.get("omitted_when_default")
    )


def from_dict(cls: type[R], data: dict, *, path: str | os.PathLike = "<memory>") -> R:
    """Build a record, naming the file, record and field of anything missing or unknown."""
    record_id = str(data.get("id", data.get("suite", "?")))  # a suite's record is named by its suite
    names = {f.name for f in dataclasses.fields(cls)}
    for unknown in sorted(set(data) - names):
        raise RecordError(path, record_id, unknown, f"not a field of {cls.__name__}")
    values = dict(data)
    for f in dataclasses.fields(cls):
        if f.name not in values:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise RecordError(path, record_id, f.name, f"missing in {cls.__name__}")
            continue
        values[f.name] = _convert(cls, f.name, values[f.name], path, record_id)
    return cls(**values)


def _convert(cls: type, name: str, value: Any, path, record_id: str) -> Any:
    try:
        if cls is Problem and name == "marking":
            return tuple(tuple(Criterion(**c) for c in scheme) for scheme in value)
        nested = _NESTED.get(cls, {}).get(name)
        if nested is not None:
            return tuple(nested(**item) for item in value)
        one = _ONE_NESTED.get((cls, name))
        if one is not None:
            return None if value is None else one(**value)
    except TypeError as error:
        raise RecordError(path, record_id, name, str(error)) from None
    if isinstance(value, list):
        return tuple(value)
    return value


def dumps(record: Any) -> str:
    """The one JSON form of a record or plain dict: sorted keys, UTF-8, no spaces to vary."""
    data = to_dict(record) if dataclasses.is_dataclass(record) else record
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def content_hash(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_jsonl(path: str | os.PathLike, records: Iterable[Any]) -> None:
    """Write records sorted by their key, atomically: readers never see half a file."""
    ordered = sorted(records, key=lambda r: r.key)
    duplicates = sorted({_describe(a) for a, b in zip(ordered, ordered[1:]) if a.key == b.key})
    if duplicates:
        raise InputError(f"{path}: duplicate records {', '.join(duplicates[:5])}")
    with atomic_file(path) as handle:
        for record in ordered:
            handle.write(dumps(record) + "\n")


def _describe(record: Any) -> str:
    extra = [f"{name} {getattr(record, name)}" for name in ("language", "sample") if hasattr(record, name)]
    return f"id {record.id}" + "".join(f" ({e})" for e in extra)


def without_paths(messages: Iterable[dict]) -> list[dict]:
    """Messages with each image named by its content only: where a figure is stored is no part
    of what is asked, so it must not change a prompt's hash or a request's cache key."""
    return [
        {
            **message,
            "content": [
                {k: v for k, v in part.items() if k != "path"} if isinstance(part, dict) else part
                for part in message["content"]
            ],
        }
        if isinstance(message.get("content"), (list, tuple))
        else dict(message)
        for message in messages
    ]


def read_jsonl(path: str | os.PathLike, cls: type[R]) -> list[R]:
    return list(iter_jsonl(path, cls))


def iter_jsonl(path: str | os.PathLike, cls: type[R]) -> Iterator[R]:
    for line_number, data in iter_json_lines(path):
        yield from_dict(cls, data, path=f"{path}:{line_number}")


def iter_json_lines(path: str | os.PathLike) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) of a JSONL file; a bad line stops with file and line."""
    with open(path, "rb") as handle:  # decoded line by line, so that bad bytes are named by their line
        for line_number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise RecordError(
                    path,
                    f"at line {line_number}",
                    "(encoding)",
                    f"not UTF-8: byte {raw[error.start]:#04x} at column {error.start + 1}",
                ) from None
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as error:
                raise RecordError(path, f"at line {line_number}", "(json)", error.msg) from None
            if not isinstance(data, dict):
                raise RecordError(path, f"at line {line_number}", "(json)", "not a JSON object")
            if _MAYBE_SURROGATE.search(line):
                check_no_surrogates(data, path, f"at line {line_number}")
            yield line_number, data


# A `\ud800`-style escape: JSON allows a lone surrogate, which is no character, and UTF-8 cannot
# write it; it would stop a later write with a traceback. A pair (an emoji written as two escapes)
# is decoded into one character and is fine: the check walks the decoded object.
_MAYBE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_no_surrogates(data: Any, path: str | os.PathLike, record: str) -> None:
    """Refuse a decoded JSON value holding a lone surrogate, naming its field (`answer[2]`)."""
    found = _surrogate_at(data, "")
    if found is not None:
        field_name, text = found
        character = _SURROGATE.search(text).group()
        raise RecordError(
            path,
            record,
            field_name or "(json)",
            f"a lone surrogate \\u{ord(character):04x} (a \\u escape that is no character): fix the file",
        )


def _surrogate_at(value: Any, where: str) -> tuple[str, str] | None:
    if isinstance(value, str):
        return (where, value) if _SURROGATE.search(value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and _SURROGATE.search(key):
            return (where or "(key)", key)
        found = _surrogate_at(item, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else key)
        if found is not None:
            return found
    return None


# What a write reports when the disk (or the quota, or the file-size limit) is full: the error
# names no file, so the writer of an output adds the output's name.
WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _naming_output(error: OSError, path: Path, temporary: str) -> OSError:
    """`error`, from writing the output `path` through its temporary sibling `temporary`, as an
    error that names `path`: a full disk names no file, and a temporary name means nothing to a
    user. Other errors that name no temporary file are returned as they are."""

    def final(name):
        inside = isinstance(name, str) and (name == temporary or name.startswith(temporary + os.sep))
        return str(path) + name[len(temporary) :] if inside else name

    filename, filename2 = final(error.filename), final(error.filename2)
    if error.errno in WRITE_ERRORS:  # only the output it was writing (copyfile names its source too)
        written = filename2 if filename2 != error.filename2 else filename if filename != error.filename else str(path)
        return OSError(error.errno, error.strerror or str(error), written)
    if (filename, filename2) == (error.filename, error.filename2):
        return error
    return OSError(error.errno, error.strerror, filename, None, None if filename2 == filename else filename2)


def _make_temporary(path: Path, make):
    """A temporary sibling of `path`, made by `make`; where it cannot be made, the error names `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(path)
    try:
        return make()
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "w"):
    """Open a temporary sibling of `path` and move it into place only if the block succeeds. A
    failed write (a full disk) removes the sibling and raises an OSError that names `path`."""
    path = Path(path)
    handle = _make_temporary(
        path,
        lambda: tempfile.NamedTemporaryFile(
            mode,
            dir=path.parent,
            prefix=f".{path.name}.",
            suffix=".tmp",
            delete=False,
            **({"encoding": "utf-8", "newline": "\n"} if "b" not in mode else {}),
        ),
    )
    try:
        with handle:
            yield handle
        os.replace(handle.name, path)
    except BaseException as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(handle.name)
        if isinstance(error, OSError):
            raise _naming_output(error, path, handle.name) from None
        raise


def _remove_leftovers(path: Path) -> None:
    """Temporary siblings of `path` that a killed writer left behind (.dvcignore hides them from DVC)."""
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike):
    """Build a directory next to `path` and swap it in only when the block succeeds; a failed write
    removes it, and its OSError names the output (see `atomic_file`)."""
    path = Path(path)
    staging = _make_temporary(
        path, lambda: Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    )
    try:
        yield staging
        if path.exists():
            shutil.rmtree(path)
        os.replace(staging, path)
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, OSError):
            raise _naming_output(error, path, str(staging)) from None
        raise


def write_json(path: str | os.PathLike, data: Any) -> None:
    with atomic_file(path) as handle:
        handle.write(json.dumps(data, sort_keys=True, ensure_ascii=False, indent=2) + "\n")
