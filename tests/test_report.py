"""The report: built from a real small run and checked as text (the pages in a real browser are
tests/test_report_browser.py's)."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin
from olympiad_eval.cli.fake_server import FakeOpenAI
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import (
    AnswerSlot,
    Conversation,
    Criterion,
    Generation,
    Judgment,
    Problem,
    Prompt,
    SuiteInfo,
    read_jsonl,
    write_json,
    write_jsonl,
    write_suite_info,
)
from olympiad_eval.llm.cache import utc_now
from olympiad_eval.report import write_cell_pages, write_report, write_side
from olympiad_eval.report.cell import MARKS, _Budget, conversation_html, judgment_html, received_text, status_label
from olympiad_eval.report.html import answers_html
from olympiad_eval.report.tables import collapsed, intervals, table_html
from olympiad_eval.stages.aggregate import aggregate
from olympiad_eval.stages.generate import generate
from olympiad_eval.stages.judge import judge
from tests.support import ROOT, compose_stage, render_sample

HIPHO = plugin("hipho")
PHYSELITE = plugin("physelite")

SUITE = BENCHMARK = "sample_hipho"
FAMILY = "hipho"
MODELS = {
    "reference": {"provider": "reference"},
    "demo": {"provider": "replay", "path": str(ROOT / "data/replay/demo/{suite}.jsonl")},
}
PLAN = {
    "benchmarks": [BENCHMARK],
    "suites": {SUITE: BENCHMARK},
    "models": list(MODELS),
    "judges": ["rule"],
    "family": {BENCHMARK: "hipho"},
}
MB = 1 << 20


class _Tags(HTMLParser):
    """Every start tag with its attributes, in order."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(html: str, name: str | None = None) -> list[dict]:
    parser = _Tags()
    parser.feed(html)
    return [attrs for tag, attrs in parser.tags if name is None or tag == name]


def real_run(render_suite, *overrides: str) -> Layout:
    """A real run of one suite (with Hydra `overrides` of it) with both models and the rule judge;
    returns its layout."""
    layout = Layout(render_suite(SUITE, BENCHMARK, *overrides))
    judge_cfg = compose_stage("judge", ["judge=rule", f"cell.suite={SUITE}", "cell.model=x"]).judge
    for model, cfg in MODELS.items():
        generations = layout.generations(FAMILY, SUITE, model)
        generate(
            SUITE,
            model,
            OmegaConf.create(cfg),
            layout.prompts(FAMILY, SUITE),
            generations,
            layout.root.parent / "cache.sqlite",
        )
        judge(
            layout.suite(FAMILY, SUITE),
            generations,
            "rule",
            judge_cfg,
            layout.judgments(FAMILY, SUITE, model, "rule"),
            layout.root.parent / "cache.sqlite",
        )
    bench_cfg = compose_stage("aggregate", [f"benchmark={BENCHMARK}"]).benchmark
    suites = {SUITE: compose_stage("render", [f"suite={SUITE}", f"cell.benchmark={BENCHMARK}", *overrides]).suite}
    aggregate(BENCHMARK, bench_cfg, PLAN, layout, suites=suites)
    return layout


def write_all(plan: dict, layout: Layout) -> None:
    """What `dvc repro` runs: every suite's side-by-side stage and cell's stage, then the root's."""
    for suite in plan["suites"]:
        write_side(plan, layout, suite)
        for model in plan["models"]:
            write_cell_pages(plan, layout, suite, model, MODELS.get(model, {}))
    write_report(plan, layout)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """The real run and its report, made once for the module: each test gets its own copy (`run`)."""
    outputs = tmp_path_factory.mktemp("written") / "outputs"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # configs name the bundled data relative to the repository
        layout = real_run(lambda suite, benchmark, *overrides: render_sample(outputs, suite, benchmark, *overrides))
        write_all(PLAN, layout)
    return outputs


@pytest.fixture
def run(written, tmp_path) -> Layout:
    """A copy of the module's run, its report written, for this test alone to read or change."""
    return Layout(shutil.copytree(written, tmp_path / "outputs"))


@pytest.fixture
def report(run):
    return run.report()


