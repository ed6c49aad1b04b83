"""PhysElite: one row per problem x language, columns mapped by the benchmark config."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import physelite, plugin
from olympiad_eval.benchmarks.release import FigureStore
from olympiad_eval.core.records import InputError, Problem, RecordError, read_jsonl
from olympiad_eval.scoring.expressions import to_number
from olympiad_eval.scoring.pool import run_check
from olympiad_eval.stages.fetch import fetch
from olympiad_eval.stages.render import render
from tests.support import by_rules, load_release, scoring, typed

PHYSELITE = plugin("physelite")

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "data" / "sample" / "physelite"
CFG = OmegaConf.load(REPO / "conf" / "benchmark" / "sample_physelite.yaml")


def check(jobs):
    return [run_check(job) for job in jobs]


@pytest.fixture(scope="module")
def sample():
    return {(p.id, p.language): p for p in load_release(PHYSELITE, SAMPLE, CFG, "sample_physelite")}


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"subjects": ["Mechanics"]}, ["PE-S-0001", "PE-S-0003"]),  # 0003 is tagged Modern Physics and Mechanics
        ({"subjects": ["Modern Physics"]}, ["PE-S-0003"]),
        ({"difficulty": [4, 6]}, ["PE-S-0002", "PE-S-0003"]),
        ({"subjects": ["Mechanics"], "difficulty": [2, 4]}, ["PE-S-0001"]),
    ],
)
def test_a_suite_takes_subjects_and_difficulties_in_both_languages_alike(sample, options, expected):
    from olympiad_eval.stages.render import select

    for language in ("en", "zh"):
        chosen = select(list(sample.values()), typed("physelite", language=language, **options))
        assert [p.id for p in chosen] == expected and {p.language for p in chosen} == {language}


def test_a_difficulty_the_suite_lacks_is_refused(sample):
    from olympiad_eval.stages.render import select

    with pytest.raises(
        InputError,
        match=r"^suite 'test' \(conf/suite/test.yaml or an override\): difficulty: 7 "
        r"selects no problem of the suite \(its difficulty: 2, 4, 6\)$",
    ):
        select(list(sample.values()), typed("physelite", language="en", difficulty=[6, 7]), "test")


WIDE_SAMPLE = REPO / "data" / "sample" / "physelite_wide"
WIDE_CFG = OmegaConf.load(REPO / "conf" / "benchmark" / "sample_physelite_wide.yaml")


@pytest.fixture(scope="module")
def wide_sample():
    return {(p.id, p.language): p for p in load_release(PHYSELITE, WIDE_SAMPLE, WIDE_CFG, "sample_physelite")}


def test_sample_has_three_problems_in_two_languages(sample):
    assert sorted(sample) == [
        (pid, language) for pid in ("PE-S-0001", "PE-S-0002", "PE-S-0003") for language in ("en", "zh")
    ]


@pytest.mark.parametrize(
    "pid, answer, level, subject, roles",
    [
        ("PE-S-0001", "24 m", 2, "Mechanics", ["schematic"]),
        ("PE-S-0002", "r = \\frac{1}{B}\\sqrt{\\frac{2 m U}{q}}", 4, "Electromagnetism", ["schematic", "process"]),
        ("PE-S-0003", "280 MeV", 6, "Modern Physics; Mechanics", []),  # a list of subjects in the release
    ],
)
@pytest.mark.parametrize("language", ["en", "zh"])
def test_sample_fields_are_mapped_from_the_release_columns(sample, pid, language, answer, level, subject, roles):
    problem = sample[(pid, language)]
    assert problem.answers[0].value == answer and problem.answers[0].kind == "Open"
    assert (problem.level, problem.subject, problem.subset, problem.group) == (level, subject, subject, pid)
    assert [f.role for f in problem.figures] == roles
    assert problem.solution.startswith("Step 1" if language == "en" else "第一步")


def test_sample_question_text_is_in_its_language(sample):
    assert sample[("PE-S-0001", "en")].question.startswith("A small ball is thrown")
    assert sample[("PE-S-0001", "zh")].question.startswith("如图所示")


def test_sample_figures_are_shared_between_languages(sample):
    en, zh = sample[("PE-S-0002", "en")], sample[("PE-S-0002", "zh")]
    assert en.figures == zh.figures
    assert [f.name for f in en.figures] == ["images/PE-S-0002_schematic.png", "images/PE-S-0002_process.png"]
    assert all(f.mime == "image/png" and Path(f.path).is_file() for f in en.figures)
    assert en.figures[0].sha256 != en.figures[1].sha256


def write_release(tmp_path, rows, sample=SAMPLE):
    """A release of `rows` (JSONL) with the images of the bundled `sample` beside it."""
    shutil.copytree(sample / "images", tmp_path / "images")
    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "test.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def sample_rows():
    return [json.loads(line) for line in (SAMPLE / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()]


def test_renamed_columns_are_followed(tmp_path):
    rows = [{("statement" if k == "problem_text" else k): v for k, v in row.items()} for row in sample_rows()]
    write_release(tmp_path, rows)
    cfg = OmegaConf.merge(CFG, {"fields": {"text": "statement"}})
    problems = load_release(PHYSELITE, tmp_path, cfg, "p")
    assert len(problems) == 6
    assert problems[0].question == sample_rows()[0]["problem_text"]


@pytest.mark.parametrize("column", ["problem_id", "language", "problem_text", "problem_answer"])
def test_missing_column_names_file_line_record_and_column(tmp_path, column):
    rows = sample_rows()
    del rows[3][column]
    path = write_release(tmp_path, rows)
    with pytest.raises(RecordError) as caught:
        load_release(PHYSELITE, tmp_path, CFG, "p")
    assert caught.value.path == f"{path}:4"
    assert caught.value.record == ("?" if column == "problem_id" else "PE-S-0002")
    assert caught.value.field == column


def test_missing_process_image_names_its_column(tmp_path):
    rows = sample_rows()
    rows[2]["process_images"] = ["images/nope.png"]
    path = write_release(tmp_path, rows)
    with pytest.raises(RecordError) as caught:
        load_release(PHYSELITE, tmp_path, CFG, "p")
    assert (caught.value.path, caught.value.record, caught.value.field) == (f"{path}:3", "PE-S-0002", "process_images")


def test_missing_split_is_an_input_error():
    with pytest.raises(InputError, match="dev.jsonl not found"):
        load_release(PHYSELITE, SAMPLE, OmegaConf.merge(CFG, {"split": "dev"}), "p")


# ---------------------------------------------------------------- prompts and scoring


@pytest.mark.parametrize(
    "figures, roles",
    [("none", []), ("schematic", ["schematic"]), ("schematic+process", ["schematic", "process"])],
)
def test_figures_follow_the_suite(sample, figures, roles):
    chosen = PHYSELITE.figures(sample[("PE-S-0002", "en")], typed("physelite", figures=figures))
    assert [f.role for f in chosen] == roles


def hint_suite(mode: str, **more) -> OmegaConf:
    return typed("physelite", hint={"mode": mode, "step_separator": "\\n+", "label": "Hint:", **more})


def test_hint_is_the_first_step_of_the_solution(sample):
    problem = sample[("PE-S-0001", "en")]
    key, plain = PHYSELITE.template_fields(problem, hint_suite("none"))
    _, hinted = PHYSELITE.template_fields(problem, hint_suite("first_step"))
    assert key == "default"
    assert plain == {"problem": problem.question}
    assert hinted["problem"] == (
        f"{problem.question}\n\nHint:\n"
        "Step 1: The vertical motion is free fall from rest, so $h = \\frac{1}{2} g t^2$."
    )


def test_hint_without_result_leaves_out_the_concluding_step(sample):
    problem = sample[("PE-S-0002", "zh")]
    assert physelite.prompts.hint(problem, hint_suite("without_result")) == "\n".join(problem.solution.splitlines()[:3])


def test_the_suites_hint_is_the_first_step():
    from tests.support import compose_stage

    for language in ("en", "zh"):
        suite = compose_stage("render", [f"suite=physelite_{language}_hint", "cell.benchmark=physelite"]).suite
        assert (suite.hint.mode, suite.setting, suite.baseline) == (
            "first_step",
            "schematic+hint",
            f"physelite_{language}",
        )


def numbers_in(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"\d+(?:\.\d+)?", text)]


@pytest.mark.parametrize("mode", ["first_step", "without_result"])
@pytest.mark.parametrize("layout", ["long", "wide"])
def test_no_hint_of_any_sample_record_contains_its_final_answer(sample, wide_sample, mode, layout):
    """Every record of both bundled layouts gets a hint, and none gives the answer: neither its
    text (spacing aside) nor, for a number, any value within 5 % of it."""
    for problem in (sample if layout == "long" else wide_sample).values():
        text = physelite.prompts.hint(problem, hint_suite(mode))
        answer = problem.answers[0].value
        assert text and text in problem.solution, (problem.id, problem.language)
        assert answer.replace(" ", "") not in text.replace(" ", "").replace("$", "")
        assert answer.split("=")[-1].replace(" ", "") not in text.replace(" ", "")
        value = to_number(answer)
        assert value is None or not any(abs(n - value) <= 0.05 * value for n in numbers_in(text)), (problem.id, text)


def test_a_step_that_states_the_answer_is_left_out_of_the_hint(sample):
    problem = sample[("PE-S-0003", "en")]
    early = dataclasses.replace(problem, solution="Step 1: set up.\nStep 2: so K = 279.7 MeV.\nStep 3: rounded.")
    assert physelite.prompts.hint(early, hint_suite("without_result")) == "Step 1: set up."
    assert (
        physelite.prompts.hint(dataclasses.replace(early, solution="K = 280 MeV at once."), hint_suite("first_step"))
        == ""
    )


@pytest.mark.parametrize(
    "text, answer, stated",
    [
        ("so $x = 24\\ \\mathrm{m}$", "24 m", True),
        ("t = 2.0 s and h = \\frac{1}{2} g t^2", "24 m", False),
        ("K = 270.0 + 9.7", "280 MeV", True),  # 3.6 % off: within the protocol's 5 %
        ("\\approx 2.8 \\times 10^{2}", "280 MeV", True),
        ("h = \\frac{1}{2} g t^2", "2", False),  # a 2 in a fraction is no result
        ("r = \\frac{1}{B} \\sqrt{\\frac{2 m U}{q}}", "r = \\frac{1}{B}\\sqrt{\\frac{2 m U}{q}}", True),
        ("r = \\frac{m v}{q B}", "r = \\frac{1}{B}\\sqrt{\\frac{2 m U}{q}}", False),
        ("(2) gives T = 3.2 h", "(1) T = \\pi L; (2) 3.2 h", True),  # one part of a multi-part answer
        ("anything at all", "", False),
    ],
)
def test_states_answer(text, answer, stated):
    assert physelite.prompts.states_answer(text, answer) is stated


@pytest.mark.parametrize("old", [True, "yes"])
def test_an_old_boolean_hint_is_refused_naming_the_key(old):
    with pytest.raises(InputError, match=r"suite 'test' \(conf/suite/test.yaml or an override\): hint: "):
        typed("physelite", hint=old)


@pytest.mark.parametrize(
    "pid, response, correct",
    [
        ("PE-S-0001", "x = v_0 t\nFINAL ANSWER: 24 m", True),
        ("PE-S-0001", "FINAL ANSWER: 25 m", True),  # 4.2 % off: within PhysElite's 5 %
        ("PE-S-0001", "FINAL ANSWER: 26 m", False),
        ("PE-S-0001", "The ball lands 24 m away.", False),  # no FINAL ANSWER line
        ("PE-S-0002", "FINAL ANSWER: r = \\frac{\\sqrt{2 m U / q}}{B}", True),
        ("PE-S-0002", "FINAL ANSWER: r = \\frac{1}{B}\\sqrt{\\frac{m U}{q}}", False),
        ("PE-S-0003", "FINAL ANSWER: K_{th} = 279.7 MeV", True),
        ("PE-S-0003", "FINAL ANSWER: 270 MeV", True),  # 3.6 % off
        ("PE-S-0003", "FINAL ANSWER: 135 MeV", False),
    ],
)
def test_score(sample, pid, response, correct):
    result = by_rules(PHYSELITE, sample[(pid, "en")], response, check)
    assert result.score == (1.0 if correct else 0.0)
    assert result.verdict == ("correct" if correct else "incorrect")


@pytest.mark.parametrize("pid", ["PE-S-0001", "PE-S-0002", "PE-S-0003"])
def test_reference_response_is_correct(sample, pid):
    problem = sample[(pid, "zh")]
    assert by_rules(PHYSELITE, problem, PHYSELITE.reference(problem, None), check).score == 1.0


# ---------------------------------------------------------------- the Hub's Parquet layout


IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])  # the `datasets` Image feature
HUB_SCHEMA = pa.schema(
    [
        ("problem_id", pa.string()),
        ("language", pa.string()),
        ("problem_text", pa.string()),
        ("problem_answer", pa.string()),
        ("problem_solution", pa.string()),
        ("images", pa.list_(IMAGE)),
        ("process_images", pa.list_(IMAGE)),
        ("difficulty", pa.int64()),
        ("subject", pa.list_(pa.string())),
    ]
)


def hub_rows(names: bool = True) -> list[dict]:
    """The sample's rows as the Hub stores them: every figure's bytes embedded in a struct whose
    `path` is the file's name (or null, as when a release was built from in-memory images)."""
    embed = lambda relative: {"bytes": (SAMPLE / relative).read_bytes(), "path": relative if names else None}  # noqa: E731
    return [
        {
            **row,
            "images": [embed(n) for n in row.get("images", [])],
            "process_images": [embed(n) for n in row["process_images"]] if "process_images" in row else None,
            "subject": row["subject"] if isinstance(row["subject"], list) else [row["subject"]],
        }  # one list column
        for row in sample_rows()
    ]


