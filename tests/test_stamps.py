"""A part's stamp: it holds while the part's code, config values and input files are what made its
outputs, and its outputs are still those bytes; any change to either makes the part stale."""

from __future__ import annotations

import json

import pytest

from olympiad_eval.core.records import InputError
from olympiad_eval.core.stamps import Part, digest_of, inputs_digest, up_to_date, write_stamp


@pytest.fixture
def made(tmp_path):
    """A part made from one input file and a config, writing a file and a folder, then stamped."""
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "1"}\n', encoding="utf-8")
    out_file, out_folder = tmp_path / "out.jsonl", tmp_path / "pages"
    out_file.write_text("judged\n", encoding="utf-8")
    (out_folder / "problems").mkdir(parents=True)
    (out_folder / "index.html").write_text("<html>", encoding="utf-8")
    (out_folder / "problems" / "1.html").write_text("<p>1</p>", encoding="utf-8")

    def part(code: str = "md5  stages/x.py\n", config: dict | None = None) -> Part:
        digest = inputs_digest(code, config or {"judge": {"kind": "rule"}}, {"source": source})
        return Part(tmp_path / "stamps" / "part.json", digest, (out_file, out_folder))

    part().done()
    return part, source, out_file, out_folder


def test_a_part_is_up_to_date_once_stamped_and_not_before(tmp_path):
    (tmp_path / "out").write_text("x", encoding="utf-8")
    part = Part(tmp_path / "stamp.json", inputs_digest("", {}, {}), (tmp_path / "out",))
    assert not part.up_to_date()
    part.done()
    assert part.up_to_date()
    assert json.loads(part.stamp.read_text(encoding="utf-8")).keys() == {"inputs", "outputs"}


@pytest.mark.parametrize(
    "change",
    ["code", "config", "input file", "input removed", "output edited", "output removed", "page added", "page edited"],
)
def test_any_change_to_what_made_a_part_or_to_what_it_wrote_makes_it_stale(made, change):
    part, source, out_file, out_folder = made
    assert part().up_to_date()
    if change == "code":
        assert not part(code="other  stages/x.py\n").up_to_date()
        return
    if change == "config":
        assert not part(config={"judge": {"kind": "rule", "workers": 3}}).up_to_date()
        return
    {
        "input file": lambda: source.write_text('{"id": "2"}\n', encoding="utf-8"),
        "input removed": source.unlink,
        "output edited": lambda: out_file.write_text("edited\n", encoding="utf-8"),
        "output removed": out_file.unlink,
        "page added": lambda: (out_folder / "problems" / "2.html").write_text("<p>2</p>", encoding="utf-8"),
        "page edited": lambda: (out_folder / "index.html").write_text("<html>!", encoding="utf-8"),
    }[change]()
    assert not part().up_to_date()


def test_a_missing_input_is_told_apart_from_an_empty_one(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert inputs_digest("", {}, {"x": empty}) != inputs_digest("", {}, {"x": tmp_path / "missing.jsonl"})


def test_an_atomic_write_s_leftover_is_no_part_of_a_folder(tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "index.html").write_text("<html>", encoding="utf-8")
    before = digest_of(tmp_path / "pages")
    (tmp_path / "pages" / ".index.html.abc123.tmp").write_text("half", encoding="utf-8")  # a killed write's
    assert digest_of(tmp_path / "pages") == before


def test_a_folder_s_digest_names_its_files_not_only_their_bytes(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    (tmp_path / "a" / "1.html").write_text("same", encoding="utf-8")
    (tmp_path / "b" / "2.html").write_text("same", encoding="utf-8")
    assert digest_of(tmp_path / "a") != digest_of(tmp_path / "b")


def test_a_torn_or_foreign_stamp_is_no_stamp(made):
    part, *_ = made
    part().stamp.write_text('{"inputs": "', encoding="utf-8")  # a torn write (stamps are written atomically)
    assert not part().up_to_date()
    part().stamp.write_text("[]", encoding="utf-8")
    assert not part().up_to_date()


def test_a_part_is_never_stamped_before_its_outputs_are_written(tmp_path):
    with pytest.raises(InputError, match=r"stamped before its outputs are written: .*out\.jsonl"):
        write_stamp(tmp_path / "stamp.json", "digest", [tmp_path / "out.jsonl"])
    assert not (tmp_path / "stamp.json").exists()
    assert not up_to_date(tmp_path / "stamp.json", "digest", [tmp_path / "out.jsonl"])
