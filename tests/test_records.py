"""records: the one deterministic JSONL form, atomic writes, and errors that say where."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import random
import subprocess
import sys

import pytest

from olympiad_eval.core.records import (
    AnswerSlot,
    Criterion,
    Figure,
    Generation,
    InputError,
    Judgment,
    Problem,
    Prompt,
    RecordError,
    atomic_dir,
    atomic_file,
    content_hash,
    dumps,
    from_dict,
    iter_json_lines,
    natural_key,
    read_jsonl,
    to_dict,
    write_jsonl,
)
from tests.support import ROOT


def problem(id: str, language: str = "en", **extra) -> Problem:
    return Problem(id=id, benchmark="demo", language=language, question=f"question {id}", **extra)


def leftovers(folder, name):
    """Temporary siblings that atomic_file / atomic_dir would leave behind."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{name}."))


# ---------------------------------------------------------------- natural_key


@pytest.mark.parametrize(
    "ids, expected",
    [
        (["10", "2", "1"], ["1", "2", "10"]),
        (["P1_c", "P1_b", "P10_a", "P2_a"], ["P1_b", "P1_c", "P2_a", "P10_a"]),
        (
            ["IPhO_2025_1_C_4", "IPhO_2025_1_A_5", "IPhO_2025_1_A_10"],
            ["IPhO_2025_1_A_5", "IPhO_2025_1_A_10", "IPhO_2025_1_C_4"],
        ),
        (["b", "a10", "a9", "3"], ["3", "a9", "a10", "b"]),
    ],
)
def test_natural_key_orders_numbers_by_value(ids, expected):
    assert sorted(ids, key=natural_key) == expected


# ---------------------------------------------------------------- write_jsonl / read_jsonl


def test_write_jsonl_sorts_by_natural_key(tmp_path):
    path = tmp_path / "problems.jsonl"
    write_jsonl(path, [problem("10"), problem("2"), problem("1")])
    ids = [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]
    assert ids == ["1", "2", "10"]


def test_write_jsonl_orders_languages_of_one_problem(tmp_path):
    path = tmp_path / "problems.jsonl"
    write_jsonl(path, [problem("2", "zh"), problem("1", "zh"), problem("1", "en")])
    keys = [(r.id, r.language) for r in read_jsonl(path, Problem)]
    assert keys == [("1", "en"), ("1", "zh"), ("2", "zh")]


def test_write_jsonl_lines_have_sorted_keys_and_no_spaces(tmp_path):
    path = tmp_path / "problems.jsonl"
    write_jsonl(path, [problem("1", subject="力学")])
    line = path.read_text(encoding="utf-8").splitlines()[0]
    keys = list(json.loads(line))
    assert keys == sorted(keys)
    assert ", " not in line and '": ' not in line
    assert "力学" in line  # UTF-8, not \u escapes


def test_write_jsonl_same_records_in_any_order_give_identical_bytes(tmp_path):
    records = [problem(str(n), language) for n in (1, 2, 3, 10, 11, 20) for language in ("en", "zh")]
    shuffled = records[:]
    random.Random(7).shuffle(shuffled)
    assert shuffled != records
    write_jsonl(tmp_path / "a.jsonl", records)
    write_jsonl(tmp_path / "b.jsonl", shuffled)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_write_jsonl_rejects_duplicate_records(tmp_path):
    path = tmp_path / "problems.jsonl"
    with pytest.raises(InputError, match="duplicate"):
        write_jsonl(path, [problem("1"), problem("2"), problem("1")])
    assert not path.exists()
    assert leftovers(tmp_path, "problems.jsonl") == []


def test_write_jsonl_distinct_ids_with_leading_zero_are_not_duplicates(tmp_path):
    write_jsonl(tmp_path / "problems.jsonl", [problem("1"), problem("01")])
    assert len(read_jsonl(tmp_path / "problems.jsonl", Problem)) == 2


def test_same_problem_in_two_languages_is_not_a_duplicate(tmp_path):
    write_jsonl(tmp_path / "problems.jsonl", [problem("1", "en"), problem("1", "zh")])
    assert len(read_jsonl(tmp_path / "problems.jsonl", Problem)) == 2