def write_hub_release(root: Path, rows: list[dict], shards=(4,), schema=HUB_SCHEMA) -> list[Path]:
    """`root/data/test-0000i-of-0000n.parquet`: the rows split at the `shards` offsets; no images
    folder, the figures live only inside the Parquet files. shards=None: one `test.parquet`."""
    (root / "data").mkdir(parents=True)
    if shards is None:
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), root / "data" / "test.parquet")
        return [root / "data" / "test.parquet"]
    bounds = [0, *shards, len(rows)]
    paths = []
    for i, (start, stop) in enumerate(zip(bounds, bounds[1:])):
        paths.append(root / "data" / f"test-{i:05d}-of-{len(bounds) - 1:05d}.parquet")
        pq.write_table(pa.Table.from_pylist(rows[start:stop], schema=schema), paths[-1])
    return paths


def summary(problem: Problem) -> tuple:
    return (
        problem.id,
        problem.language,
        problem.question,
        problem.answers,
        problem.solution,
        problem.level,
        problem.subject,
        problem.subset,
        problem.group,
        [(f.sha256, f.role, f.mime) for f in problem.figures],
    )


def test_hub_fixture_has_no_image_files(tmp_path):
    write_hub_release(tmp_path, hub_rows())
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        "data/test-00000-of-00002.parquet",
        "data/test-00001-of-00002.parquet",
    ]