def files_of(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- the root index


def test_the_index_shows_metadata_charts_tables_and_a_link_per_cell(run, report):
    index = (report / "index.html").read_text(encoding="utf-8")
    assert "<table" in index and "exam scores" in index and "DemoCPhO_2025" in index
    assert "100.00" in index  # the reference model's score, formatted
    assert '<section class="metadata" id="metadata">' in index and "hipho olympiad_eval v5 (rules only)" in index
    assert index.count('<svg class="chart"') == 3  # score per model, per subset (one suite), and HiPhO's medals
    assert "score per model, with its 95% interval" in index and "medals" in index
    links = [a["href"] for a in tags(index, "a") if a.get("class") == "cell-link"]
    assert links == [f"cells/{FAMILY}/{SUITE}/{model}/index.html" for model in MODELS]
    assert all((report / link).is_file() for link in links)
    # comparisons are made on demand, outside the pipeline: the report links the page that lists them
    assert '<a href="../comparisons/index.html">' in index
    # the flips between the plan's first model and the others, as the comparison command finds them
    flips = [a["href"] for a in tags(index, "a") if a.get("class") == "flips-link"]
    assert flips == [f"compare/{SUITE}/flips__reference__vs__demo__rule.html"]
    page = (report / flips[0]).read_text(encoding="utf-8")
    assert "2 of 5 problems changed" in page and "DemoCPhO_2025_1_1" in page and "right → wrong" in page
    assert '<a href="../../side/sample_hipho/DemoCPhO_2025_1_1.html">' in page  # a flip's side-by-side page
    # the leaderboard first: every cell's score and link come before the first chart and table
    assert index.index('class="cell-link"') < index.index('<svg class="chart"') < index.index("exam scores")


def test_no_page_loads_anything_from_outside_the_report(report):
    for path in report.rglob("*.html"):
        page = path.read_text(encoding="utf-8")
        for attrs in tags(page):
            for name in ("src", "href"):
                link = attrs.get(name)
                if link and not link.startswith("#"):
                    assert "://" not in link and not link.startswith("//"), (path, link)
                    target = (path.parent / link.split("#")[0]).resolve()
                    inside = target.is_relative_to(report.resolve()) or link == "../comparisons/index.html"
                    assert inside and (target.exists() or link == "../comparisons/index.html"), (path, link)
    assert (report / "assets" / "mathjax" / "tex-svg-full.js").stat().st_size > 1 * MB  # copied from its package
    assert (report / "assets" / "mathjax" / "ui" / "safe.js").is_file()  # and its safe extension


def test_every_page_allows_only_the_reports_own_files_and_no_inline_script(report):
    """A Content-Security-Policy first in each page's head: scripts, images and fonts from the
    report's own files only, nothing remote, no inline script (the pages have none), no form, no
    frame, no base; and every script a page names is a file of the report."""
    pages = sorted(report.rglob("*.html"))
    assert pages
    for path in pages:
        page = path.read_text(encoding="utf-8")
        metas = [m for m in tags(page, "meta") if m.get("http-equiv") == "Content-Security-Policy"]
        assert len(metas) == 1, path
        policy = dict((part.split()[0], part.split()[1:]) for part in metas[0]["content"].split(";") if part.strip())
        assert policy["default-src"] == ["'none'"] and policy["script-src"] == ["'self'"], path
        assert policy["img-src"] == ["'self'"] and policy["connect-src"] == ["'none'"], path
        assert policy["base-uri"] == ["'none'"] and policy["form-action"] == ["'none'"], path
        assert page.index("Content-Security-Policy") < min(page.index("<script"), page.index("<link")), path
        assert all("src" in script for script in tags(page, "script")), f"{path}: an inline script"
        assert "<script>" not in page and " on" not in "".join(f" {name}" for attrs in tags(page) for name in attrs), (
            f"{path}: an inline script or event handler"
        )
        for script in tags(page, "script"):
            assert (path.parent / script["src"]).resolve().is_file(), (path, script["src"])


# ---------------------------------------------------------------- a cell's index and pages


def test_a_cell_index_has_a_row_per_problem_with_its_status_and_the_controls(run, report):
    ids = [p.id for p in read_jsonl(run.prompts(FAMILY, SUITE), Prompt)]
    index = (report / "cells" / FAMILY / SUITE / "demo" / "index.html").read_text(encoding="utf-8")
    rows = [attrs for attrs in tags(index, "tr") if attrs.get("class") == "problem-row"]
    assert [row["data-id"] for row in rows] == ids
    statuses = {row["data-id"]: row["data-status"] for row in rows}
    assert statuses["DemoCPhO_2025_1_1"] == "wrong" and statuses["DemoCPhO_2025_2_1"] == "correct"
    assert {row["data-group"] for row in rows} == {"DemoCPhO_2025", "DemoPhO_2025"}
    for control in (
        '<input id="search"',
        '<select id="status-filter"',
        '<select id="group-filter"',
        '<span id="shown-count">5</span>',
    ):
        assert control in index
    options = re.findall(r'<option value="([^"]*)"', index.split('id="status-filter"')[1].split("</select>")[0])
    assert options == ["all", "wrong", "judge-error", "truncated", "undecided"]
    assert '<input id="models-disagree" type="checkbox">' in index  # with one judge, no "judges disagree"
    assert 'id="judges-disagree"' not in index
    # HiPhO's problems have no level: no column of dashes; status and score say they span the judges
    assert [(th["data-sort"]) for th in tags(index, "th") if "data-sort" in th] == [
        "id",
        "group",
        "status",
        "score",
        "judge-0",
    ]
    assert '<th data-sort="status">status (all judges)</th>' in index
    assert '<th data-sort="score">score (mean of judges)</th>' in index
    assert '<th data-sort="judge-0">judge rule: points</th>' in index
    body = index[index.index("<tbody>") :]
    assert ";;" not in body and "; ;" not in body and "<code>; " not in body  # an empty slot shows as a dash
    # the suite's outcomes, per model, for the "models disagree" filter: the root's
    assert '<script defer src="../../../../compare/sample_hipho/outcomes.js"></script>' in index
    reference = (report / "cells" / FAMILY / SUITE / "reference" / "index.html").read_text(encoding="utf-8")
    assert reference.count('data-status="correct"') == len(ids)


def test_a_problem_page_shows_question_figures_samples_answers_rules_criteria_and_metadata(run, report):
    cell = report / "cells" / FAMILY / SUITE / "demo"
    page = (cell / "problems" / "DemoCPhO_2025_1_1.html").read_text(encoding="utf-8")
    for section in ("question", "sample", "answers", "rules", "criteria", "metadata"):
        assert f'<section class="{section}"' in page, section
    # the rule judge awards no criterion: the scheme is shown all the same, each criterion marked not judged
    assert '<table class="criteria">' in page and "Marking scheme: not judged (rules only)" in page
    assert "则得" in page and "not judged (rules only)</td>" in page
    assert "180" in page  # the demo's (wrong) answer
    assert "&lt;answer&gt;" in page and "<answer>" not in page and "<think>" not in page
    assert page.count('class="math-text"') == page.count('<details class="raw">')  # raw text one click away
    assert '<html lang="zh">' in page
    assert '<a rel="next" href="DemoCPhO_2025_2_1.html">' in page and 'rel="prev"' not in page  # the first problem
    assert "model settings" in page and "replay" in page and "olympiad-eval 0.1.0" in page
    figures = [
        img["src"] for p in sorted((cell / "problems").iterdir()) for img in tags(p.read_text(encoding="utf-8"), "img")
    ]
    assert figures, "the sample has figures"
    for src in figures:
        assert re.fullmatch(r"\.\./figures/[0-9a-f]{64}\.(png|jpg|jpeg|gif|webp)", src)
        assert (cell / "problems" / src).is_file()
    assert sorted(p.name for p in (cell / "figures").iterdir()) == sorted({Path(s).name for s in figures})


def test_a_side_by_side_page_is_the_problem_and_each_model_s_column_is_its_cell_s(run, report):
    """The page (the suite's stage) holds the problem and names no model; the root lists the models
    (`models.js`); each cell's stage writes its columns (`side/<shard>.js`): the response, the
    answers extracted, each judge's verdict, linked back to its own page."""
    page = (report / "side" / SUITE / "DemoCPhO_2025_1_1.html").read_text(encoding="utf-8")
    [body] = tags(page, "body")
    assert body["data-page"] == "side" and body["data-problem"] == "DemoCPhO_2025_1_1"
    assert body["data-shard"] == "00000" and body["data-root"] == "../../"
    assert '<section class="question">' in page and 'id="columns"' in page
    assert "demo" not in page and "reference" not in page  # adding a model leaves the page as it is
    assert page.index('<section class="question">') < page.index('id="columns"')
    listing = [s["src"] for s in tags(page, "script") if "models.js" in s["src"]]
    assert listing == ["../../compare/sample_hipho/models.js"]
    listed = (report / "compare" / SUITE / "models.js").read_text(encoding="utf-8")
    data = json.loads(listed.removeprefix("OE.models(").removesuffix(");\n"))
    assert [(m["name"], m["cell"]) for m in data["models"]] == [
        ("reference", "cells/hipho/sample_hipho/reference/"),
        ("demo", "cells/hipho/sample_hipho/demo/"),
    ]
    columns = (report / "cells" / FAMILY / SUITE / "demo" / "side" / "00000.js").read_text(encoding="utf-8")
    assert columns.startswith('OE.column("demo", "00000", {')
    column = json.loads(columns.split(", ", 2)[2].removesuffix(");\n"))["DemoCPhO_2025_1_1"]
    assert "180" in column and '<table class="side-verdicts">' in column  # the demo's (wrong) answer
    assert '<tr data-judge="rule"><td>rule</td><td>\u2717 wrong</td>' in column
    assert '<a href="../../cells/hipho/sample_hipho/demo/problems/DemoCPhO_2025_1_1.html">' in column
    outcomes = (report / "compare" / SUITE / "outcomes.js").read_text(encoding="utf-8")
    statuses = json.loads(outcomes.removeprefix("OE.outcome(").removesuffix(");\n"))["statuses"]
    assert statuses["DemoCPhO_2025_1_1"] == "cw" and statuses["DemoCPhO_2025_2_1"] == "cc"


def test_a_partial_run_says_so_in_the_index_its_tables_and_its_pages(render_suite):
    layout = real_run(render_suite, "suite.limit=2")
    write_all(PLAN, layout)
    index = (layout.report() / "index.html").read_text(encoding="utf-8")
    note = "sample_hipho: 2 of 5 problems (limit 2)"
    leaderboard = index.split('<section id="leaderboard">')[1].split("</section>")[0]
    assert f'<p class="partial"><b>partial:</b> {note}</p>' in leaderboard
    scores = re.findall(r'class="cell-link"[^>]*>([^<]*)<', leaderboard)
    assert scores and all(score.endswith("* ") for score in scores), scores  # `66.7* [28.6, 100.0]`
    assert "<th>partial</th>" in index and index.count("<td>2 of 5 problems (limit 2)</td>") >= 2  # the tables' column
    for model in MODELS:
        page = (layout.report_cell(FAMILY, SUITE, model) / "index.html").read_text(encoding="utf-8")
        assert '2 problems; judges rule</p>\n<p class="partial"><b>partial:</b> 2 of 5 problems (limit 2)</p>' in page


def test_a_whole_run_says_nothing_of_parts(report):
    assert "partial" not in (report / "index.html").read_text(encoding="utf-8")


def test_the_report_is_byte_stable(run, report):
    first = files_of(report)
    write_all(PLAN, run)
    assert files_of(report) == first


def test_a_new_model_writes_its_own_cell_and_rewrites_no_other_cell_s_file(run):
    """Adding a model runs its cells' stages and the root's (what lists the models): no other cell's
    file and no side-by-side page is written again."""
    alone = {**PLAN, "models": ["reference"]}
    shutil.rmtree(run.report())
    write_all(alone, run)

    def stamped(folder: Path) -> dict:
        return {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in folder.rglob("*") if path.is_file()}

    before = stamped(run.report_cell(FAMILY, SUITE, "reference")), stamped(run.report_side(SUITE))
    write_cell_pages(PLAN, run, SUITE, "demo", MODELS["demo"])  # the new model's own stage
    write_report(PLAN, run)  # the root: the index, the models' list, the flips
    assert (run.report_cell(FAMILY, SUITE, "demo") / "index.html").is_file()
    assert (stamped(run.report_cell(FAMILY, SUITE, "reference")), stamped(run.report_side(SUITE))) == before
    assert '"demo"' in (run.report_compare(SUITE) / "models.js").read_text(encoding="utf-8")


def test_the_report_shows_the_tables_its_index_lists_in_that_order(run):
    """The index that aggregate writes is what the report reads: never tables.md's headings."""
    index_path = run.table_index(BENCHMARK)
    index = json.loads(index_path.read_text(encoding="utf-8"))
    index["tables"] = [{**entry, "title": f"table {entry['name']}"} for entry in reversed(index["tables"][:2])]
    index_path.write_text(json.dumps(index), encoding="utf-8")
    (run.tables(BENCHMARK) / index["all"]).unlink()
    write_report(PLAN, run)
    headings = re.findall(r"<h3>(.*)</h3>", (run.report() / "index.html").read_text(encoding="utf-8"))
    assert headings == ["table exam_scores", "table summary"]


# ---------------------------------------------------------------- the benchmarks' sections, escaped


def judgment(**fields) -> Judgment:
    common = dict(
        id="P1",
        suite="s",
        model="m",
        judge="gpt-4o",
        sample=0,
        language="en",
        subset="",
        status="scored",
        score=0.5,
        points=1.0,
        max_points=2.0,
    )
    return Judgment(**{**common, **fields})


HIPHO_PROBLEM = Problem(
    id="P1",
    benchmark="b",
    language="en",
    question="q",
    answers=(AnswerSlot("F", points=2.0),),
    marking=(
        (Criterion("Award 1 pt for $F = ma$", 1.0), Criterion("Award 1 pt for <the> result", 1.0)),
        (Criterion("Award 2 pt for another way", 2.0),),
    ),
)


def test_hipho_criteria_show_text_points_award_reason_scheme_totals_and_the_winner():
    record = judgment(
        parts={"answer_points": 0.0, "step_points": 1.0},
        details=(
            {
                "judge": "gpt-4o",
                "criterion 0.0": {"awarded": 1.0, "reasoning": "uses <b>F=ma</b>"},
                "criterion 0.1": {"awarded": 0.0, "reasoning": "no result"},
                "criterion 1.0": {"awarded": 0.5, "reasoning": "half"},
                "slot 0": {"equivalent": False, "reasoning": "a<b"},
            },
        ),
    )
    page = "\n".join(judgment_html(record, HIPHO.report_sections, HIPHO_PROBLEM))
    assert '<section class="criteria">' in page and '<table class="criteria">' in page
    rows = re.findall(r"<tr><td>(\d\.\d)</td>.*?</tr>", page)
    assert rows == ["1.1", "1.2", "2.1"]
    assert "Award 1 pt for $F = ma$" in page and "Award 1 pt for &lt;the&gt; result" in page
    assert "uses &lt;b&gt;F=ma&lt;/b&gt;" in page and "<b>F=ma" not in page and "a&lt;b" in page
    assert "<dt>scheme 1</dt><dd>1 of 2 points</dd>" in page and "<dt>scheme 2</dt><dd>0.5 of 2 points</dd>" in page
    assert "<dt>winning scheme</dt><dd>scheme 1: this judge's step level, 1 points</dd>" in page
    assert (
        "<dt>answer level</dt><dd>0 of 2 points (mean" in page and "<dt>step level</dt><dd>1 of 2 points (mean" in page
    )
    assert '<table class="slot-judgments">' in page


@pytest.mark.parametrize(
    ("key", "label"),
    [
        ("criterion 0.0", "criterion 1.1"),
        ("criterion 1.2", "criterion 2.3"),
        ("criterion 0.1 attempt 2", "criterion 1.2 attempt 2"),  # VLMEvalKit's protocol asks again
        ("slot 0", "answer slot 1"),
        ("slot 2 split", "answer slot 3 split"),
        ("answer", "answer"),  # not HiPhO's: as it is
    ],
)
def test_hipho_names_a_judge_task_as_its_marking_table_numbers_it(key, label):
    assert HIPHO.report_task_label(key) == label
    assert PHYSELITE.report_task_label(key) == key  # a benchmark without its own numbering: the key


def test_a_judge_conversation_names_each_task_by_the_benchmark_s_numbering():
    talk = Conversation(
        id="P1",
        suite="s",
        model="m",
        judge="gpt-4o",
        sample=0,
        tasks=tuple(
            {
                "task": key,
                "messages": [{"role": "user", "content": "x" * 300 + "\nthe criterion's own text " + key[-1]}],
                "replies": {"gpt-4o": [{}]},
            }
            for key in ("criterion 0.0", "criterion 0.1")
        ),
    )
    page = conversation_html(talk, "c", _Budget(), HIPHO.report_task_label)
    assert re.findall(r"<summary>(criterion [\d.]+):", page) == ["criterion 1.1", "criterion 1.2"]
    assert re.findall(r'data-task="(.*?)"', page) == ["criterion 0.0", "criterion 0.1"]  # the records' own keys
    assert "301 characters as in criterion 1.1" in page  # the same first line, named by its number
    assert '<p class="ask">' not in page  # one reply to each task: no label over it


def test_physelite_shows_each_judge_s_verdict_and_the_steps_graded():
    problem = Problem(id="P1", benchmark="b", language="zh", question="q")
    record = judgment(
        verdict="split",
        parts={"process": 0.75},
        details=(
            {
                "judge": "a",
                "answer": {"verdict": "correct", "reasoning": "对 <ok>"},
                "process": {"steps": [{"step": "$x<y$", "grade": 1}, {"step": "二", "grade": 0.5}]},
            },
            {
                "judge": "b",
                "answer": {"verdict": "incorrect", "reasoning": "no"},
                "error_type": {"error_type": "calculation", "reasoning": "sign"},
            },
        ),
    )
    page = "\n".join(judgment_html(record, PHYSELITE.report_sections, problem))
    assert '<section class="verdicts">' in page and '<table class="steps">' in page
    assert "<td>a</td><td>correct</td>" in page and "<td>b</td><td>incorrect</td>" in page
    assert "对 &lt;ok&gt;" in page and "$x&lt;y$" in page and "calculation" in page
    assert "<dt>process score</dt><dd>0.75" in page


# ---------------------------------------------------------------- the index's tables

SUMMARY_ROW = {"problems": 5, "samples": 1, "judge errors": 0, "truncated": 0, "score (%)": 60.0}
SUMMARY_ROW |= {"95% CI low": 20.0, "95% CI high": 90.0, "generation tokens": 1234}


def summary_row(judge: str, protocol: str, **changed) -> dict:
    """A row of a summary table, its columns in the aggregate's order."""
    cell = {"suite": "s", "model": "m", "judge": judge}
    return cell | SUMMARY_ROW | {"protocol": protocol, "judge config": f"{judge}@0123"} | changed


def test_rows_that_judges_scored_alike_are_one_row_naming_them():
    frame = pd.DataFrame(
        [
            summary_row("rule", "p (rules only)"),
            summary_row("scripted", "p (rules only)"),  # a rules-only benchmark under an LLM judge: the same row
            summary_row("gpt-4o", "p (prompts a v1)"),  # another protocol, though the same numbers
            summary_row("rule", "p (rules only)", model="n", truncated=2),
        ]
    )
    joined = collapsed(frame)
    assert list(joined["judge"]) == ["rule, scripted", "gpt-4o", "rule"]
    assert list(joined["judge config"]) == ["rule@0123, scripted@0123", "gpt-4o@0123", "rule@0123"]


def test_a_score_is_paired_with_its_interval_by_name_or_place():
    columns = [
        "suite",
        "score (%)",
        "95% CI low",
        "95% CI high",
        "Ans.",
        "Proc.",
        "Ans. 95% CI low",
        "Ans. 95% CI high",
    ]
    assert intervals(columns) == {
        "score (%)": ("95% CI low", "95% CI high"),
        "Ans.": ("Ans. 95% CI low", "Ans. 95% CI high"),
    }


def test_a_table_s_headline_says_once_what_every_row_shares_and_leaves_the_rest_to_the_whole_table():
    frame = pd.DataFrame(
        [summary_row("rule", "p (rules only)"), summary_row("gpt-4o", "p (prompts a v1)", truncated=1)]
    )
    page = table_html(frame, "outputs/tables/b/summary.csv")
    headline, whole = page.split('<details class="all-columns">')
    heads = re.findall(r"<th[^>]*><span>(.*?)</span></th>", headline)
    assert heads == ["judge", "problems", "truncated", "score (%)"]  # no sample count, tokens, protocol, config
    assert '<td class="num">60.00 <span class="interval">[20.00, 90.00]</span></td>' in headline
    assert "every row: suite <b>s</b>; model <b>m</b>" in headline
    assert "0 in every row: judge errors" in headline
    assert "made by p (rules only) (judge rule); p (prompts a v1) (judge gpt-4o)" in headline
    assert "all 13 columns, every judge its own row, as in outputs/tables/b/summary.csv" in whole
    assert "<th>generation tokens</th>" in whole and "<td>p (prompts a v1)</td>" in whole


def test_a_table_of_many_long_headers_stands_them_upright():
    exams = {f"PanMechanics_{year}_{n}": 10.0 for year in (2024, 2025) for n in range(8)}
    page = table_html(pd.DataFrame([{"model": "m", "judge": "j", **exams}]), "t.csv")
    assert page.count('<th class="upright">') == len(exams)
    narrow = table_html(pd.DataFrame([{"model": "m", "judge": "j", "IPhO_2025": 10.0}]), "t.csv")
    assert 'class="upright"' not in narrow


def test_extracted_answers_are_typeset_whole_in_one_element_unless_one_has_its_own_delimiters():
    assert (
        answers_html(["12.5 \\mathrm{m}", "", "x<y"])
        == '<span class="tex">\\(12.5 \\mathrm{m}\\); \u2013; \\(x&lt;y\\)</span>'
    )
    assert answers_html(["$x$", "y"]) == '<span class="tex">$x$</span>; <span class="tex">\\(y\\)</span>'
    assert answers_html(["", ""]) == "\u2013; \u2013"


def test_a_benchmark_without_a_hook_gets_the_generic_view_with_every_reply():
    record = judgment(verdict="correct", details=({"judge": "gpt-4o", "task": {"awarded": 1.0, "why": "<i>x</i>"}},))
    page = "\n".join(judgment_html(record, None, HIPHO_PROBLEM))
    for section in ("answers", "rules", "replies"):
        assert f'<section class="{section}">' in page
    assert "criteria" not in page and "&lt;i&gt;x&lt;/i&gt;" in page and "<i>x" not in page
    assert "<dt>verdict</dt><dd>correct</dd>" in page and "<dt>points</dt><dd>1 of 2</dd>" in page


def test_a_benchmark_without_the_report_hooks_makes_a_whole_report(run, monkeypatch):
    """A new benchmark (the base's defaults for its report hooks) gets the generic pages."""
    from olympiad_eval.benchmarks.base import Benchmark

    monkeypatch.setattr(type(HIPHO), "report_sections", Benchmark.report_sections)
    monkeypatch.setattr(type(HIPHO), "report_charts", Benchmark.report_charts)
    shutil.rmtree(run.report())
    write_all(PLAN, run)
    page = (run.report_cell(FAMILY, SUITE, "demo") / "problems" / "DemoCPhO_2025_1_1.html").read_text(encoding="utf-8")
    assert '<section class="answers">' in page and '<section class="criteria">' not in page
    assert (run.report() / "index.html").read_text(encoding="utf-8").count('<svg class="chart"') == 2


# ---------------------------------------------------------------- streaming and size


def synthetic_cell(tmp_path: Path, ids: list[str], samples: int = 1, text: str = "") -> Layout:
    """A suite of plain prompts, a model's responses and a judge's judgments, as the stages write them."""
    layout = Layout(tmp_path / "outputs")
    write_jsonl(
        layout.prompts("physelite", "s"),
        [
            Prompt(
                id=i,
                suite="s",
                language="en",
                prompt_hash=i,
                messages=({"role": "user", "content": f"question {i} {text}"},),
            )
            for i in ids
        ],
    )
    write_jsonl(
        layout.suite("physelite", "s") / "problems.jsonl",
        [
            Problem(id=i, benchmark="b", language="en", question="q", subset=f"group {int(i) % 7}")
            for i in ids
            if i.isdigit()
        ],
    )
    info = SuiteInfo(suite="s", benchmark="b", kind="physelite", language="en", templates={}, scoring={})
    write_suite_info(layout.suite_info("physelite", "s"), info)
    generations = [
        Generation(id=i, suite="s", model="m", sample=n, response=f"answer {i}/{n} {text}", request_hash="h")
        for i in ids
        for n in range(samples)
    ]
    write_jsonl(layout.generations("physelite", "s", "m"), generations)
    return layout


def test_a_page_pairs_records_by_id_in_natural_order_streaming_each_cell(tmp_path):
    """A cell reads its files side by side (all sorted by natural key): a prompt without a
    generation says so, records of ids not in the suite are skipped, "2" comes before "10"."""
    layout = synthetic_cell(tmp_path, ["1", "2", "10"], samples=2)
    generations = [g for g in read_jsonl(layout.generations("physelite", "s", "m"), Generation) if g.id != "1"]
    generations += [Generation(id="7", suite="s", model="m", sample=0, response="answer 7", request_hash="h")]
    write_jsonl(layout.generations("physelite", "s", "m"), generations)
    judgments = [
        judgment(
            id=g.id,
            suite="s",
            model="m",
            judge="rule",
            sample=g.sample,
            score=1.0,
            max_points=1.0,
            detail=f"graded {g.id}/{g.sample}",
        )
        for g in generations
        if g.id != "10" or g.sample == 0
    ]
    write_jsonl(layout.judgments("physelite", "s", "m", "rule"), judgments)
    plan = {"suites": {"s": "b"}, "family": {"b": "physelite"}, "models": ["m"], "judges": ["rule"]}
    folder = write_cell_pages(plan, layout, "s", "m", {})
    index = (folder / "index.html").read_text(encoding="utf-8")
    rows = [attrs for attrs in tags(index, "tr") if attrs.get("class") == "problem-row"]
    assert [(r["data-id"], r["data-status"]) for r in rows] == [
        ("1", "failed"),
        ("2", "correct"),
        ("10", "judge-error"),
    ]
    pages = {i: (folder / "problems" / f"{i}.html").read_text(encoding="utf-8") for i in ("1", "2", "10")}
    assert "no generation" in pages["1"] and "no generation" not in pages["2"]
    assert not (folder / "problems" / "7.html").exists() and "graded 7" not in index
    assert pages["2"].count("<dt>detail</dt><dd>graded 2/") == 2 and "graded 10/0" in pages["10"]
    assert pages["10"].count("no judgment") == 1  # sample 1 of problem 10 was not judged


def test_a_physelite_sized_cell_keeps_every_file_under_5_mb(tmp_path):
    """2,000 problems with 2 KB responses and three judges: the index grows by a row per problem,
    below 5 MB at 11,586 problems with a margin; each problem has its own page."""
    ids = [str(n) for n in range(100_001, 102_001)]
    layout = synthetic_cell(tmp_path, ids, text="x" * 2000)
    judges = ["rule", "gpt-4o", "physelite-ensemble"]
    for name in judges:
        write_jsonl(
            layout.judgments("physelite", "s", "m", name),
            [
                judgment(
                    id=i,
                    suite="s",
                    model="m",
                    judge=name,
                    score=0.0,
                    points=0.0,
                    max_points=1.0,
                    verdict="incorrect",
                    extracted=("12.5 \\mathrm{m}", "x" * 200),
                    subset=f"group {int(i) % 7}",
                )
                for i in ids
            ],
        )
    plan = {"suites": {"s": "b"}, "family": {"b": "physelite"}, "models": ["m"], "judges": judges}
    folder = write_cell_pages(plan, layout, "s", "m", {})
    index = (folder / "index.html").stat().st_size
    assert index * 11_586 / 2_000 < 0.8 * 5 * MB, index
    pages = list((folder / "problems").iterdir())
    assert len(pages) == 2000 and max(p.stat().st_size for p in pages) < 5 * MB


@pytest.mark.parametrize(("problems", "sizes"), [(0, [0]), (1, [1]), (200, [200]), (450, [200, 200, 50])])
def test_a_cell_index_holds_its_rows_in_bodies_of_200(tmp_path, problems, sizes):
    """The browser lays out a body of rows only when it is on screen (viewer.css): bodies of
    ROWS_PER_BODY rows in the problems' order, and an empty cell still has its one body."""
    ids = [str(n) for n in range(1, problems + 1)]
    layout = synthetic_cell(tmp_path, ids)
    plan = {"suites": {"s": "b"}, "family": {"b": "physelite"}, "models": ["m"], "judges": []}
    index = (write_cell_pages(plan, layout, "s", "m", {}) / "index.html").read_text(encoding="utf-8")
    table = index[index.index('<table class="problems"') : index.index("</table>")]
    bodies = re.findall(r"<tbody>(.*?)</tbody>", table, flags=re.S)
    assert [body.count('<tr class="problem-row"') for body in bodies] == sizes
    assert re.findall(r'<tr class="problem-row" data-id="(\d+)"', table) == ids


def test_ids_that_are_not_file_names_get_their_own_pages(tmp_path):
    from olympiad_eval.report.html import page_slug

    assert page_slug("PE-S-0001") == "PE-S-0001"
    odd = ["a/b", "a b", "../x", "日本", "a_b"]
    assert len({page_slug(i) for i in odd}) == len(odd)
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", page_slug(i)) for i in odd)


# ---------------------------------------------------------------- dates, the question, the counts


def test_every_page_shows_when_the_replies_were_received(render_suite):
    """A model served over the network has the dates its replies were received on every page that
    shows it; an offline provider's cell says it sent nothing; the rule judge sent nothing either."""
    layout = Layout(render_suite(SUITE, BENCHMARK))
    judge_cfg = compose_stage("judge", ["judge=rule", f"cell.suite={SUITE}", "cell.model=x"]).judge
    cache = layout.root.parent / "cache.sqlite"
    with FakeOpenAI() as server:
        models = {
            "reference": {"provider": "reference"},
            "served": {"provider": "openai", "base_url": server.base_url, "model": "fake-model", "api_key_env": None},
        }
        before = utc_now()
        for model, cfg in models.items():
            generations = layout.generations(FAMILY, SUITE, model)
            generate(
                SUITE,
                model,
                OmegaConf.create(cfg),
                layout.prompts(FAMILY, SUITE),
                generations,
                cache,
                layout.usage(FAMILY, SUITE, model),
            )
            outcome = judge(
                layout.suite(FAMILY, SUITE),
                generations,
                "rule",
                judge_cfg,
                layout.judgments(FAMILY, SUITE, model, "rule"),
                cache,
            )
            write_json(layout.judge_usage(FAMILY, SUITE, model, "rule"), outcome.usage)
        after = utc_now()
    plan = {**PLAN, "models": list(models)}
    aggregate(
        BENCHMARK,
        compose_stage("aggregate", [f"benchmark={BENCHMARK}"]).benchmark,
        plan,
        layout,
        suites={SUITE: compose_stage("render", [f"suite={SUITE}", f"cell.benchmark={BENCHMARK}"]).suite},
    )
    for model in models:
        write_cell_pages(plan, layout, SUITE, model, {})
    write_report(plan, layout)
    span = json.loads(layout.usage(FAMILY, SUITE, "served").read_text())["replies_received"]
    assert before <= span["first"] <= span["last"] <= after
    said = span["first"] if span["first"] == span["last"] else f"first {span['first']}, last {span['last']}"
    dated = f"generation replies received</dt><dd>{said} (UTC)"
    served, offline = layout.report_cell(FAMILY, SUITE, "served"), layout.report_cell(FAMILY, SUITE, "reference")
    for page in [served / "index.html", *sorted((served / "problems").glob("*.html"))]:
        text = metadata_of(page)
        assert dated in text and "judge rule replies received</dt><dd>no requests" in text, page
    for page in [offline / "index.html", *sorted((offline / "problems").glob("*.html"))]:
        assert "generation replies received</dt><dd>offline provider: no requests" in metadata_of(page), page
    # the plan's pages: the span over its cells, which one offline cell does not hide
    for page in [layout.report_index(), *sorted(layout.report_compare(SUITE).glob("*.html"))]:
        assert f"generation replies received</dt><dd>{said} (UTC); some cells offline or undated" in metadata_of(page)
    assert "git commit</dt><dd>not read by the report" in metadata_of(layout.report_index())


def metadata_of(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    return text[text.index('<section class="metadata"') :]


def test_dates_read_as_they_were_kept():
    span = {"requests": 3, "replies_received": {"first": "2026-01-01T00:00:00Z", "last": "2026-01-02T00:00:00Z"}}
    assert received_text([span]) == "first 2026-01-01T00:00:00Z, last 2026-01-02T00:00:00Z (UTC)"
    assert received_text([{"requests": 3, "replies_received": None}]) == (
        "no dates recorded (replies cached before dates were kept, or none answered)"
    )
    assert received_text([{"requests": 3}]) == "offline provider: no requests"
    assert received_text([{}]) == "not recorded"


def test_the_question_is_the_problems_own_text_with_the_full_prompt_one_click_away(run, report):
    prompt = next(p for p in read_jsonl(run.prompts(FAMILY, SUITE), Prompt) if p.id == "DemoCPhO_2025_1_1")
    problem = next(p for p in read_jsonl(run.suite(FAMILY, SUITE) / "problems.jsonl", Problem) if p.id == prompt.id)
    page = report / "cells" / FAMILY / SUITE / "demo" / "problems" / "DemoCPhO_2025_1_1.html"
    page = page.read_text(encoding="utf-8")
    question = page[page.index('<section class="question">') : page.index("</section>")]
    shown, sent = question.split('<details class="prompt">')
    instruction = prompt.messages[-1]["content"][0]["text"].split(problem.question[:20])[0].strip()
    assert instruction and instruction[:30] not in shown.replace(
        "&quot;", '"'
    )  # the template's words are not the question
    assert html_escape(problem.question[:40]) in shown
    assert "the full prompt sent" in sent and html_escape(instruction[:30]) in sent


def test_a_status_is_said_once():
    assert [status_label(s) for s in MARKS] == [
        "\u2713 correct",
        "\u25d0 partial",
        "\u2717 wrong",
        "judge error",
        "failed",
    ]


def html_escape(value: str) -> str:
    import html

    return html.escape(value, quote=True)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # a gold as releases write it: the box around delimited maths
        (r"\boxed{$W = 275$}", '<span class="boxed">$W = 275$</span>'),
        # nested braces in the box, matched: the box ends at its own brace
        (r"\boxed{$v = \sqrt{2 g h}$}", r'<span class="boxed">$v = \sqrt{2 g h}$</span>'),
        # two boxes and words between: each unwrapped, the words kept
        (r"\boxed{$a$} and \boxed{$b$}", '<span class="boxed">$a$</span> and <span class="boxed">$b$</span>'),
        # a box of bare LaTeX outside the maths: made maths, which MathJax draws boxed
        (r"$x$ is \boxed{3}", r"$x$ is \(\boxed{3}\)"),
        # a box inside the maths is MathJax's to draw: kept
        (r"so $\boxed{3}$", r"so $\boxed{3}$"),
        (r"\[ \boxed{x} \] then", r"\[ \boxed{x} \] then"),
        # no delimiters at all: the whole answer typeset, its box drawn by MathJax
        (r"\boxed{B}", r"\(\boxed{B}\)"),
    ],
)
def test_a_gold_s_box_outside_the_maths_is_unwrapped_with_its_braces_matched(raw, shown):
    from olympiad_eval.report.html import formula_cell

    cell = formula_cell(raw)
    assert cell.startswith(f'<span class="math-text">{shown}</span>'), cell
    assert f"<pre>{html_escape(raw)}</pre>" in cell  # the raw text one click away, as written