ROUND_TRIP = [
    Problem(
        id="DemoPhO_2025_1_b",
        benchmark="demo",
        language="en",
        question="Find $a$ and $t$.",
        subset="DemoPhO_2025",
        figures=(
            Figure(sha256="ab" * 32, path="outputs/figures/x.png", mime="image/png", name="image_question/x.png"),
        ),
        answers=(
            AnswerSlot("\\boxed{$a = 3.20$}", "Numerical Value", "m/s^2", 1.0),
            AnswerSlot("\\boxed{$t = 0.790$}", points=1.0),
        ),
        marking=((Criterion("Award 1.0 pt ...", 1.0), Criterion("Award 1.0 pt ...", 1.0)),),
        choices=("13 cm", "18 cm"),
        level=3,
    ),
    Prompt(
        id="7",
        suite="s",
        language="zh",
        messages=({"role": "user", "content": [{"type": "text", "text": "题"}]},),
        prompt_hash="h",
    ),
    Generation(id="7", suite="s", model="m", sample=0, response=None, request_hash="r", error="HTTP 500"),
    Judgment(
        id="7",
        suite="s",
        model="m",
        judge="rule",
        sample=1,
        language="en",
        subset="x",
        status="scored",
        score=0.5,
        points=1.0,
        max_points=2.0,
        extracted=("1", ""),
        slots=({"correct": True},),
        level=None,
    ),
]


@pytest.mark.parametrize("record", ROUND_TRIP, ids=lambda r: type(r).__name__)
def test_read_jsonl_returns_what_write_jsonl_wrote(tmp_path, record):
    path = tmp_path / "records.jsonl"
    write_jsonl(path, [record])
    assert read_jsonl(path, type(record)) == [record]


def test_a_judgment_writes_undecided_checks_only_when_it_has_some(tmp_path):
    """`undecided` came after outputs were made: a judgment without undecided checks keeps the
    bytes it had before the field existed, and one with them keeps them through a round trip."""
    plain = ROUND_TRIP[-1]
    assert "undecided" not in json.loads(dumps(plain))
    every_field = dataclasses.asdict(plain)
    assert every_field.pop("undecided") == () and every_field.pop("refused") is False and every_field.pop("parts") == {}
    assert dumps(plain) == dumps(every_field)
    undecided = dataclasses.replace(plain, undecided=("slot 2: check exceeded its CPU budget of 10 s",))
    assert json.loads(dumps(undecided))["undecided"] == ["slot 2: check exceeded its CPU budget of 10 s"]
    write_jsonl(tmp_path / "judgments.jsonl", [plain, dataclasses.replace(undecided, sample=2)])
    assert read_jsonl(tmp_path / "judgments.jsonl", Judgment) == [plain, dataclasses.replace(undecided, sample=2)]


def test_a_judgment_keeps_its_protocols_parts_under_one_field(tmp_path):
    """Benchmark-specific parts of a score (HiPhO's answer and step level, PhysElite's process
    score) are one mapping, written only when there are some, kept through a round trip."""
    plain = ROUND_TRIP[-1]
    assert "parts" not in json.loads(dumps(plain))
    hipho = dataclasses.replace(plain, parts={"answer_points": 1.0, "step_points": None})
    assert json.loads(dumps(hipho))["parts"] == {"answer_points": 1.0, "step_points": None}
    write_jsonl(tmp_path / "judgments.jsonl", [hipho])
    assert read_jsonl(tmp_path / "judgments.jsonl", Judgment) == [hipho]


def test_problem_points_sum_its_slots():
    slots = (AnswerSlot("1", points=0.1), AnswerSlot("2", points=0.2), AnswerSlot("3", points=0.4))
    assert problem("1", answers=slots).points == 0.7


def test_content_hash_ignores_key_order_but_not_values():
    assert content_hash({"a": 1, "b": [1, 2]}) == content_hash({"b": [1, 2], "a": 1})
    assert content_hash({"a": 1, "b": [1, 2]}) != content_hash({"a": 1, "b": [2, 1]})


def test_dumps_of_a_record_and_of_its_dict_agree():
    record = ROUND_TRIP[0]
    assert dumps(record) == dumps(to_dict(record))


# ---------------------------------------------------------------- from_dict errors