@pytest.mark.parametrize("shards", [(4,), (1, 3, 5), None], ids=["two-shards", "four-shards", "single-file"])
def test_hub_parquet_gives_the_same_problems_as_the_jsonl_sample(tmp_path, shards):
    write_hub_release(tmp_path, hub_rows(), shards=shards)
    from_hub = load_release(PHYSELITE, tmp_path, CFG, "sample_physelite")
    from_jsonl = load_release(PHYSELITE, SAMPLE, CFG, "sample_physelite")
    assert [summary(p) for p in from_hub] == [summary(p) for p in from_jsonl]  # the release's row order too
    assert [[f.name for f in p.figures] for p in from_hub] == [[f.name for f in p.figures] for p in from_jsonl]
    assert all(type(p.level) is int for p in from_hub)  # plain Python, not numpy


def test_embedded_figures_are_written_once_by_content_hash(tmp_path):
    """Into the store the fetch stage hands the loader: no temporary file of the benchmark's."""
    write_hub_release(tmp_path, hub_rows())
    store = FigureStore(tmp_path / "figures")
    problems = {(p.id, p.language): p for p in PHYSELITE.load(tmp_path, CFG, "p", store)}
    figures = [f for p in problems.values() for f in p.figures]
    assert {Path(f.path).parent for f in figures} == {tmp_path / "figures"}
    assert sorted(tmp_path.iterdir()) == [tmp_path / "data", tmp_path / "figures"]
    for figure in figures:
        path = Path(figure.path)
        assert path.name == f"{figure.sha256}.png"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == figure.sha256
    assert problems[("PE-S-0002", "en")].figures == problems[("PE-S-0002", "zh")].figures
    assert len({f.path for f in figures}) == 3