def test_a_response_s_box_outside_the_maths_is_not_left_as_text():
    from olympiad_eval.report.html import maths

    shown = maths(r"Hence the speed is \boxed{$v = 3$ m/s} and $t$ is \boxed{\frac{1}{2}}.")
    visible = shown.split("<details")[0]
    assert visible == (
        r'<div class="math-text">Hence the speed is <span class="boxed">$v = 3$ m/s</span> and $t$ is '
        r"\(\boxed{\frac{1}{2}}\).</div>"
    )


def test_a_problem_page_shows_each_sample_s_tokens_retries_reply_date_latency_and_the_model_served(render_suite):
    """What a sample cost and when its reply came, from the generate stage's reply facts; an
    offline provider's page says it sent no request."""
    from olympiad_eval.core.records import SampleReply
    from olympiad_eval.report.html import page_slug

    layout = Layout(render_suite(SUITE, BENCHMARK))
    cache = layout.root.parent / "cache.sqlite"
    models = {"reference": {"provider": "reference"}}
    with FakeOpenAI() as server:
        models["served"] = {
            "provider": "openai",
            "base_url": server.base_url,
            "model": "fake-model",
            "api_key_env": None,
        }
        for model, cfg in models.items():
            paths = (layout.usage(FAMILY, SUITE, model), layout.sample_replies(FAMILY, SUITE, model))
            generations = layout.generations(FAMILY, SUITE, model)
            generate(SUITE, model, OmegaConf.create(cfg), layout.prompts(FAMILY, SUITE), generations, cache, *paths)
            rule = compose_stage("judge", ["judge=rule", f"cell.suite={SUITE}", "cell.model=x"]).judge
            judged = judge(
                layout.suite(FAMILY, SUITE),
                generations,
                "rule",
                rule,
                layout.judgments(FAMILY, SUITE, model, "rule"),
                cache,
            )
            write_json(layout.judge_usage(FAMILY, SUITE, model, "rule"), judged.usage)
    plan = {**PLAN, "models": list(models), "judges": ["rule"]}
    for model in models:
        write_cell_pages(plan, layout, SUITE, model, {})
    replies = read_jsonl(layout.sample_replies(FAMILY, SUITE, "served"), SampleReply)
    assert replies and read_jsonl(layout.sample_replies(FAMILY, SUITE, "reference"), SampleReply) == []
    for reply in replies:
        assert reply.usage.get("completion_tokens") and reply.received and reply.served_model
        page = layout.report_cell(FAMILY, SUITE, "served") / "problems" / f"{page_slug(reply.id)}.html"
        said = sample_facts_text(page)
        tokens = ", ".join(f"{name.replace('_', ' ')} {count}" for name, count in sorted(reply.usage.items()))
        assert f"<dt>tokens</dt><dd>{tokens}</dd>" in said, said
        assert f"<dt>retries</dt><dd>{reply.attempts - 1}</dd>" in said
        assert f"<dt>received</dt><dd>{reply.received} (UTC)</dd>" in said
        assert f"<dt>model served</dt><dd>{reply.served_model}</dd>" in said
        assert reply.latency is not None and f"<dt>latency</dt><dd>{reply.latency:.2f} s</dd>" in said
        offline = sample_facts_text(layout.report_cell(FAMILY, SUITE, "reference") / "problems" / page.name)
        assert "<dt>request</dt><dd>none: an offline provider" in offline and "<dt>tokens</dt>" not in offline


def sample_facts_text(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.index('<dl class="facts sample-facts">')
    return text[start : text.index("</dl>", start)]
