"""The static HTML report: built from a real small run, checked as text and in a headless browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from olympiad_eval.generate import generate
from olympiad_eval.judging import judge
from olympiad_eval.layout import Layout
from olympiad_eval.records import Prompt, read_jsonl
from olympiad_eval.report import write_report
from olympiad_eval.tables import aggregate
from tests.support import ROOT, compose_stage

SUITE = BENCHMARK = "sample_hipho"
MODELS = {"reference": {"provider": "reference"},
          "demo": {"provider": "replay", "path": str(ROOT / "data/replay/demo/{suite}.jsonl")}}
PLAN = {"benchmarks": [BENCHMARK], "suites": {SUITE: BENCHMARK}, "models": list(MODELS), "judges": ["rule"],
        "family": {BENCHMARK: "hipho"}}


class _Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.sources.append(dict(attrs)["src"])


def images_of(html: str) -> list[str]:
    parser = _Images()
    parser.feed(html)
    return parser.sources


def real_run(render_suite, *overrides: str) -> Layout:
    """A real run of one suite (with Hydra `overrides` of it) with both models and the rule judge;
    returns its layout."""
    layout = Layout(render_suite(SUITE, BENCHMARK, *overrides))
    judge_cfg = compose_stage("judge", ["judge=rule", f"cell.suite={SUITE}", "cell.model=x"]).judge
    for model, cfg in MODELS.items():
        generations = layout.generations("hipho", SUITE, model)
        generate(SUITE, model, OmegaConf.create(cfg), layout.prompts(SUITE), generations, layout.root.parent / "cache.sqlite")
        judge(layout.suite(SUITE), generations, "rule", judge_cfg, layout.judgments("hipho", SUITE, model, "rule"),
              layout.root.parent / "cache.sqlite")
    bench_cfg = compose_stage("aggregate", [f"benchmark={BENCHMARK}"]).benchmark
    suites = {SUITE: compose_stage("render", [f"suite={SUITE}", f"cell.benchmark={BENCHMARK}", *overrides]).suite}
    aggregate(BENCHMARK, bench_cfg, PLAN, layout, suites=suites)
    return layout


@pytest.fixture
def run(render_suite):
    return real_run(render_suite)


@pytest.fixture
def report(run):
    write_report(PLAN, run)
    return run.report()


def test_the_report_shows_tables_links_problems_responses_and_figures(run, report):
    index = (report / "index.html").read_text(encoding="utf-8")
    assert "<table" in index and "exam scores" in index and "DemoCPhO_2025" in index
    assert "100.00" in index  # the reference model's score, formatted
    for model in MODELS:
        assert f'href="{SUITE}__{model}.html"' in index
        assert (report / f"{SUITE}__{model}.html").is_file()
    # comparisons are made on demand, outside the pipeline: the report links the page that lists them
    assert '<a href="../comparisons/index.html">' in index

    ids = [p.id for p in read_jsonl(run.prompts(SUITE), Prompt)]
    demo = (report / f"{SUITE}__demo.html").read_text(encoding="utf-8")
    for problem_id in ids:
        assert f"<h2>{problem_id}</h2>" in demo
    assert "180" in demo  # the demo's (wrong) answer to DemoCPhO_2025_1_1
    assert "&lt;answer&gt;" in demo and "<answer>" not in demo and "<think>" not in demo
    assert "status: scored" in demo and "<th>expected</th>" in demo

    sources = images_of(demo)
    assert sources, "the sample has figures"
    for src in sources:
        assert re.fullmatch(r"figures/[0-9a-f]{64}\.(png|jpg|jpeg|gif|webp)", src)
        assert (report / src).is_file()
    assert sorted(p.name for p in (report / "figures").iterdir()) == sorted({Path(s).name for s in sources})


def test_a_partial_run_says_so_in_the_index_its_tables_and_its_pages(render_suite):
    layout = real_run(render_suite, "suite.limit=2")
    write_report(PLAN, layout)
    index = (layout.report() / "index.html").read_text(encoding="utf-8")
    note = "sample_hipho: 2 of 5 problems (limit 2)"
    assert f'<h2 id="{BENCHMARK}">{BENCHMARK}</h2>\n<p class="partial"><b>partial:</b> {note}</p>' in index
    assert "<th>partial</th>" in index and index.count("<td>2 of 5 problems (limit 2)</td>") >= 2  # the tables' column
    for model in MODELS:
        page = (layout.report() / f"{SUITE}__{model}.html").read_text(encoding="utf-8")
        assert "2 problems</p>\n<p class=\"partial\"><b>partial:</b> 2 of 5 problems (limit 2)</p>" in page


def test_a_whole_run_says_nothing_of_parts(report):
    assert "partial" not in (report / "index.html").read_text(encoding="utf-8")


def test_the_report_is_byte_stable(run, report):
    first = {p.relative_to(report): p.read_bytes() for p in sorted(report.rglob("*")) if p.is_file()}
    write_report(PLAN, run)
    second = {p.relative_to(report): p.read_bytes() for p in sorted(report.rglob("*")) if p.is_file()}
    assert first == second


def test_the_report_shows_the_tables_its_index_lists_in_that_order(run):
    """The index that aggregate writes is what the report reads: never tables.md's headings."""
    index_path = run.table_index(BENCHMARK)
    index = json.loads(index_path.read_text(encoding="utf-8"))
    index["tables"] = [{**entry, "title": f"table {entry['name']}"} for entry in reversed(index["tables"][:2])]
    index_path.write_text(json.dumps(index), encoding="utf-8")
    (run.tables(BENCHMARK) / index["all"]).unlink()
    write_report(PLAN, run)
    headings = re.findall(r"<h3>(.*)</h3>", (run.report() / "index.html").read_text(encoding="utf-8"))
    assert headings == ["table exam_scores", "table summary", "Responses"]


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no chromium binary found (install the Debian package `chromium`) for the headless browser check")