def test_embedded_figures_without_a_path_are_named_by_problem_and_position(tmp_path):
    write_hub_release(tmp_path, hub_rows(names=False))
    problems = {(p.id, p.language): p for p in load_release(PHYSELITE, tmp_path, CFG, "p")}
    assert [(f.name, f.role) for f in problems[("PE-S-0002", "zh")].figures] == [
        ("PE-S-0002_1", "schematic"),
        ("PE-S-0002_2", "process"),
    ]
    assert [f.name for f in problems[("PE-S-0001", "en")].figures] == ["PE-S-0001_1"]


def test_the_fetch_stage_leaves_no_temporary_folder_of_a_parquet_release(tmp_path):
    """The embedded figures' folder goes when the stage ends, although a stage ends at once
    (`stage.run`), without the interpreter's teardown."""
    write_hub_release(tmp_path / "release", hub_rows())
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    plan = tmp_path / "params.yaml"  # the release's folder is the plan's, as its fetch checks
    plan.write_text(
        json.dumps(
            {
                "models": [],
                "judges": [],
                "pipelines": {
                    "physelite": {"benchmarks": {"sample_physelite": str(tmp_path / "release")}, "suites": {}}
                },
            }
        ),
        encoding="utf-8",
    )
    result = subprocess.run(
        [
            sys.executable,
            "stages/fetch.py",
            "benchmark=sample_physelite",
            f"paths.plan={plan}",
            f"benchmark.source.path={tmp_path / 'release'}",
            f"paths.outputs={tmp_path / 'outputs'}",
        ],
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(scratch)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(list((tmp_path / "outputs/problems/sample_physelite/figures").iterdir())) == 3
    assert list(scratch.iterdir()) == []


def test_parquet_of_the_split_wins_and_other_splits_are_ignored(tmp_path):
    rows = hub_rows()
    write_hub_release(tmp_path, rows)
    pq.write_table(
        pa.Table.from_pylist(rows[:1], schema=HUB_SCHEMA), tmp_path / "data" / "train-00000-of-00001.parquet"
    )
    pq.write_table(
        pa.Table.from_pylist(rows[:1], schema=HUB_SCHEMA), tmp_path / "data" / "test-hard-00000-of-00001.parquet"
    )
    (tmp_path / "data" / "test.jsonl").write_text(json.dumps(sample_rows()[0]) + "\n", encoding="utf-8")
    assert len(load_release(PHYSELITE, tmp_path, CFG, "p")) == 6
    train = load_release(PHYSELITE, tmp_path, OmegaConf.merge(CFG, {"split": "train"}), "p")
    assert [(p.id, p.language) for p in train] == [("PE-S-0001", "en")]


def local(cfg, path: Path):
    return OmegaConf.merge(cfg, {"source": {"type": "local", "path": str(path)}})


def test_fetch_of_the_hub_layout_matches_the_jsonl_sample_and_stores_each_figure_once(tmp_path):
    write_hub_release(tmp_path / "release", hub_rows())
    hub_out, jsonl_out = tmp_path / "hub" / "problems", tmp_path / "jsonl" / "problems"
    stored = fetch("sample_physelite", local(CFG, tmp_path / "release"), hub_out)
    fetch("sample_physelite", local(CFG, SAMPLE), jsonl_out)
    figures = sorted(p.name for p in (hub_out / "figures").iterdir())
    assert figures == sorted({f"{f.sha256}.png" for p in stored for f in p.figures}) and len(figures) == 3
    for name in figures:
        assert hashlib.sha256((hub_out / "figures" / name).read_bytes()).hexdigest() == name.removesuffix(".png")
    assert all(Path(f.path).parent == hub_out / "figures" for p in stored for f in p.figures)
    # the same records, byte for byte, once the output folder's path and each row's origin are set aside
    hub_text = (hub_out / "problems.jsonl").read_text(encoding="utf-8")
    jsonl_text = (jsonl_out / "problems.jsonl").read_text(encoding="utf-8")
    assert re.findall(r'"origin":"data/test-\d{5}-of-\d{5}\.parquet:row \d+"', hub_text)
    normal = lambda text, out: re.sub(r'"origin":"[^"]*"', "", text.replace(out.as_posix(), "OUT"))  # noqa: E731
    assert normal(hub_text, hub_out) == normal(jsonl_text, jsonl_out)
    assert sorted(p.name for p in (jsonl_out / "figures").iterdir()) == figures


RENAMED = {
    "problem_id": "pid",
    "problem_text": "question",
    "problem_answer": "final_answer",
    "problem_solution": "solution",
    "images": "schematic_images",
    "process_images": "process_diagrams",
    "difficulty": "level",
    "language": "lang",
    "subject": "topic",
}


def test_renamed_hub_columns_are_followed_by_the_fields_mapping(tmp_path):
    rows = [{RENAMED.get(k, k): v for k, v in row.items()} for row in hub_rows()]
    schema = pa.schema([(RENAMED.get(f.name, f.name), f.type) for f in HUB_SCHEMA])
    write_hub_release(tmp_path, rows, schema=schema)
    with pytest.raises(RecordError) as caught:  # the sample's mapping no longer fits
        load_release(PHYSELITE, tmp_path, CFG, "p")
    assert caught.value.field == "problem_id"
    fields = {ours: RENAMED[theirs] for ours, theirs in CFG.fields.items()}
    cfg = OmegaConf.merge(CFG, {"fields": fields})
    from_jsonl = load_release(PHYSELITE, SAMPLE, CFG, "p")
    assert [summary(p) for p in load_release(PHYSELITE, tmp_path, cfg, "p")] == [summary(p) for p in from_jsonl]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_hub_layout_renders_like_the_jsonl_sample(tmp_path, language):
    write_hub_release(tmp_path / "release", hub_rows())
    suite = f"sample_physelite_{language}"
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base=None):
        cfg = compose(config_name="render", overrides=[f"suite={suite}", "cell.benchmark=sample_physelite"])
    prompts = {}
    for name, root in (("hub", tmp_path / "release"), ("jsonl", SAMPLE)):
        fetch("sample_physelite", local(CFG, root), tmp_path / name / "problems")
        rendered = render(
            suite,
            cfg.suite,
            "sample_physelite",
            tmp_path / name / "problems" / "problems.jsonl",
            tmp_path / name / "suite",
        )
        prompts[name] = {p.id: p for p in rendered}
    assert sorted(prompts["hub"]) == ["PE-S-0001", "PE-S-0002", "PE-S-0003"]
    assert {p.language for p in prompts["hub"].values()} == {language}
    for pid, prompt in prompts["hub"].items():
        assert prompt.prompt_hash == prompts["jsonl"][pid].prompt_hash
        assert prompt.reference == prompts["jsonl"][pid].reference
        images = [
            part for m in prompt.messages for part in m["content"] if isinstance(part, dict) and part["type"] == "image"
        ]
        assert [Path(i["path"]).parent for i in images] == [tmp_path / "hub" / "problems" / "figures"] * len(images)
        assert all(Path(i["path"]).is_file() for i in images)
    assert len(read_jsonl(tmp_path / "hub" / "suite" / "problems.jsonl", Problem)) == 3