def assert_names(error: RecordError, path: str, record: str, field: str):
    message = str(error)
    assert (error.path, error.record, error.field) == (path, record, field)
    assert path in message and f"record {record}" in message and f"'{field}'" in message


def test_from_dict_missing_field_names_file_record_and_field():
    with pytest.raises(RecordError) as caught:
        from_dict(Problem, {"id": "P7", "benchmark": "demo", "language": "en"}, path="problems.jsonl:3")
    assert_names(caught.value, "problems.jsonl:3", "P7", "question")
    assert "missing" in str(caught.value)


def test_from_dict_unknown_field_names_file_record_and_field():
    data = {"id": "P7", "benchmark": "demo", "language": "en", "question": "q", "difficulty": 3}
    with pytest.raises(RecordError) as caught:
        from_dict(Problem, data, path="problems.jsonl:9")
    assert_names(caught.value, "problems.jsonl:9", "P7", "difficulty")


@pytest.mark.parametrize(
    "field, value",
    [
        ("answers", [{"value": "1", "weight": 2}]),
        ("figures", [{"sha256": "x", "path": "p"}]),  # mime missing
        ("marking", [[{"text": "Award 1 pt", "pts": 1}]]),
    ],
)
def test_from_dict_bad_nested_item_names_the_field(field, value):
    data = {"id": "P7", "benchmark": "demo", "language": "en", "question": "q", field: value}
    with pytest.raises(RecordError) as caught:
        from_dict(Problem, data, path="problems.jsonl:2")
    assert_names(caught.value, "problems.jsonl:2", "P7", field)


def test_from_dict_without_id_still_says_which_record():
    with pytest.raises(RecordError, match=r"record \?"):
        from_dict(Problem, {"benchmark": "demo"}, path="f.jsonl:1")


def test_read_jsonl_error_names_the_line_of_the_file(tmp_path):
    path = tmp_path / "problems.jsonl"
    good = dumps(problem("1"))
    bad = json.dumps({"id": "2", "benchmark": "demo", "language": "en"})
    path.write_text(f"{good}\n{bad}\n", encoding="utf-8")
    with pytest.raises(RecordError) as caught:
        read_jsonl(path, Problem)
    assert_names(caught.value, f"{path}:2", "2", "question")


# ---------------------------------------------------------------- iter_json_lines


