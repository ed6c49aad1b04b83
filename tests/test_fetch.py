"""fetch: a release becomes problems.jsonl plus figures stored once by hash, or nothing at all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import known_kinds
from olympiad_eval.benchmarks.release import FigureStore
from olympiad_eval.core.records import InputError, Problem, RecordError, file_sha256, read_jsonl
from olympiad_eval.stages import fetch as fetch_module
from olympiad_eval.stages.fetch import fetch

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"


def config(kind: str, path: Path):
    cfg = OmegaConf.load(REPO / "conf" / "benchmark" / f"sample_{kind}.yaml")
    cfg.source.path = str(path)
    return cfg


def release(tmp_path, kind: str) -> Path:
    """A private copy of a bundled sample release, to break."""
    root = tmp_path / "release" / kind
    shutil.copytree(SAMPLE / kind, root)
    return root


def assert_nothing_written(out: Path):
    assert not out.exists()
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")] == []


# ---------------------------------------------------------------- success


def test_fetch_hipho_sample_writes_problems_and_figures_once(tmp_path):
    out = tmp_path / "outputs" / "problems" / "sample_hipho"
    problems = fetch("sample_hipho", config("hipho", SAMPLE / "hipho"), out)

    assert sorted(p.name for p in out.iterdir()) == ["figures", "problems.jsonl"]
    assert read_jsonl(out / "problems.jsonl", Problem) == problems
    assert [p.id for p in problems] == [
        "DemoCPhO_2025_1_1",
        "DemoCPhO_2025_2_1",
        "DemoPhO_2025_1_a",
        "DemoPhO_2025_1_b",
        "DemoPhO_2025_2_a",
    ]

    sources = [SAMPLE / "hipho" / "data" / "image_question" / f"DemoPhO_2025_{n}_1.png" for n in ("1_a", "2_a")]
    expected = sorted(f"{file_sha256(path)}.png" for path in sources)
    assert sorted(p.name for p in (out / "figures").iterdir()) == expected  # 3 references, 2 files

    for problem in problems:
        for figure in problem.figures:
            stored = Path(figure.path)
            assert stored == out / "figures" / f"{figure.sha256}.png"
            assert file_sha256(stored) == figure.sha256
            assert figure.name.startswith("image_question/")
    by_id = {p.id: p for p in problems}
    assert by_id["DemoPhO_2025_1_a"].figures[0].path == by_id["DemoPhO_2025_1_b"].figures[0].path


@pytest.mark.parametrize(
    "kind, records, figure_files, suffix", [("mathvision", 4, 4, ".jpg"), ("physelite", 6, 3, ".png")]
)
def test_fetch_other_samples(tmp_path, kind, records, figure_files, suffix):
    out = tmp_path / "out"
    problems = fetch(f"sample_{kind}", config(kind, SAMPLE / kind), out)
    assert len(problems) == len(read_jsonl(out / "problems.jsonl", Problem)) == records
    stored = sorted((out / "figures").iterdir())
    assert len(stored) == figure_files
    assert all(p.suffix == suffix and p.stem == file_sha256(p) for p in stored)


def test_fetch_is_deterministic_and_replaces_the_previous_output(tmp_path):
    out = tmp_path / "out"
    fetch("sample_physelite", config("physelite", SAMPLE / "physelite"), out)
    first = (out / "problems.jsonl").read_bytes()
    (out / "stale.txt").write_text("from an older run")
    fetch("sample_physelite", config("physelite", SAMPLE / "physelite"), out)
    assert (out / "problems.jsonl").read_bytes() == first
    assert not (out / "stale.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no staging directory left next to it


# ---------------------------------------------------------------- failures leave nothing behind


def fails(tmp_path, kind: str, root: Path, *, path: str, record: str, field: str, match: str = ""):
    out = tmp_path / "out"
    with pytest.raises(RecordError) as caught:
        fetch(f"sample_{kind}", config(kind, root), out)
    error = caught.value
    assert (error.path, error.record, error.field) == (path, record, field)
    assert path in str(error) and f"record {record}" in str(error) and f"'{field}'" in str(error)
    assert match in str(error)
    assert_nothing_written(out)
    return error


def test_missing_figure(tmp_path):
    root = release(tmp_path, "hipho")
    (root / "data" / "image_question" / "DemoPhO_2025_2_a_1.png").unlink()
    fails(
        tmp_path,
        "hipho",
        root,
        path=str(root / "data" / "DemoPhO_2025.json"),
        record="DemoPhO_2025_2_a",
        field="image_question",
        match="not found",
    )


@pytest.mark.parametrize(
    "damage",
    [lambda data: b"not an image", lambda data: b"", lambda data: data[: len(data) // 2]],
    ids=["junk", "empty", "truncated-png"],
)
def test_corrupt_png(tmp_path, damage):
    root = release(tmp_path, "physelite")
    image = root / "images" / "PE-S-0002_process.png"
    image.write_bytes(damage(image.read_bytes()))
    fails(
        tmp_path,
        "physelite",
        root,
        path=f"{root / 'data' / 'test.jsonl'}:3",
        record="PE-S-0002",
        field="process_images",
        match="not a readable image",
    )


def test_truncated_jpeg(tmp_path):
    root = release(tmp_path, "mathvision")
    image = root / "images" / "3.jpg"
    image.write_bytes(image.read_bytes()[:2000])
    fails(tmp_path, "mathvision", root, path=f"{root / 'data' / 'test.jsonl'}:3", record="3", field="image")


def test_bad_json_line(tmp_path):
    root = release(tmp_path, "mathvision")
    path = root / "data" / "test.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:-1]  # drop the closing brace
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fails(tmp_path, "mathvision", root, path=str(path), record="at line 3", field="(json)")


def test_bad_exam_json(tmp_path):
    root = release(tmp_path, "hipho")
    path = root / "data" / "DemoCPhO_2025.json"
    path.write_text(path.read_text(encoding="utf-8")[:-5], encoding="utf-8")
    fails(tmp_path, "hipho", root, path=str(path), record="(file)", field="(json)")


def test_criterion_without_points(tmp_path):
    root = release(tmp_path, "hipho")
    path = root / "data" / "DemoPhO_2025.json"
    items = json.loads(path.read_text(encoding="utf-8"))
    items[1]["marking"][0][0] = "Give credit if the answer uses energy conservation."
    path.write_text(json.dumps(items), encoding="utf-8")
    error = fails(tmp_path, "hipho", root, path=str(path), record=items[1]["id"], field="marking[0][0]")
    assert "no points stated" in str(error)


def test_missing_required_field(tmp_path):
    root = release(tmp_path, "mathvision")
    path = root / "data" / "test.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    del row["answer"]
    lines[1] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fails(tmp_path, "mathvision", root, path=f"{path}:2", record=row["id"], field="answer")


def test_duplicate_id_in_one_split(tmp_path):
    root = release(tmp_path, "mathvision")
    path = root / "data" / "test.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines + [lines[0]]) + "\n", encoding="utf-8")
    fails(tmp_path, "mathvision", root, path=f"{root}/data/test.jsonl:5", record="1", field="id", match="duplicate")


def test_duplicate_id_names_the_release_file(tmp_path):
    root = release(tmp_path, "mathvision")
    path = root / "data" / "test.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines + [lines[0]]) + "\n", encoding="utf-8")
    with pytest.raises(RecordError) as caught:
        fetch("sample_mathvision", config("mathvision", root), tmp_path / "out")
    assert "test.jsonl" in caught.value.path


def test_duplicate_problem_and_language_row(tmp_path):
    root = release(tmp_path, "physelite")
    path = root / "data" / "test.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines + [lines[3]]) + "\n", encoding="utf-8")  # PE-S-0002 zh again
    error = fails(tmp_path, "physelite", root, path=f"{root}/data/test.jsonl:7", record="PE-S-0002", field="id")
    assert "language zh" in str(error)


def test_duplicate_id_across_exam_files(tmp_path):
    root = release(tmp_path, "hipho")
    items = json.loads((root / "data" / "DemoPhO_2025.json").read_text(encoding="utf-8"))
    again = next(item for item in items[1:] if item["id"] == "DemoPhO_2025_1_b")
    extra = [{"information": "None."}, again | {"image_question": []}]
    (root / "data" / "Other_2025.json").write_text(json.dumps(extra), encoding="utf-8")
    error = fails(tmp_path, "hipho", root, path=f"{root}/data/Other_2025.json", record="DemoPhO_2025_1_b", field="id")
    assert "first seen at data/DemoPhO_2025.json" in str(error)


def test_failed_fetch_keeps_the_previous_output(tmp_path):
    out = tmp_path / "out"
    fetch("sample_mathvision", config("mathvision", SAMPLE / "mathvision"), out)
    before = (out / "problems.jsonl").read_bytes()
    root = release(tmp_path, "mathvision")
    (root / "images" / "4.jpg").unlink()
    with pytest.raises(RecordError):
        fetch("sample_mathvision", config("mathvision", root), out)
    assert (out / "problems.jsonl").read_bytes() == before


def test_failure_while_writing_removes_the_staging_directory(tmp_path, monkeypatch):
    def broken(path, records):
        raise OSError("disk full")

    monkeypatch.setattr(fetch_module, "write_jsonl", broken)
    out = tmp_path / "out"
    with pytest.raises(OSError, match="disk full"):
        fetch("sample_hipho", config("hipho", SAMPLE / "hipho"), out)
    assert_nothing_written(out)


# ---------------------------------------------------------------- configuration errors


def test_unsupported_source_type(tmp_path):
    cfg = config("hipho", SAMPLE / "hipho")
    cfg.source.type = "huggingface"
    with pytest.raises(InputError, match="source.type 'huggingface' is not supported"):
        fetch("sample_hipho", cfg, tmp_path / "out")
    assert_nothing_written(tmp_path / "out")


def test_source_path_that_is_not_a_directory(tmp_path):
    with pytest.raises(InputError, match="is not a directory"):
        fetch("sample_hipho", config("hipho", tmp_path / "nowhere"), tmp_path / "out")


def test_unknown_benchmark_kind(tmp_path):
    cfg = config("hipho", SAMPLE / "hipho")
    cfg.kind = "gsm8k"
    with pytest.raises(InputError, match=f"unknown benchmark kind 'gsm8k'; known kinds: {', '.join(known_kinds())}$"):
        fetch("x", cfg, tmp_path / "out")


def test_empty_release(tmp_path):
    root = release(tmp_path, "mathvision")
    (root / "data" / "test.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="has no problems"):
        fetch("sample_mathvision", config("mathvision", root), tmp_path / "out")
    assert_nothing_written(tmp_path / "out")


def test_a_stored_figure_is_named_by_its_format_not_its_extension(tmp_path):
    png_named_jpg = tmp_path / "figure.jpg"
    shutil.copyfile(SAMPLE / "physelite" / "images" / "PE-S-0001_schematic.png", png_named_jpg)
    store = FigureStore(tmp_path / "staging", tmp_path / "final")
    figure = store.file(png_named_jpg, release_file="r.jsonl", record="1", field_name="image", name="figure.jpg")
    assert figure.mime == "image/png" and figure.sha256 == file_sha256(png_named_jpg)
    assert figure.path == (tmp_path / "final" / f"{figure.sha256}.png").as_posix()
    assert (tmp_path / "staging" / f"{figure.sha256}.png").read_bytes() == png_named_jpg.read_bytes()