@pytest.mark.parametrize(
    "column, row, shard, index",
    [
        ("problem_id", 3, 0, 3),
        ("language", 4, 1, 0),  # rows are counted from 0 within each shard
        ("problem_text", 5, 1, 1),
        ("problem_answer", 1, 0, 1),
    ],
)
def test_missing_hub_value_names_shard_row_record_and_column(tmp_path, column, row, shard, index):
    rows = hub_rows()
    rows[row][column] = None
    paths = write_hub_release(tmp_path, rows)
    with pytest.raises(RecordError) as caught:
        load_release(PHYSELITE, tmp_path, CFG, "p")
    assert caught.value.path == f"{paths[shard]}:row {index}"
    assert caught.value.record == ("?" if column == "problem_id" else rows[row]["problem_id"])
    assert caught.value.field == column


def test_missing_hub_column_names_the_first_row_and_the_column(tmp_path):
    schema = pa.schema([f for f in HUB_SCHEMA if f.name != "problem_answer"])
    paths = write_hub_release(
        tmp_path, [{k: v for k, v in r.items() if k != "problem_answer"} for r in hub_rows()], schema=schema
    )
    with pytest.raises(RecordError) as caught:
        load_release(PHYSELITE, tmp_path, CFG, "p")
    assert (caught.value.path, caught.value.record, caught.value.field) == (
        f"{paths[0]}:row 0",
        "PE-S-0001",
        "problem_answer",
    )