def test_iter_json_lines_skips_blank_lines_and_counts_them(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": 1}\n\n   \n{"id": 2}\n', encoding="utf-8")
    assert list(iter_json_lines(path)) == [(1, {"id": 1}), (4, {"id": 2})]


@pytest.mark.parametrize(
    "content, line",
    [
        ('{"id": 1}\n{"id": 2,\n', 2),
        ('{"id": 1}\n\n{"id": 3}\nnot json\n', 4),
        ("[1, 2]\n", 1),  # valid JSON, but not an object
    ],
)
def test_iter_json_lines_bad_line_names_file_and_line(tmp_path, content, line):
    path = tmp_path / "rows.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(RecordError) as caught:
        list(iter_json_lines(path))
    assert str(path) in str(caught.value)
    assert f"at line {line}" in str(caught.value)
    assert caught.value.field == "(json)"


# ---------------------------------------------------------------- atomic_file / atomic_dir


def test_atomic_file_writes_on_success(tmp_path):
    path = tmp_path / "sub" / "out.txt"
    with atomic_file(path) as handle:
        handle.write("done\n")
    assert path.read_text() == "done\n"
    assert leftovers(path.parent, "out.txt") == []


def test_atomic_file_leaves_nothing_when_the_block_raises(tmp_path):
    path = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with atomic_file(path) as handle:
            handle.write("half")
            raise RuntimeError("boom")
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_file_keeps_the_old_file_when_the_block_raises(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_file(path) as handle:
            handle.write("new")
            raise KeyboardInterrupt
    assert path.read_text() == "old"
    assert leftovers(tmp_path, "out.txt") == []


def test_atomic_dir_replaces_the_directory_on_success(tmp_path):
    target = tmp_path / "out"
    (target / "stale").mkdir(parents=True)
    with atomic_dir(target) as staging:
        (staging / "new.txt").write_text("x")
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert leftovers(tmp_path, "out") == []


def test_atomic_dir_leaves_nothing_when_the_block_raises(tmp_path):
    target = tmp_path / "out"
    with pytest.raises(ValueError):
        with atomic_dir(target) as staging:
            (staging / "half.txt").write_text("x")
            raise ValueError("boom")
    assert list(tmp_path.iterdir()) == []


def test_atomic_dir_keeps_the_old_directory_when_the_block_raises(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old")
    with pytest.raises(ValueError):
        with atomic_dir(target) as staging:
            (staging / "new.txt").write_text("new")
            raise ValueError("boom")
    assert [p.name for p in target.iterdir()] == ["old.txt"]
    assert leftovers(tmp_path, "out") == []


# A full disk, in a child process: a file-size limit makes any write past it fail with EFBIG, as a
# full disk fails with ENOSPC (same path through the code: a write error that names no file), with
# no root and no real disk to fill. SIGXFSZ, which would kill the child, is ignored (so is it by
# Python itself). The child prints what it caught: the errno and the file the error names.
FULL_DISK = """
import os, resource, signal, sys
from pathlib import Path
from olympiad_eval.core.records import atomic_dir, write_jsonl, Generation
resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
out = Path(sys.argv[1])
records = [Generation(id=str(i), suite="s", model="m", sample=0, response="x" * 50, request_hash="h") for i in range(5)]
try:
    {write}
except OSError as error:
    print(error.errno, error.filename, error.filename2, sep="|")
"""


@pytest.mark.parametrize(
    "write,written",
    [
        ("write_jsonl(out / 'generations.jsonl', records)", "generations.jsonl"),
        (
            "with atomic_dir(out / 'tables') as staging:\n        (staging / 'scores.csv').write_text('y' * 200)",
            "tables",
        ),
        (
            "with atomic_dir(out / 'problems') as staging:\n        write_jsonl(staging / 'problems.jsonl', records)",
            "problems/problems.jsonl",
        ),
    ],
    ids=["a-jsonl-file", "a-folder", "a-jsonl-file-in-a-folder"],
)
def test_a_full_disk_names_the_output_and_leaves_nothing(tmp_path, write, written):
    result = subprocess.run(
        [sys.executable, "-c", FULL_DISK.replace("{write}", write), str(tmp_path)],
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == f"{errno.EFBIG}|{tmp_path / written}|None"  # the output, never a temporary name
    assert list(tmp_path.iterdir()) == []  # nor its temporary sibling


def test_a_full_disk_while_copying_into_an_output_names_the_copy(tmp_path):
    """shutil.copyfile on a full disk names its source and its (temporary) target: the error then
    names the output's file that was being written, not the release's, nor the temporary folder."""
    target = tmp_path / "problems"
    with pytest.raises(OSError) as caught:
        with atomic_dir(target) as staging:
            (staging / "figures").mkdir()
            raise OSError(
                errno.ENOSPC, os.strerror(errno.ENOSPC), "/release/fig.png", None, str(staging / "figures/a.png")
            )
    assert (caught.value.errno, caught.value.filename, caught.value.filename2) == (
        errno.ENOSPC,
        str(target / "figures/a.png"),
        None,
    )
    assert list(tmp_path.iterdir()) == []


def test_an_error_about_another_file_keeps_its_names(tmp_path):
    """Only a failed write of the output is renamed: an input that cannot be read stays named."""
    with pytest.raises(FileNotFoundError) as caught:
        with atomic_file(tmp_path / "out.txt"):
            open(tmp_path / "missing.txt", encoding="utf-8")
    assert caught.value.filename == str(tmp_path / "missing.txt")


def test_a_field_added_later_is_left_out_at_its_default_and_read_back(tmp_path):
    """`Generation.refusal` and `Judgment.refused` came after files were written: records without
    them keep their bytes, and files without them read back."""
    plain = Generation(id="1", suite="s", model="m", sample=0, response="42", request_hash="h")
    refused = dataclasses.replace(plain, id="2", response=None, refusal="I can't help with that.")
    assert "refusal" not in dumps(plain) and '"refusal":"I can\'t help with that."' in dumps(refused)
    path = tmp_path / "generations.jsonl"
    write_jsonl(path, [plain, refused])
    assert read_jsonl(path, Generation) == [plain, refused]
