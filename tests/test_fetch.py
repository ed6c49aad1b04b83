"""fetch: a release becomes problems.jsonl plus figures stored once by hash, or nothing at all."""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import zlib
from pathlib import Path

import pytest
from omegaconf import OmegaConf
from PIL import Image

from olympiad_eval.benchmarks import known_kinds
from olympiad_eval.benchmarks.release import FigureStore
from olympiad_eval.core.images import MAX_FIGURE_PIXELS
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


def link_out_file(root: Path, outside: Path) -> None:
    (root / "images" / "3.jpg").unlink()
    (root / "images" / "3.jpg").symlink_to(outside / "3.jpg")


def link_out_relative(root: Path, outside: Path) -> None:
    (root / "images" / "3.jpg").unlink()
    (root / "images" / "3.jpg").symlink_to(os.path.relpath(outside / "3.jpg", root / "images"))


def link_out_folder(root: Path, outside: Path) -> None:
    shutil.rmtree(outside)
    shutil.move(root / "images", outside)
    (root / "images").symlink_to(outside, target_is_directory=True)


@pytest.mark.parametrize(
    "link", [link_out_file, link_out_relative, link_out_folder], ids=["file", "relative", "folder"]
)
def test_a_figure_that_links_outside_the_release_is_refused(tmp_path, link):
    """Checked on the path resolved, not as written: `images/3.jpg` names a file of the release,
    and its link (or its folder's) leads out of it, to a file that would be stored and sent."""
    root = release(tmp_path, "mathvision")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(root / "images" / "3.jpg", outside / "3.jpg")
    link(root, outside)
    fails(
        tmp_path,
        "mathvision",
        root,
        path=f"{root / 'data' / 'test.jsonl'}:{1 if link is link_out_folder else 3}",
        record="1" if link is link_out_folder else "3",
        field="image",
        match="is a link that leads outside the release",
    )


def test_a_figure_that_links_inside_the_release_is_read(tmp_path):
    root = release(tmp_path, "mathvision")
    (root / "extra").mkdir()
    shutil.move(root / "images" / "3.jpg", root / "extra" / "3.jpg")
    (root / "images" / "3.jpg").symlink_to(Path("..") / "extra" / "3.jpg")
    (root / "images" / "2.jpg").unlink()
    (root / "images" / "2.jpg").symlink_to("1.jpg")
    problems = {p.id: p for p in fetch("sample_mathvision", config("mathvision", root), tmp_path / "out")}
    assert problems["3"].figures[0].sha256 == file_sha256(root / "extra" / "3.jpg")
    assert problems["2"].figures[0].sha256 == problems["1"].figures[0].sha256


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(mode: str, width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, (width, height)).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def header_only_png(width: int, height: int) -> bytes:
    """A PNG whose header claims width x height and whose pixel data is junk: decoding it fails."""
    header = png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0))
    return b"\x89PNG\r\n\x1a\n" + header + png_chunk(b"IDAT", b"junk") + png_chunk(b"IEND", b"")


@pytest.mark.parametrize(
    "data",
    [
        lambda: png("1", 12_000, 12_000),  # 144 megapixels in ~20 kB
        lambda: png("P", 8_000, 8_000),
        lambda: png("L", 100_000, MAX_FIGURE_PIXELS // 100_000 + 1),  # just over the bound
        lambda: header_only_png(12_000, 12_000),  # refused from its header: never decoded
    ],
    ids=["1-bit-144mp", "palette-64mp", "just-over", "header-only"],
)
@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")  # Pillow's, at open
def test_a_figure_over_the_pixel_bound_is_refused_from_its_header(tmp_path, data):
    root = release(tmp_path, "mathvision")
    figure = data()
    assert len(figure) < 2**20
    (root / "images" / "3.jpg").write_bytes(figure)
    error = fails(
        tmp_path,
        "mathvision",
        root,
        path=f"{root / 'data' / 'test.jsonl'}:3",
        record="3",
        field="image",
        match="megapixels), over the bound of 50 megapixels: refused before it is decoded",
    )
    assert "figure 'images/3.jpg' is " in str(error)


def test_a_figure_at_the_pixel_bound_is_read(tmp_path):
    root = release(tmp_path, "mathvision")
    (root / "images" / "3.jpg").write_bytes(png("1", 10_000, MAX_FIGURE_PIXELS // 10_000))
    problems = {p.id: p for p in fetch("sample_mathvision", config("mathvision", root), tmp_path / "out")}
    assert problems["3"].figures[0].mime == "image/png"


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


# Ids that display as another problem's: equal under NFKC, or but for characters that show nothing.
LOOK_ALIKE = {
    "fullwidth digit": "\uff11",  # １
    "zero-width space after": "1\u200b",
    "zero-width joiner before": "\u200d1",
    "word joiner": "\u20601",
    "soft hyphen": "1\u00ad",
    "byte order mark": "\ufeff1",
    "left-to-right mark": "1\u200e",
    "variation selector": "1\ufe0f",
    "combining grapheme joiner": "1\u034f",
    "mathematical bold digit": "\U0001d7cf",  # 𝟏
    "superscript one": "\u00b9",
    "trailing space": "1 ",
}


@pytest.mark.parametrize("case", LOOK_ALIKE)
def test_ids_that_display_alike_are_refused_naming_both(tmp_path, case):
    root = release(tmp_path, "mathvision")
    path = root / "data" / "test.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    twin = json.loads(lines[1]) | {"id": LOOK_ALIKE[case]}  # problem 2's row, under an id like problem 1's
    path.write_text("\n".join([*lines, json.dumps(twin, ensure_ascii=False)]) + "\n", encoding="utf-8")
    shown = ascii(LOOK_ALIKE[case])[1:-1]
    error = fails(
        tmp_path, "mathvision", root, path=f"{path}:5", record=shown, field="id", match="looks like the id '1'"
    )
    assert f"id '{shown}' looks like" in str(error) and "first seen at data/test.jsonl:1" in str(error)


@pytest.mark.parametrize("other", ["l", "I", "10", "1a", "\u0661"])  # other letters and digits: other ids
def test_ids_that_differ_visibly_are_kept(tmp_path, other):
    root = release(tmp_path, "mathvision")
    path = root / "data" / "test.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1]) | {"id": other}
    path.write_text("\n".join([*lines, json.dumps(row, ensure_ascii=False)]) + "\n", encoding="utf-8")
    problems = fetch("sample_mathvision", config("mathvision", root), tmp_path / "out")
    assert other in {problem.id for problem in problems}


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