@pytest.mark.parametrize(
    "column, data",
    [
        ("images", b"this is not an image"),
        ("process_images", b"\x89PNG\r\n\x1a\n but then garbage"),
        ("process_images", (SAMPLE / "images" / "PE-S-0002_process.png").read_bytes()[:200]),  # truncated
        ("images", b""),
    ],
    ids=["text", "png-signature-only", "truncated-png", "empty"],
)
def test_embedded_bytes_that_are_no_image_name_shard_row_record_and_column(tmp_path, column, data):
    rows = hub_rows()
    rows[3][column] = [{"bytes": data, "path": None}]
    paths = write_hub_release(tmp_path, rows)
    with pytest.raises(RecordError, match="not a readable image") as caught:
        load_release(PHYSELITE, tmp_path, CFG, "p")
    assert (caught.value.path, caught.value.record, caught.value.field) == (f"{paths[0]}:row 3", "PE-S-0002", column)


def test_image_struct_with_neither_bytes_nor_path_names_its_column(tmp_path):
    rows = hub_rows()
    rows[4]["images"] = [{"bytes": None, "path": None}]
    paths = write_hub_release(tmp_path, rows)
    with pytest.raises(RecordError, match="neither a path nor image bytes") as caught:
        load_release(PHYSELITE, tmp_path, CFG, "p")
    assert (caught.value.path, caught.value.record, caught.value.field) == (f"{paths[1]}:row 0", "PE-S-0003", "images")