def browser(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=60, check=False)


def test_the_report_renders_in_a_headless_browser(run, report, tmp_path):
    from PIL import Image

    binary = chromium()
    shot = tmp_path / "index.png"
    done = browser(binary, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,900",
                   (report / "index.html").as_uri())
    assert shot.is_file(), f"no screenshot: rc {done.returncode}\n{done.stderr[-2000:]}"
    with Image.open(shot) as image:
        assert image.size == (1280, 900)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colours is None or len(colours) > 10, "the screenshot is blank"

    done = browser(binary, tmp_path / "profile2", "--dump-dom", (report / f"{SUITE}__demo.html").as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    for problem_id in (p.id for p in read_jsonl(run.prompts(SUITE), Prompt)):
        assert problem_id in dom
    sources = images_of(dom)
    assert sources and all((report / src).is_file() for src in sources)


def test_judge_details_are_rendered_escaped():
    from olympiad_eval.records import Judgment
    from olympiad_eval.report import _judgment_html

    judgment = Judgment(
        id="P1", suite="s", model="m", judge="gpt-4o", sample=0, language="en", subset="", status="scored",
        score=0.5, points=1.0, max_points=2.0, verdict="correct", parts={"answer_points": 0.5, "step_points": None},
        details=({"judge": "gpt-4o", "criterion 0.0": {"awarded": 1.0, "reasoning": "uses <b>F=ma</b>"},
                  "process": {"steps": [{"grade": 1, "step": "a<b"}]}},))
    html = _judgment_html("gpt-4o", judgment)
    assert "criterion 0.0" in html and "awarded" in html and "uses &lt;b&gt;F=ma&lt;/b&gt;" in html
    assert "<b>F=ma" not in html and "a&lt;b" in html and "verdict: correct" in html
    assert "points: 1 of 2" in html
    assert "<li>answer points: 0.5</li>" in html and "step points" not in html  # a part it lacks is not shown


def test_a_page_pairs_records_by_id_in_natural_order_streaming_each_cell(tmp_path):
    """A page reads the cell's files side by side (all sorted by natural key): a prompt without a
    generation says so, records of ids not in the suite are skipped, "2" comes before "10"."""
    from olympiad_eval.records import Generation, Judgment, write_jsonl
    from olympiad_eval.report import _model_page, _Suite

    prompts = [Prompt(id=i, suite="s", language="en", messages=({"role": "user", "content": f"question {i}"},),
                      prompt_hash=i) for i in ("1", "2", "10")]
    generations = [Generation(id=i, suite="s", model="m", sample=n, response=f"answer {i}/{n}", request_hash="h")
                   for i in ("2", "7", "10") for n in (0, 1)]
    judgments = [Judgment(id=g.id, suite="s", model="m", judge="rule", sample=g.sample, language="en", subset="",
                          status="scored", score=1.0, points=1.0, max_points=1.0, detail=f"graded {g.id}/{g.sample}")
                 for g in generations if g.id != "10" or g.sample == 0]
    layout = Layout(tmp_path / "outputs")
    write_jsonl(layout.prompts("s"), prompts)
    write_jsonl(layout.generations("f", "s", "m"), generations)
    write_jsonl(layout.judgments("f", "s", "m", "rule"), judgments)
    page = "\n".join(_model_page(_Suite("s", "b", "f", layout), "m", ["rule"], layout.prompts("s"), tmp_path, {}))
    sections = page.split('<section class="problem"')[1:]
    assert [re.search(r"<h2>(\w+)</h2>", s).group(1) for s in sections] == ["1", "2", "10"]
    assert ["no generation" in section for section in sections] == [True, False, False]
    assert "answer 7" not in page and "graded 7" not in page
    assert sections[1].count("graded 2/") == 2 and "graded 10/0" in sections[2]
    assert sections[2].count("no judgment") == 1  # sample 1 of problem 10 was not judged