def test_null_difficulty_in_parquet_is_no_level_and_the_others_stay_ints(tmp_path):
    rows = hub_rows()
    rows[0]["difficulty"] = None  # pandas reads the column as float64 with a NaN here
    write_hub_release(tmp_path, rows)
    levels = [p.level for p in load_release(PHYSELITE, tmp_path, CFG, "p")]
    assert levels == [None, 2, 4, 4, 6, 6] and all(type(level) is int for level in levels[1:])


def test_null_id_in_jsonl_is_named_as_missing(tmp_path):
    rows = sample_rows()
    rows[1]["problem_id"] = None
    path = write_release(tmp_path, rows)
    with pytest.raises(RecordError) as caught:
        load_release(PHYSELITE, tmp_path, CFG, "p")
    assert (caught.value.path, caught.value.record, caught.value.field) == (f"{path}:2", "?", "problem_id")


# ---------------------------------------------------------------- the paper's wide layout (appendix C.2)


def test_wide_sample_loads_to_the_same_problems_as_the_long_sample():
    from_wide = load_release(PHYSELITE, WIDE_SAMPLE, WIDE_CFG, "sample_physelite")
    from_long = load_release(PHYSELITE, SAMPLE, CFG, "sample_physelite")
    assert [summary(p) for p in from_wide] == [summary(p) for p in from_long]
    assert [[f.name for f in p.figures] for p in from_wide] == [[f.name for f in p.figures] for p in from_long]
    assert [p.origin for p in from_wide] == [f"data/test.jsonl:{line}" for line in (1, 1, 2, 2, 3, 3)]


def test_wide_sample_has_the_papers_columns():
    columns = list(json.loads((WIDE_SAMPLE / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()[0]))
    assert columns == [
        "problem_id",
        "problem_text_cn",
        "problem_text_en",
        "problem_solution_cn",
        "problem_solution_en",
        "problem_answer",
        "problem_img",
        "problem_img_process",
        "subject",
        "difficulty",
    ]


def test_fetch_of_the_wide_layout_writes_the_same_records_as_the_long_one(tmp_path):
    wide_out, long_out = tmp_path / "wide", tmp_path / "long"
    fetch("sample_physelite", WIDE_CFG, wide_out)
    fetch("sample_physelite", CFG, long_out)

    def normal(out):
        return re.sub(
            r'"origin":"[^"]*"', "", (out / "problems.jsonl").read_text(encoding="utf-8").replace(out.as_posix(), "OUT")
        )

    assert normal(wide_out) == normal(long_out)


def wide_rows() -> list[dict]:
    return [json.loads(line) for line in (WIDE_SAMPLE / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()]


def test_wide_parquet_with_embedded_figures_loads_like_the_wide_jsonl(tmp_path):
    embed = lambda names: [{"bytes": (WIDE_SAMPLE / n).read_bytes(), "path": n} for n in names]  # noqa: E731
    as_list = lambda subject: subject if isinstance(subject, list) else [subject]  # noqa: E731
    rows = [
        {
            **row,
            "problem_img": embed(row["problem_img"]),
            "problem_img_process": embed(row["problem_img_process"]),
            "subject": as_list(row["subject"]),
        }
        for row in wide_rows()
    ]
    (tmp_path / "data").mkdir()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "data" / "test-00000-of-00001.parquet")
    from_parquet = load_release(PHYSELITE, tmp_path, WIDE_CFG, "sample_physelite")
    assert [summary(p) for p in from_parquet] == [
        summary(p) for p in load_release(PHYSELITE, WIDE_SAMPLE, WIDE_CFG, "s")
    ]


@pytest.mark.parametrize("column", ["problem_text_cn", "problem_text_en", "problem_answer"])
def test_missing_wide_column_names_file_line_record_and_the_languages_column(tmp_path, column):
    rows = wide_rows()
    del rows[1][column]
    path = write_release(tmp_path, rows, WIDE_SAMPLE)
    with pytest.raises(RecordError) as caught:
        load_release(PHYSELITE, tmp_path, WIDE_CFG, "p")
    assert (caught.value.path, caught.value.record, caught.value.field) == (f"{path}:2", "PE-S-0002", column)


def test_wide_layout_answers_may_be_per_language_columns(tmp_path):
    rows = wide_rows()
    for row in rows:
        answer = row.pop("problem_answer")
        row["problem_answer_en"], row["problem_answer_cn"] = answer, f"{answer} (zh)"
    write_release(tmp_path, rows, WIDE_SAMPLE)
    cfg = OmegaConf.merge(WIDE_CFG, {"fields": {"answer": "problem_answer_{language}"}})
    answers = {(p.id, p.language): p.answers[0].value for p in load_release(PHYSELITE, tmp_path, cfg, "p")}
    assert answers[("PE-S-0001", "en")] == "24 m" and answers[("PE-S-0001", "zh")] == "24 m (zh)"


@pytest.mark.parametrize(
    "change, message",
    [
        ({"layout": "tall"}, "layout must be one of long, wide"),
        ({"languages": None}, "the wide layout needs `languages`"),
        ({"fields": {"text": "problem_text_en", "solution": "problem_solution_en"}}, "must name per-language columns"),
    ],
)
def test_wide_layout_config_errors_say_what_to_set(change, message):
    cfg = OmegaConf.merge(WIDE_CFG, change)
    with pytest.raises(InputError, match=message):
        load_release(PHYSELITE, WIDE_SAMPLE, cfg, "p")


# ---------------------------------------------------------------- empty answers and several subjects


def test_empty_reference_answer_is_valid_and_the_judge_is_told_to_use_the_solution(tmp_path):
    rows = sample_rows()
    rows[0]["problem_answer"] = ""
    write_release(tmp_path, rows)
    problem = load_release(PHYSELITE, tmp_path, CFG, "p")[0]
    assert problem.answers[0].value == ""
    settings = scoring(
        PHYSELITE,
        prompts={
            "answer": OmegaConf.load(REPO / "conf" / "prompt" / "physelite_answer_judge.yaml"),
            "process": OmegaConf.load(REPO / "conf" / "prompt" / "physelite_process_judge.yaml"),
        },
    )
    task = PHYSELITE.judge_tasks(problem, "FINAL ANSWER: 24 m", settings)[0]
    text = task.messages[1]["content"]
    assert f"Reference Answer\n\n\nReference Solution\n{problem.solution}\n" in text
    assert "When the reference answer is empty, extract the correct result from the reference solution." in text
    ruled = by_rules(PHYSELITE, problem, "FINAL ANSWER: 24 m", check)
    assert ruled.unscorable == physelite.scoring.NO_REFERENCE  # a judge error for the rule judge, never a silent 0
    assert PHYSELITE.reference(problem, None) == f"Reference derivation.\n{problem.solution}"
    assert physelite.prompts.hint(problem, hint_suite("without_result")) == "\n".join(problem.solution.splitlines()[:2])


def test_a_problem_counts_under_each_of_its_subjects(sample):
    problem = sample[("PE-S-0003", "zh")]
    assert physelite.loading.subjects_of(problem.subject) == ["Modern Physics", "Mechanics"]
    assert physelite.loading.subjects_of("") == [] and physelite.loading.subjects_of("Optics") == ["Optics"]


def test_a_subject_with_the_separator_in_it_is_refused(tmp_path):
    rows = sample_rows()
    rows[2]["subject"] = ["Optics; Waves"]
    path = write_release(tmp_path, rows)
    with pytest.raises(RecordError, match="separates subjects") as caught:
        load_release(PHYSELITE, tmp_path, CFG, "p")
    assert (caught.value.path, caught.value.field) == (f"{path}:3", "subject")


def test_the_report_shows_each_judge_s_verdict_and_graded_steps_and_the_rules_verdict_without_judges():
    from olympiad_eval.core.records import Judgment, Problem

    problem = Problem(id="1", benchmark="b", language="zh", question="q")
    common = dict(
        id="1",
        suite="s",
        model="m",
        sample=0,
        language="zh",
        subset="",
        status="scored",
        score=1.0,
        points=1.0,
        max_points=1.0,
        verdict="correct",
    )
    judged = Judgment(
        **common,
        judge="ensemble",
        parts={"process": 0.5},
        details=(
            {
                "judge": "a",
                "answer": {"verdict": "correct", "reasoning": "ok"},
                "process": {"steps": [{"step": "s1", "grade": 1}, {"step": "s2", "grade": 0}]},
            },
        ),
    )
    verdicts, steps = PHYSELITE.report_sections(problem, judged)
    assert verdicts.css == "verdicts" and verdicts.tables[0].rows == (("a", "correct", "ok", "", ""),)
    assert ("process score", "0.5 (mean over the judges)") in verdicts.facts
    assert steps.tables[0].css == "steps" and steps.tables[0].rows == (("a", 1, "s1", 1), ("a", 2, "s2", 0))
    [rules] = PHYSELITE.report_sections(problem, Judgment(**common, judge="rule", detail=""))
    assert rules.tables[0].rows[0][:2] == ("rule", "correct")
