"""The report in a real browser: headless Chromium (the system's, driven by Playwright) opens the
report of a real small run of the bundled sample from disk, as a reader does, and checks the page
contract: filters, sorting and counts on a cell's index, typeset maths, figures that load, HiPhO's
marking criteria and PhysElite's process steps on problem pages, no console error, and no request
that leaves the report's folder. Screenshots are kept as test artefacts (in
$OLYMPIAD_EVAL_ARTEFACTS, or a folder under pytest's temporary directory; its path is printed)."""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote, urlparse

import pandas as pd
import pytest
from omegaconf import OmegaConf

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import (
    Conversation,
    Generation,
    Judgment,
    Problem,
    Prompt,
    read_jsonl,
    write_json,
    write_jsonl,
)
from olympiad_eval.core.stats import score_text
from olympiad_eval.report import cell, html, write_assets, write_cell_pages, write_report, write_side
from olympiad_eval.report.cell import content_parts
from olympiad_eval.report.tables import table_html
from olympiad_eval.stages.aggregate import aggregate
from olympiad_eval.stages.generate import generate
from olympiad_eval.stages.judge import judge
from tests.support import ROOT, compose_stage, render_sample

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is in the test extra: pip install -e '.[test]'"
)

# The run: HiPhO (marking criteria), PhysElite in both languages (verdicts, process steps, Chinese
# text) and MATH-Vision (figures in choices), each by the reference and the demo model, judged by
# the rules and by the offline scripted LLM judge (conf/judge/scripted.yaml).
SUITES = {
    "sample_hipho": "sample_hipho",
    "sample_physelite_en": "sample_physelite",
    "sample_physelite_zh": "sample_physelite",
    "sample_mathvision": "sample_mathvision",
}
FAMILY = {"sample_hipho": "hipho", "sample_physelite": "physelite", "sample_mathvision": "mathvision"}
MODELS = ["reference", "demo"]  # conf/model/
JUDGES = ["rule", "scripted"]
PLAN = {
    "benchmarks": sorted(FAMILY),
    "suites": SUITES,
    "models": list(MODELS),
    "judges": JUDGES,
    "family": FAMILY,
    "families": sorted(set(FAMILY.values())),
}

# One worker runs the module: one sample run, one report, one browser.
pytestmark = pytest.mark.xdist_group("report_browser")

# Chromium headless, and none of its own connections
# (component updates, sync, field trials), which would fail offline and are not the report's.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROW = "tr.problem-row"
MATH = "mjx-container, .katex"
SCREEN = {"width": 1400, "height": 900}  # a researcher's screen: what the pages are laid out for


# ---------------------------------------------------------------- the browser


def chromium_binary() -> str:
    """The system's Chromium: Playwright's own download (`playwright install`) is never used."""
    for name in ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium found (install the Debian package `chromium`, as .ci/run does) for the browser tests")


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory, report, hostile):
    """One headless Chromium for the module, with a fresh profile. Started after the reports are
    written: the run's judge runs its own event loop, which Playwright's, once running, forbids."""
    binary = chromium_binary()
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=binary,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": SCREEN["width"], "height": SCREEN["height"]},
        )
        yield context
        context.close()


class Watched:
    """A page and what it did wrong: requests outside the report folder (aborted), console errors
    (a Content-Security-Policy violation among them), uncaught exceptions, dialogs (`alert`: script
    that ran). `check()` fails the test on any of them."""

    def __init__(self, context, folder: Path):
        self.folder_url = folder.resolve().as_uri() + "/"
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.page = context.new_page()
        self.page.route("**/*", self._route)
        self.page.on(
            "console",
            lambda message: (
                message.type == "error"
                and self.errors.append(
                    f"console error on {self.page.url}: {message.text} ({message.location.get('url', '')})"
                )
            ),
        )
        self.page.on("pageerror", lambda error: self.errors.append(f"page error on {self.page.url}: {error}"))
        self.page.on("dialog", self._dialog)

    def _dialog(self, dialog) -> None:
        self.errors.append(f"a dialog on {self.page.url} (script ran): {dialog.type} {dialog.message!r}")
        dialog.dismiss()

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(self.folder_url) and ".." not in urlparse(url).path.split("/"):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def open(self, path: Path):
        self.page.goto(path.resolve().as_uri(), wait_until="load")
        return self.page

    def check(self) -> None:
        assert not self.outside, f"requests that leave the report folder: {self.outside}"
        assert not self.errors, "\n".join(self.errors)


@pytest.fixture
def browse(browser_context, report):
    """Open report pages in the module's browser; every page opened is checked at the test's end."""
    opened: list[Watched] = []

    def open_page(path: Path):
        watched = Watched(browser_context, report)
        opened.append(watched)
        return watched.open(path)

    yield open_page
    for watched in opened:
        watched.page.close()
    for watched in opened:
        watched.check()


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("OLYMPIAD_EVAL_ARTEFACTS") or tmp_path_factory.mktemp("report-artefacts"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nreport screenshots in {folder}")
    return folder


def screenshot(page, artefacts: Path, name: str) -> Path:
    path = artefacts / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def test_a_watched_page_catches_requests_off_disk_console_errors_and_exceptions(browser_context, tmp_path):
    """What every test below relies on: a page that reaches outside its folder, logs an error or
    throws is caught (and its outside requests never sent)."""
    folder = tmp_path / "report"
    folder.mkdir()
    (tmp_path / "beside.css").write_text("body {}", encoding="utf-8")
    (folder / "page.html").write_text(
        '<!DOCTYPE html><html><head><link rel="stylesheet" href="../beside.css"></head><body>'
        '<img src="https://cdn.example.org/x.png"><script>console.error("boom"); undefinedCall();</script>'
        "</body></html>",
        encoding="utf-8",
    )
    watched = Watched(browser_context, folder)
    watched.open(folder / "page.html")
    watched.page.close()
    assert sorted(watched.outside) == sorted(["https://cdn.example.org/x.png", (tmp_path / "beside.css").as_uri()])
    assert any("boom" in error for error in watched.errors)
    assert any("undefinedCall" in error for error in watched.errors)
    with pytest.raises(AssertionError, match="leave the report folder"):
        watched.check()


# ---------------------------------------------------------------- the run and its report

# One response of the run is cut as a model cut at max_tokens records it, so that the `truncated`
# filter has a row to show.
CUT = ("sample_physelite_en", "demo")


def cut_first_response(path: Path) -> None:
    generations = read_jsonl(path, Generation)
    write_jsonl(path, [replace(generations[0], finish_reason="length"), *generations[1:]])


def model_config(model: str):
    """conf/model/<model>.yaml, as the stages compose it."""
    return compose_stage("generate", [f"model={model}", "cell.suite=x"]).model


def real_run(outputs: Path) -> Layout:
    """Fetch, render, generate, judge and aggregate every suite of the plan, as the stages do."""
    layout = Layout(outputs)
    for suite, benchmark in SUITES.items():
        render_sample(outputs, suite, benchmark)
        family = FAMILY[benchmark]
        for model in MODELS:
            generations = layout.generations(family, suite, model)
            cache = outputs.parent / "cache.sqlite"
            generate(
                suite,
                model,
                model_config(model),
                layout.prompts(family, suite),
                generations,
                cache,
                layout.usage(family, suite, model),
            )
            if (suite, model) == CUT:
                cut_first_response(generations)
            for name in JUDGES:
                cfg = compose_stage("judge", [f"judge={name}", f"cell.suite={suite}", f"cell.model={model}"]).judge
                outcome = judge(
                    layout.suite(family, suite),
                    generations,
                    name,
                    cfg,
                    layout.judgments(family, suite, model, name),
                    cache,
                    layout.conversations(family, suite, model, name),
                )
                write_json(layout.judge_usage(family, suite, model, name), outcome.usage)
    for benchmark in FAMILY:
        bench_cfg = compose_stage("aggregate", [f"benchmark={benchmark}"]).benchmark
        suites = {
            suite: compose_stage("render", [f"suite={suite}", f"cell.benchmark={benchmark}"]).suite
            for suite, of in SUITES.items()
            if of == benchmark
        }
        aggregate(benchmark, bench_cfg, PLAN, layout, suites=suites)
    return layout


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Layout:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # configs name the bundled data relative to the repository
        return real_run(tmp_path_factory.mktemp("run") / "outputs")


# A cell's index holds its rows in bodies of 200 (report/cell.py); the sample's cells have a dozen
# rows at most, so the report here has bodies of 2, and every filter and sort of a cell's index is
# tried across bodies as at PhysElite's size.
ROWS_PER_BODY = 2


@pytest.fixture(scope="module")
def report(run) -> Path:
    """The report as its stages write it: each suite's side-by-side pages, each cell's folder, then
    the root."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cell, "ROWS_PER_BODY", ROWS_PER_BODY)
        for suite in SUITES:
            write_side(PLAN, run, suite)
            for model in MODELS:
                write_cell_pages(PLAN, run, suite, model, OmegaConf.to_container(model_config(model), resolve=True))
        write_report(PLAN, run)
    return run.report()


# ---------------------------------------------------------------- a hostile run

# What a model, a release or a gold could hold to script a page or make it fetch: maths asking for a
# link to script, a style that loads a URL, a class and an id of its own, a link out, more of
# MathJax by URL; and raw HTML.
HOSTILE_MATHS = (
    r"$\href{javascript:alert(1)}{x}$",
    r"$\style{background-image:url(http://127.0.0.1:9/leak)}{y}$",
    r"$\class{evil}{z}$ $\cssId{evil}{w}$",
    r"$\href{http://127.0.0.1:9/out}{out}$ $\href{../../../../etc/passwd}{up}$",
    r"\(\require{http://127.0.0.1:9/x.js}\) $\unicode[some-font]{x41}$",
)
HOSTILE_HTML = "<img src=x onerror=alert(3)><script>alert(4)</script><a href=javascript:alert(5)>a</a>"
HOSTILE = " ".join(HOSTILE_MATHS) + " " + HOSTILE_HTML
HOSTILE_GOLD = r"\href{javascript:alert(6)}{W} = \style{background:url(http://127.0.0.1:9/gold)}{275}"
SECRET = "sk-live-0123456789abcdefABCDEF"


@pytest.fixture(scope="module")
def hostile(run, tmp_path_factory) -> Path:
    """A copy of the run whose first HiPhO problem has hostile maths and HTML in its text and its
    gold, and the demo's response to it in its text and its boxed answer (judged again by the real
    judge, so that the extracted answers carry it too); the demo's settings hold a key. Its report
    as the stages write it."""
    outputs = tmp_path_factory.mktemp("hostile") / "outputs"
    shutil.copytree(run.root, outputs)
    layout, suite = Layout(outputs), "sample_hipho"
    problems = read_jsonl(layout.suite("hipho", suite) / "problems.jsonl", Problem)
    target = problems[0]
    gold = replace(target.answers[0], value=HOSTILE_GOLD)
    problems[0] = replace(target, question=f"{target.question} {HOSTILE}", answers=(gold, *target.answers[1:]))
    write_jsonl(layout.suite("hipho", suite) / "problems.jsonl", problems)
    generations = layout.generations("hipho", suite, "demo")
    answered = read_jsonl(generations, Generation)
    answered = [
        replace(g, response=f"{HOSTILE}\n<answer>[\\boxed{{\\href{{javascript:alert(2)}}{{7}}}}]</answer>")
        if g.id == target.id
        else g
        for g in answered
    ]
    write_jsonl(generations, answered)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        for name in JUDGES:
            cfg = compose_stage("judge", [f"judge={name}", f"cell.suite={suite}", "cell.model=demo"]).judge
            judge(
                layout.suite("hipho", suite),
                generations,
                name,
                cfg,
                layout.judgments("hipho", suite, "demo", name),
                outputs.parent / "cache.sqlite",
                layout.conversations("hipho", suite, "demo", name),
            )
        write_side(PLAN, layout, suite)
        for model in MODELS:
            settings = OmegaConf.to_container(model_config(model), resolve=True)
            if model == "demo":
                settings |= {"api_key": SECRET, "headers": {"Authorization": f"Bearer {SECRET}"}, "note": SECRET}
            write_cell_pages(PLAN, layout, suite, model, settings)
        write_report(PLAN, layout)
    return layout.report()


# ---------------------------------------------------------------- reading pages


def cell_links(page) -> list[str]:
    return page.eval_on_selector_all("a.cell-link", "links => [...new Set(links.map(a => a.href))]")


def path_of(url: str) -> Path:
    return Path(unquote(urlparse(url).path))


def cell_index(browse, report: Path, suite: str, model: str):
    """A cell's index page, opened by following the report index's link to it."""
    index = browse(report / "index.html")
    links = [
        url
        for url in cell_links(index)
        if suite in unquote(url)
        and model in unquote(url)
        and not any(other != suite and other.startswith(suite) and other in unquote(url) for other in SUITES)
    ]
    assert len(links) == 1, f"the index links {suite} x {model} {len(links)} times: {cell_links(index)}"
    page = browse(path_of(links[0]))
    page.wait_for_selector(ROW, state="attached")
    return page


def rows(page) -> list[dict]:
    """Every problem row: its data attributes, and whether it is shown."""
    return page.eval_on_selector_all(
        ROW,
        """rows => rows.map(r => ({...r.dataset, shown: !r.hidden,
        visible: r.offsetParent !== null, text: r.textContent}))""",
    )


def shown(page) -> list[str]:
    return [row["id"] for row in rows(page) if row["shown"]]


def shown_count(page) -> int:
    """The live count's number (the first in it: "5", or "5 of 12")."""
    found = re.search(r"\d+", page.text_content("#shown-count") or "")
    assert found, f"no count in #shown-count: {page.text_content('#shown-count')!r}"
    return int(found.group())


def problem_page(browse, report: Path, suite: str, model: str, pick=lambda row: True):
    """The page of the first problem of a cell whose row `pick` accepts, followed from its row's link."""
    index = cell_index(browse, report, suite, model)
    [target] = [row["id"] for row in rows(index) if pick(row)][:1] or [None]
    assert target is not None, f"{suite} x {model}: no problem row as asked"
    href = index.eval_on_selector(f'{ROW}[data-id="{target}"] a[href]', "a => a.href")
    page = browse(path_of(href))
    page.wait_for_selector("section.question", state="attached")
    return target, page


def typeset(page) -> int:
    """Rendered maths nodes, once the typesetter is done (MathJax typesets after load)."""
    page.wait_for_selector(MATH, state="attached", timeout=15_000)
    page.wait_for_function(
        "() => !window.MathJax || !MathJax.startup || !MathJax.startup.promise"
        " || MathJax.startup.promise.then(() => true)"
    )
    return page.eval_on_selector_all(MATH, "nodes => nodes.length")


def images_loaded(page) -> list[tuple[str, int]]:
    """Every img of the page, scrolled into view (so lazy ones load), with its natural width."""
    for handle in page.query_selector_all("img"):
        handle.scroll_into_view_if_needed()
    page.wait_for_function("() => [...document.images].every(i => i.complete)")
    return page.eval_on_selector_all("img", "imgs => imgs.map(i => [i.getAttribute('src'), i.naturalWidth])")


# ---------------------------------------------------------------- the index


def test_the_index_has_charts_and_a_link_to_every_cell(report, browse, artefacts):
    index = browse(report / "index.html")
    assert index.eval_on_selector_all("svg.chart", "charts => charts.length") >= len(FAMILY)
    links = cell_links(index)
    for suite in SUITES:
        for model in MODELS:
            assert any(suite in unquote(url) and model in unquote(url) for url in links), (suite, model, links)
    for url in links:
        assert url.startswith(report.resolve().as_uri()) and path_of(url).is_file(), url
    print(f"index: {screenshot(index, artefacts, 'index')}")


# ---------------------------------------------------------------- a cell's index: filters, search, sorting

DEMO_CELLS = [(suite, "demo") for suite in SUITES]


@pytest.mark.parametrize(("suite", "model"), DEMO_CELLS)
def test_the_status_filter_shows_exactly_the_rows_of_that_status(report, browse, suite, model):
    page = cell_index(browse, report, suite, model)
    every = rows(page)
    assert every and all(row["shown"] for row in every) and shown_count(page) == len(every)
    wanted = {
        "all": lambda row: True,
        "wrong": lambda row: row["status"] == "wrong",
        "judge-error": lambda row: row["status"] == "judge-error",
        "truncated": lambda row: row.get("truncated") == "1",
        "undecided": lambda row: row.get("undecided") == "1",
    }
    options = page.eval_on_selector_all("select#status-filter option", "options => options.map(o => o.value)")
    assert set(wanted) <= set(options), options
    for value in [*wanted, "all"]:
        page.select_option("select#status-filter", value)
        expected = [row["id"] for row in every if wanted[value](row)]
        assert shown(page) == expected, value
        assert shown_count(page) == len(expected), value
        assert all(row["visible"] == row["shown"] for row in rows(page)), "a hidden row still takes space"


def test_the_truncated_filter_shows_the_cut_response(report, browse):
    page = cell_index(browse, report, *CUT)
    page.select_option("select#status-filter", "truncated")
    [cut] = shown(page)
    assert cut == rows(page)[0]["id"] and shown_count(page) == 1


def test_the_demo_is_wrong_somewhere_so_the_wrong_filter_hides_rows(report, browse, artefacts):
    page = cell_index(browse, report, "sample_hipho", "demo")
    page.select_option("select#status-filter", "wrong")
    assert 0 < len(shown(page)) < len(rows(page))
    screenshot(page, artefacts, "cell-index-wrong")


@pytest.mark.parametrize(("suite", "model"), DEMO_CELLS[:2])
def test_search_narrows_the_rows_and_clearing_it_brings_them_back(report, browse, suite, model):
    page = cell_index(browse, report, suite, model)
    every = [row["id"] for row in rows(page)]
    target = every[-1]
    page.fill("input#search", target)
    narrowed = shown(page)
    assert target in narrowed and len(narrowed) < len(every)
    assert all(target.lower() in row["text"].lower() for row in rows(page) if row["shown"])
    assert shown_count(page) == len(narrowed)
    page.fill("input#search", "no problem is called this")
    assert shown(page) == [] and shown_count(page) == 0
    page.fill("input#search", "")
    assert shown(page) == every and shown_count(page) == len(every)


@pytest.mark.parametrize(("suite", "model"), DEMO_CELLS)
def test_the_group_filter_shows_one_group_and_the_groups_cover_the_cell(report, browse, suite, model):
    page = cell_index(browse, report, suite, model)
    every = rows(page)
    groups = [
        v for v in page.eval_on_selector_all("select#group-filter option", "os => os.map(o => o.value)") if v != "all"
    ]
    assert sorted(groups) == sorted({row["group"] for row in every})
    seen = []
    for group in groups:
        page.select_option("select#group-filter", group)
        ids = shown(page)
        assert ids == [row["id"] for row in every if row["group"] == group] and shown_count(page) == len(ids)
        seen += ids
    assert sorted(seen) == sorted(row["id"] for row in every)
    page.select_option("select#group-filter", "all")
    assert len(shown(page)) == len(every)


def test_filters_combine(report, browse):
    page = cell_index(browse, report, "sample_hipho", "demo")
    every = rows(page)
    wrong = [row for row in every if row["status"] == "wrong"]
    group = wrong[0]["group"]
    page.select_option("select#status-filter", "wrong")
    page.select_option("select#group-filter", group)
    assert shown(page) == [row["id"] for row in wrong if row["group"] == group]


@pytest.mark.parametrize(("suite", "model"), [("sample_physelite_en", "demo"), ("sample_hipho", "demo")])
def test_sorting_by_a_column_reorders_the_rows_both_ways(report, browse, suite, model):
    page = cell_index(browse, report, suite, model)
    before = [row["id"] for row in rows(page)]
    headers = page.eval_on_selector_all("th[data-sort]", "ths => ths.map(th => th.dataset.sort)")
    assert headers, "no sortable column"
    reordered = False
    for key in headers:
        header = page.locator(f'th[data-sort="{key}"]').first
        header.click()
        once = [row["id"] for row in rows(page)]
        header.click()
        twice = [row["id"] for row in rows(page)]
        assert sorted(once) == sorted(before) == sorted(twice), key
        values = page.eval_on_selector_all(ROW, "rs => rs.map(r => r.dataset.id)")
        assert values == twice
        if once != twice:
            reordered = True
    assert reordered, f"no column of {headers} reorders the rows when clicked again"


def test_sorting_by_score_orders_by_the_score(report, browse):
    page = cell_index(browse, report, "sample_hipho", "demo")
    keys = page.eval_on_selector_all("th[data-sort]", "ths => ths.map(th => th.dataset.sort)")
    assert "score" in keys, keys
    header = page.locator('th[data-sort="score"]').first
    header.click()
    first = [float(row["score"]) for row in rows(page)]
    header.click()
    second = [float(row["score"]) for row in rows(page)]
    assert {tuple(first), tuple(second)} == {tuple(sorted(first)), tuple(sorted(first, reverse=True))}
    assert first != second


def test_a_filter_still_applies_after_sorting(report, browse):
    page = cell_index(browse, report, "sample_hipho", "demo")
    page.select_option("select#status-filter", "wrong")
    wrong = set(shown(page))
    page.locator("th[data-sort]").first.click()
    assert set(shown(page)) == wrong and shown_count(page) == len(wrong)


def bodies(page) -> list[dict]:
    """Each body of a cell's index: the ids of its rows, those shown, and its own state."""
    return page.eval_on_selector_all(
        "table.problems > tbody",
        """bodies => bodies.map(b => ({ids: [...b.rows].map(r => r.dataset.id),
        shown: [...b.rows].filter(r => !r.hidden).length, hidden: b.hidden, rows: b.dataset.rows,
        height: b.getBoundingClientRect().height}))""",
    )


def test_a_filtered_or_sorted_index_keeps_its_bodies_sized_by_the_rows_they_show(report, browse):
    """Rows come in bodies (ROWS_PER_BODY here), each laid out only on screen and otherwise sized
    by the rows it shows: a filter hides a body it empties and resizes the others, and a sort deals
    the rows out again, the bodies as full as before."""
    page = cell_index(browse, report, "sample_hipho", "demo")
    before = bodies(page)
    assert len(before) > 1 and all(len(b["ids"]) == ROWS_PER_BODY for b in before[:-1]), before
    page.select_option("select#status-filter", "wrong")
    for body in bodies(page):
        assert body["rows"] == str(body["shown"]) and body["hidden"] == (body["shown"] == 0), body
        assert (body["height"] > 0) == (body["shown"] > 0), body  # an emptied body takes no space
    assert 0 < sum(b["shown"] for b in bodies(page)) < sum(len(b["ids"]) for b in before)
    page.locator('th[data-sort="score"]').first.click()
    sorted_bodies = bodies(page)
    assert [len(b["ids"]) for b in sorted_bodies] == [len(b["ids"]) for b in before]
    assert [i for b in sorted_bodies for i in b["ids"]] != [i for b in before for i in b["ids"]]
    assert all(b["rows"] == str(b["shown"]) for b in sorted_bodies)
    page.select_option("select#status-filter", "all")
    assert all(not b["hidden"] and b["shown"] == len(b["ids"]) for b in bodies(page))


# ---------------------------------------------------------------- maths, raw text, figures


@pytest.mark.parametrize("suite", list(SUITES))
def test_maths_is_typeset_and_its_raw_text_is_one_click_away(report, browse, suite):
    _, page = problem_page(browse, report, suite, "demo")
    assert typeset(page) > 0
    assert page.locator(".math-text").count() > 0
    # the first raw text with maths in it ($...$, \\(...\\), \\[...\\]): hidden until its control
    # (button.show-raw or details.raw) is clicked
    holders = page.locator("details.raw, button.show-raw")
    assert holders.count() >= page.locator(".math-text").count()
    # a solution, the full prompt; not a judge conversation, whose messages are raw text as sent
    page.evaluate(
        "document.querySelectorAll('details:not(.raw)').forEach(d => d.open = !d.closest('details.conversation'))"
    )
    found = page.evaluate("""() => { const h = [...document.querySelectorAll('details.raw, button.show-raw')].find(h =>
        h.checkVisibility() && /\\$|\\\\\\(|\\\\\\[/.test(h.matches('details')
            ? h.querySelector('pre, code, div').textContent : (h.dataset.raw || h.nextElementSibling.textContent)));
        if (h) h.setAttribute('data-test-raw', '1'); return Boolean(h); }""")
    assert found, "no raw text with maths on the page"
    holder = page.locator("[data-test-raw]")
    raw = holder.evaluate(
        "h => h.matches('details') ? h.querySelector('pre, code, div').textContent"
        " : (h.dataset.raw || h.nextElementSibling.textContent)"
    )
    start = min(at for at in (raw.find("$"), raw.find("\\("), raw.find("\\[")) if at >= 0)
    snippet = raw[start : start + 24].split("\n")[0]  # LaTeX as written: typeset, it reads otherwise
    assert snippet not in page.inner_text("body"), "the raw text shows before it is asked for"
    (holder.locator("summary") if holder.evaluate("h => h.matches('details')") else holder).click()
    assert snippet in page.inner_text("body")


def test_latex_in_the_sample_is_typeset_not_left_raw(report, browse):
    """The HiPhO sample's questions are full of $...$: none is left on the page as text to read."""
    _, page = problem_page(browse, report, "sample_hipho", "reference")
    typeset(page)
    question = page.locator("section.question")
    rendered = question.evaluate("""q => { const c = q.cloneNode(true);
        c.querySelectorAll('mjx-container, .katex, pre, code, .raw, script, button').forEach(n => n.remove());
        return c.textContent; }""")
    assert question.locator(MATH).count() > 0
    assert "\\frac" not in rendered and "$" not in rendered, rendered[:2000]


@pytest.mark.parametrize("suite", ["sample_hipho", "sample_mathvision", "sample_physelite_en"])
def test_every_figure_of_a_cell_loads(report, browse, suite):
    index = cell_index(browse, report, suite, "demo")
    hrefs = index.eval_on_selector_all(f"{ROW} a[href]", "links => [...new Set(links.map(a => a.href))]")
    figures = 0
    for href in hrefs:
        if "#" in href and path_of(href) == path_of(index.url):
            continue
        page = browse(path_of(href))
        for src, width in images_loaded(page):
            assert width > 0, f"{page.url}: {src} did not load"
            figures += 1
        page.close()
    assert figures, f"{suite}: no figure on any problem page (the sample has some)"


# ---------------------------------------------------------------- problem pages


def shots(page, artefacts: Path, name: str, section: str) -> None:
    """The page as it opens, and its `section` (where the page has it), kept as artefacts."""
    typeset(page)
    print(f"{name}: {screenshot(page, artefacts, name)}")
    if page.locator(section).count():
        page.locator(section).first.screenshot(path=str(artefacts / f"{name}-{section.split('.')[-1]}.png"))


def judgment_of(page, judge_name: str):
    """What one judge of the plan made of the page's (first) sample: its `div.judgment`."""
    judgments = page.locator(f'section.sample div.judgment[data-judge="{judge_name}"]')
    assert judgments.count() > 0, f"no judgment by {judge_name} on {page.url}"
    return judgments.first


def judge_section(page, css: str, judge_name: str):
    section = judgment_of(page, judge_name).locator(f"section.{css}")
    assert section.count() == 1, f"{section.count()} section.{css} for judge {judge_name}"
    return section.first


def test_a_hipho_problem_page_shows_every_criterion_with_points_award_and_reason(report, browse, artefacts):
    _, page = problem_page(browse, report, "sample_hipho", "demo", lambda row: row["status"] != "correct")
    shots(page, artefacts, "hipho-problem", "section.criteria")
    for section in ("question", "sample", "answers", "rules", "metadata"):
        assert page.locator(f"section.{section}").count() > 0, section
    section = judge_section(page, "criteria", "scripted")
    table = section.locator("table.criteria").first
    heads = [h.lower() for h in table.locator("thead th").all_text_contents()]
    for column in ("criterion", "points", "award", "reason"):
        assert any(column in head for head in heads), heads
    body = table.locator("tbody tr")
    assert body.count() > 0
    cells = body.first.locator("td").all_text_contents()
    assert len(cells) >= 4 and all(c.strip() for c in cells[:2])
    text = section.text_content()
    assert "Scripted: the criterion is not met." in text  # the scripted judge's reason
    assert "scheme" in text and "answer level" in text and "step level" in text
    section.screenshot(path=str(artefacts / "hipho-criteria-scripted.png"))


@pytest.mark.parametrize("suite", ["sample_physelite_en", "sample_physelite_zh"])
def test_a_physelite_problem_page_shows_verdicts_per_judge_and_a_steps_table(report, browse, artefacts, suite):
    _, page = problem_page(browse, report, suite, "demo")
    shots(page, artefacts, f"{suite}-problem", "section.verdicts")
    section = judge_section(page, "verdicts", "scripted")
    assert "Scripted: matches the reference." in section.text_content() or "Scripted." in section.text_content()
    steps = judgment_of(page, "scripted").locator("table.steps")
    assert steps.count() > 0 and steps.first.locator("tbody tr").count() > 0
    assert any("grade" in head.lower() for head in steps.first.locator("thead th").all_text_contents())
    assert "Scripted step." in steps.first.text_content()
    section.screenshot(path=str(artefacts / f"{suite}-verdicts-scripted.png"))


def test_chinese_text_is_on_the_page_as_text(report, browse):
    _, page = problem_page(browse, report, "sample_physelite_zh", "demo")
    question = page.locator("section.question").text_content()
    assert any("\u4e00" <= ch <= "\u9fff" for ch in question)
    assert page.evaluate("document.documentElement.lang").startswith("zh")


def side_page(browse, report: Path, suite: str = "sample_hipho", pick=lambda row: True):
    """A problem's side-by-side page, followed from the link on the demo's page of it, once the
    viewer has filled in every model's column and typeset them."""
    problem, page = problem_page(browse, report, suite, "demo", pick)
    link = page.locator("a.side-link")
    assert link.count() == 1, "no link to the side-by-side page"
    side = browse(path_of(link.evaluate("a => a.href")))
    side.wait_for_selector("body[data-typeset='1']", state="attached", timeout=30_000)
    return problem, side


def test_the_side_by_side_page_shows_the_problem_then_every_model_s_response_answers_and_verdicts(
    run, report, browse, artefacts
):
    # a problem the demo got wrong, with a figure (DemoPhO's first)
    problem, page = side_page(
        browse, report, pick=lambda row: row["status"] == "wrong" and row["id"].startswith("DemoPhO_")
    )
    figures = images_loaded(page)
    assert figures and all(width > 0 for _, width in figures)
    prompts = {p.id: p for p in read_jsonl(run.prompts("hipho", "sample_hipho"), Prompt)}
    own = next(p for p in read_jsonl(run.suite("hipho", "sample_hipho") / "problems.jsonl", Problem) if p.id == problem)
    question = page.locator("section.question")
    # the problem's own text first, the instructions of the prompt one click away
    assert own.question[:12] in question.inner_text().replace("\n", "")
    instructions = prompts[problem].messages[-1]["content"][0]["text"].split(own.context[:20])[0].strip()
    assert instructions and instructions[:30] not in page.locator("body").inner_text()
    columns = page.locator("article.column")
    assert [c.get_attribute("data-model") for c in columns.all()] == MODELS  # the plan's order
    assert question.bounding_box()["y"] < columns.first.bounding_box()["y"]
    for model in MODELS:
        column = page.locator(f'article.column[data-model="{model}"]')
        [generation] = [
            g
            for g in read_jsonl(run.generations("hipho", "sample_hipho", model), Generation)
            if g.id == problem and g.sample == 0
        ]
        raw = column.locator("div.response details.raw pre").first.text_content()
        assert raw == generation.response  # the whole response, as the model wrote it
        # its boxed answer (outside the maths: `[\\boxed{v = ...}]`) typeset, no `\\boxed{` left as text
        assert "\\boxed" in raw and "\\boxed" not in text_outside_maths(column.locator("div.response .math-text").first)
        assert column.locator("p.extracted mjx-container").count() > 0  # the extracted answers, typeset
        verdicts = column.locator("table.side-verdicts tbody tr")
        assert [row.get_attribute("data-judge") for row in verdicts.all()] == JUDGES
        heads = column.locator("table.side-verdicts thead th").all_text_contents()
        assert heads == ["judge", "status", "points", "verdict", "conversation"]
        link = column.locator("a", has_text="this model's page of the problem")
        assert path_of(link.evaluate("a => a.href")).is_file()
    # one colour per model: the column's, the charts'
    index = browse(report / "index.html")
    legend = index.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('svg.chart g.legend-key')].map(g => "
        "[g.dataset.series, g.dataset.colour]))"
    )
    for model in MODELS:
        colour = page.locator(f'article.column[data-model="{model}"]').evaluate(
            "c => c.style.getPropertyValue('--model')"
        )
        assert colour == legend[model], (model, colour, legend)
    page.set_viewport_size({"width": SCREEN["width"], "height": 1400})
    # from the gold answers down: the models' columns, their answers and verdicts (the figure is above)
    page.locator("table.gold").first.evaluate("t => { t.scrollIntoView({block: 'start'}); window.scrollBy(0, -60); }")
    print(f"side by side: {screenshot(page, artefacts, 'side-by-side')}")


def test_a_judge_conversation_opens_on_a_click_and_shows_the_prompt_sent_and_the_raw_reply(
    run, report, browse, artefacts
):
    problem, page = problem_page(
        browse,
        report,
        "sample_hipho",
        "demo",
        lambda row: row["status"] == "wrong" and row["id"].startswith("DemoPhO_"),
    )
    [talk] = [
        c
        for c in read_jsonl(run.conversations("hipho", "sample_hipho", "demo", "scripted"), Conversation)
        if c.id == problem and c.sample == 0
    ]
    first = talk.tasks[0]
    sent = [part["text"] for message in first["messages"] for part in content_parts(message) if "text" in part]
    own = next(p for p in read_jsonl(run.suite("hipho", "sample_hipho") / "problems.jsonl", Problem) if p.id == problem)
    assert any(own.question in text for text in sent)  # what the judge was sent holds the problem
    conversation = judgment_of(page, "scripted").locator("details.conversation")
    assert conversation.count() == 1 and conversation.get_attribute("open") is None
    task = conversation.locator("details.task").first
    assert not task.is_visible()  # collapsed
    conversation.locator(":scope > summary").click()
    task.locator(":scope > summary").click()
    shown = task.locator("pre.sent-text").all_text_contents()
    assert shown == sent  # the first task's messages whole, as sent
    reply = task.locator("pre.reply-text").first.text_content()
    assert reply == first["replies"]["scripted"][0]["text"] and "Scripted: the criterion is not met." in reply
    # a later task names what it repeats of the first and shows what differs (its criterion)
    later = conversation.locator("details.task").nth(1)
    later.locator(":scope > summary").click()
    user = later.locator("pre.sent-text").nth(1).text_content()
    assert "characters as in criterion 1.1" in user and own.marking[0][1].text in user
    # the rule judge asks no one: it has no conversation
    assert judgment_of(page, "rule").locator("details.conversation").count() == 0
    conversation.scroll_into_view_if_needed()
    typeset(page)
    page.set_viewport_size({"width": SCREEN["width"], "height": 1300})
    conversation.evaluate("c => c.scrollIntoView({block: 'start'})")
    print(f"judge conversation: {screenshot(page, artefacts, 'hipho-conversation')}")


def test_a_problem_page_numbers_each_criterion_once_in_its_table_and_its_judge_conversation(report, browse):
    """The marking table's 1.1 ... 2.3 are the conversation's criteria 1.1 ... 2.3, each the same
    criterion (the table's text is what was sent about it); answer slots likewise, from 1."""
    _, page = problem_page(browse, report, "sample_hipho", "demo", lambda row: row["id"].startswith("DemoPhO_"))
    judgment = judgment_of(page, "scripted")
    table = judgment.locator("table.criteria tbody tr")
    numbered = {
        row.locator("td").nth(0).text_content(): row.locator("td").nth(1).locator("details.raw pre").text_content()
        for row in table.all()
    }
    assert list(numbered)[:2] == ["1.1", "1.2"]
    tasks = judgment.locator("details.conversation details.task")
    labels = {}
    for task in tasks.all():
        label = task.locator(":scope > summary").text_content().split(":")[0]
        labels[label] = task.locator("pre.sent-text").all_text_contents()
    assert {label for label in labels if label.startswith("criterion")} == {f"criterion {n}" for n in numbered}
    for n, criterion in numbered.items():
        assert any(criterion in sent for sent in labels[f"criterion {n}"]), n  # the same criterion
    slots = judgment.locator("table.slot-judgments tbody tr td:first-child").all_text_contents()
    assert {label for label in labels if label.startswith("answer slot")} == {f"answer slot {n}" for n in slots}
    # one reply to each task: no label over it (a re-ask would say which ask each answered)
    assert judgment.locator("details.conversation p.ask").count() == 0


def test_a_side_by_side_column_links_its_judge_conversation_open(report, browse):
    _, page = side_page(browse, report)
    link = page.locator('article.column[data-model="demo"] tr[data-judge="scripted"] a', has_text="conversation")
    href = link.evaluate("a => a.href")
    anchor = unquote(href.split("#", 1)[1])
    target = browse(path_of(href))
    assert not target.evaluate(f"() => document.getElementById({anchor!r}).open")
    target.goto(href)  # the link followed: the conversation it names opens
    target.wait_for_function(f"() => document.getElementById({anchor!r}).open")


def test_each_sample_shows_its_finish_reason_and_that_an_offline_model_sent_no_request(report, browse):
    # the sample's models are offline (reference, replay): a served model's tokens, retries and reply
    # date are tests/test_report.py's
    _, page = problem_page(browse, report, *CUT, lambda row: row.get("truncated") == "1")
    said = page.locator("section.sample dl.sample-facts").first.inner_text()
    assert "finish reason\nlength" in said
    assert "request\nnone: an offline provider" in said and "tokens\n" not in said


# ---------------------------------------------------------------- the new filters, the view in the URL


def test_judges_disagree_keeps_the_problems_the_plan_s_judges_scored_apart(run, report, browse, artefacts):
    suite = "sample_physelite_en"
    scores = {
        judge: {
            (j.id, j.sample): j.score for j in read_jsonl(run.judgments("physelite", suite, "demo", judge), Judgment)
        }
        for judge in JUDGES
    }
    apart = sorted({key[0] for key in scores["rule"] if scores["rule"][key] != scores["scripted"].get(key)})
    page = cell_index(browse, report, suite, "demo")
    every = [row["id"] for row in rows(page)]
    assert apart and len(apart) < len(every)  # the sample has both: the filter must narrow
    page.check("input#judges-disagree")
    assert sorted(shown(page)) == apart and shown_count(page) == len(apart)
    print(f"judges disagree: {screenshot(page, artefacts, 'cell-judges-disagree')}")
    page.uncheck("input#judges-disagree")
    assert shown(page) == every


def test_models_disagree_keeps_the_problems_the_plan_s_models_scored_apart(report, browse):
    statuses = {
        model: {row["id"]: row["status"] for row in rows(cell_index(browse, report, "sample_hipho", model))}
        for model in MODELS
    }
    apart = sorted(p for p in statuses["demo"] if statuses["demo"][p] != statuses["reference"][p])
    page = cell_index(browse, report, "sample_hipho", "demo")
    assert apart and len(apart) < len(rows(page))
    page.check("input#models-disagree")
    assert sorted(shown(page)) == apart and shown_count(page) == len(apart)


def test_a_url_with_a_view_reopens_it_and_the_controls_write_the_view_into_the_url(report, browse):
    page = cell_index(browse, report, "sample_hipho", "demo")
    every = rows(page)
    group = every[0]["group"]
    page.select_option("select#group-filter", group)
    page.check("input#models-disagree")
    page.locator('th[data-sort="score"]').click()
    page.locator('th[data-sort="score"]').click()  # descending
    url = page.url
    view = dict(item.split("=") for item in url.split("#", 1)[1].split("&"))
    assert view == {"group": group, "md": "1", "sort": "score", "order": "desc"}, url
    wanted, order = shown(page), [row["id"] for row in rows(page)]
    again = browse(path_of(url))
    again.goto(url)
    again.wait_for_selector(ROW, state="attached")
    assert shown(again) == wanted and [row["id"] for row in rows(again)] == order
    assert again.eval_on_selector("select#group-filter", "s => s.value") == group
    assert again.is_checked("input#models-disagree")
    assert again.get_attribute('th[data-sort="score"]', "aria-sort") == "descending"
    assert shown_count(again) == len(wanted) < len(every)
    # a search typed in reopens too
    target = every[-1]["id"]
    again.fill("input#search", target)
    third = browse(path_of(again.url))
    third.goto(again.url)
    third.wait_for_selector(ROW, state="attached")
    assert third.input_value("input#search") == target and shown(third) == shown(again)


def test_clicking_a_chart_bar_lands_on_the_cell_index_filtered_to_it(report, browse, artefacts):
    index = browse(report / "index.html")
    bar = index.locator("svg.chart g.bar > a.bar-link[href*='/demo/'][href*='#group=']").first
    href = bar.get_attribute("href")
    cell, group = href.split("#group=")
    with index.expect_navigation():
        bar.locator("path").first.click()
    assert index.url == (report / cell).resolve().as_uri() + "#group=" + group
    index.wait_for_selector(ROW, state="attached")
    group = unquote(group.replace("+", " "))
    assert index.eval_on_selector("select#group-filter", "s => s.value") == group
    kept = [row for row in rows(index) if row["shown"]]
    assert kept and all(row["group"] == group for row in kept) and len(kept) < len(rows(index))
    print(f"filtered cell: {screenshot(index, artefacts, 'cell-filtered')}")


# ---------------------------------------------------------------- what looked wrong


def leaderboard_rows(index) -> list[dict]:
    """The leaderboard's rows: the model, the judges it stands for, each score as shown and its link."""
    return index.eval_on_selector_all(
        "table.leaderboard tbody tr",
        """rows => rows.map(r => ({model: r.querySelector('th').textContent, judges: r.cells[1].textContent,
        scores: [...r.querySelectorAll('td.score')].map(c => c.textContent),
        links: [...r.querySelectorAll('td.score')].map(c => (c.querySelector('a.cell-link') || {}).href)}))""",
    )


def test_the_first_screen_is_the_leaderboard_with_each_score_linking_its_cell(run, report, browse, artefacts):
    """A row per model (and judge: judges that gave every score alike share one), a column per suite,
    each score with its 95% interval as `olympiad-eval leaderboard` prints it, linking its cell's
    index: all of it on the first screen, before any chart."""
    index = browse(report / "index.html")
    board = index.locator("table.leaderboard")
    box = board.bounding_box()
    assert (
        box["y"] + box["height"] <= SCREEN["height"] and box["y"] < index.locator("svg.chart").first.bounding_box()["y"]
    )
    heads = index.eval_on_selector_all("table.leaderboard thead th", "ths => ths.map(t => t.textContent)")
    order = [suite for benchmark in sorted(FAMILY) for suite in SUITES if SUITES[suite] == benchmark]
    assert [head for head in heads if head in SUITES] == order  # a column per suite, under its benchmark
    expected = []
    for model in MODELS:
        by_scores: dict[tuple, list[str]] = {}
        for name in JUDGES:
            texts = tuple(
                score_text(json.loads(run.metrics(SUITES[suite], suite, model, name).read_text())) for suite in order
            )
            by_scores.setdefault(texts, []).append(name)
        expected += [
            {"model": model, "judges": ", ".join(judges), "scores": list(t)} for t, judges in by_scores.items()
        ]
    board_rows = leaderboard_rows(index)
    assert [{key: row[key] for key in ("model", "judges", "scores")} for row in board_rows] == expected
    assert {"model": "reference", "judges": "rule, scripted"}.items() <= board_rows[0].items()  # alike: one row
    for row in board_rows:
        for suite, link in zip(order, row["links"]):
            assert (
                path_of(link) == (run.report_cell(FAMILY[SUITES[suite]], suite, row["model"]) / "index.html").resolve()
            )
    print(f"index: {screenshot(index, artefacts, 'index')}")


def wide_tables() -> dict[str, pd.DataFrame]:
    """Tables as wide as the real releases make them: HiPhO's 14 exams and MATH-Vision's 16 subjects
    for models of long names, each under two judges that scored apart, and a summary of every column
    over three suites with failures counted."""
    models = ["Qwen/Qwen2.5-VL-72B-Instruct", "gemini-2.5-pro-preview-06-05", "claude-opus-4-1-20250805", "gpt-4o"]
    names = ("IPhO", "APhO", "EuPhO", "NBPhO", "PanPhO", "PanMechanics", "F=MA")
    exams = [f"{name}_{year}" for name in names for year in (2024, 2025)]
    subjects = "algebra, analytic geometry, arithmetic, combinatorial geometry, combinatorics, counting, descriptive "
    subjects += "geometry, graph theory, logic, metric geometry - angle, metric geometry - area, metric geometry - "
    subjects += "length, solid geometry, statistics, topology, transformation geometry"
    cells = [(m, j, 12.35 if j == "gpt-4o" else 45.6) for m in models for j in ("gpt-4o", "physelite-ensemble")]
    protocol = "hipho olympiad_eval v4 (prompts hipho_answer_judge v2, hipho_criterion_judge v1)"
    keys = lambda suite, m, j: {"suite": suite, "model": m, "judge": j}  # noqa: E731
    counts = {"problems": 403, "samples": 1, "scored": 398, "judge errors": 3, "undecided": 0}
    counts |= {"failed generations": 2, "refusals": 0, "truncated": 7, "score (%)": 66.67}
    counts |= {"95% CI low": 58.57, "95% CI high": 74.02, "generation tokens": 2_345_678, "generation cost ($)": 12.5}
    counts |= {
        "judge tokens": 9_876_543,
        "judge cost ($)": 30.25,
        "protocol": protocol,
        "judge config": "j@0123456789ab",
    }
    return {
        "exam scores": pd.DataFrame(
            [keys("hipho", m, j) | {e: v for e in exams} | {"protocol": protocol} for m, j, v in cells]
        ),
        "accuracy by subject": pd.DataFrame(
            [keys("mathvision", m, j) | {s: v for s in subjects.split(", ")} | {"protocol": "p"} for m, j, v in cells]
        ),
        "summary": pd.DataFrame(
            [
                keys(suite, m, j) | counts
                for suite in ("hipho", "hipho_evalscope", "hipho_vlmevalkit")
                for m, j, _ in cells
            ]
        ),
    }


# Each table shown: its width, whether it stays within the page's column of text, and whether its frame
# scrolls sideways.
TABLE_WIDTHS = """() => {
    const body = document.body.getBoundingClientRect();
    const edge = body.right - parseFloat(getComputedStyle(document.body).paddingRight) + 0.5;
    return [...document.querySelectorAll('table')].filter(t => t.checkVisibility()).map(t => {
        const frame = t.closest('.table-wrap'), box = t.getBoundingClientRect();
        return {width: Math.round(box.width), inside: box.right <= edge,
                scrolls: Boolean(frame && frame.scrollWidth > frame.clientWidth + 1),
                first: t.querySelector('th') && t.querySelector('th').textContent};
    });
}"""


def test_every_table_fits_a_1400_pixel_screen(report, browse, browser_context, tmp_path):
    """The index's tables at 1,400 px: none wider than the page, none scrolling sideways; and tables
    as wide as the real releases make them (14 exams, 16 subjects, every summary column) too."""
    index = browse(report / "index.html")
    assert index.evaluate("document.documentElement.scrollWidth") <= SCREEN["width"]
    tables = index.evaluate(TABLE_WIDTHS)
    assert len(tables) > len(FAMILY) * 3
    assert not [t for t in tables if t["scrolls"] or not t["inside"]], tables
    print("index tables at 1,400 px, widths:", sorted(t["width"] for t in tables))
    folder = tmp_path / "report"
    write_assets(folder / "assets")
    chunks = [f"<h3>{name}</h3>" + table_html(frame, f"{name}.csv") for name, frame in wide_tables().items()]
    html.write_page(folder / "wide.html", "wide tables", "assets", chunks)
    watched = Watched(browser_context, folder)
    wide = watched.open(folder / "wide.html")
    measured = wide.evaluate(TABLE_WIDTHS)
    print("real-sized tables at 1,400 px, widths:", [t["width"] for t in measured])
    assert len(measured) == 3 and not [t for t in measured if t["scrolls"] or not t["inside"]], measured
    wide.locator("details.all-columns").first.evaluate("d => d.open = true")  # the whole table: in its own frame
    assert wide.evaluate("document.documentElement.scrollWidth") <= SCREEN["width"]
    watched.page.close()
    watched.check()


CHART_GEOMETRY = """charts => charts.map(svg => {
    const box = e => e.getBoundingClientRect();
    const width = box(svg).width, frame = box(svg);
    const legend = [...svg.querySelectorAll('g.legend-key')].map(g => [g.dataset.series, g.dataset.colour]);
    const bars = [...svg.querySelectorAll('g.bar')].map(g => [g.dataset.series, g.dataset.colour]);
    const clash = [];
    const values = [...svg.querySelectorAll('g.value text')];
    const marks = [...svg.querySelectorAll('g.bar path, g.whisker path')];
    for (const v of values) { const b = box(v);
        for (const m of marks) { const r = box(m); if (!r.width) continue;
            if (b.x < r.x + r.width - 0.5 && r.x < b.x + b.width && b.y < r.y + r.height && r.y < b.y + b.height)
                clash.push(v.textContent); } }
    const outside = [...svg.querySelectorAll('text')].filter(t => box(t).left < frame.left - 0.5
        || box(t).right > frame.right + 0.5 || box(t).bottom > frame.bottom + 0.5).map(t => t.textContent);
    return {title: svg.getAttribute('aria-label'), legend, bars, clash, outside, height: frame.height,
            ticks: [...svg.querySelectorAll('g.tick text')].map(t => t.textContent),
            grid: svg.querySelectorAll('g.grid').length,
            caption: svg.closest('figure').querySelector('figcaption').textContent,
            texts: [...svg.querySelectorAll('text')].map(t => t.textContent)};
})"""


def test_charts_start_at_0_with_gridlines_name_every_series_and_grow_with_their_bars(report, browse):
    index = browse(report / "index.html")
    charts = index.eval_on_selector_all("svg.chart", CHART_GEOMETRY)
    assert len(charts) >= len(FAMILY) * 2
    for chart in charts:
        title = chart["title"]
        assert {s for s, _ in chart["legend"]} == {s for s, _ in chart["bars"]}, title  # every series, named
        assert not chart["clash"], f"{title}: values on a bar or whisker: {chart['clash']}"
        assert not chart["outside"], f"{title}: text cut at the chart's edge: {chart['outside']}"
        assert chart["ticks"][0] == "0" and len(chart["ticks"]) >= 3 and chart["grid"] == len(chart["ticks"]), title
        assert chart["caption"] == title and title not in chart["texts"], title  # the title once, as the caption
        assert chart["height"] <= 100 + 16 * len(chart["bars"]), (title, chart["height"], len(chart["bars"]))
    scores = [chart for chart in charts if chart["title"].endswith("score per model, with its 95% interval")]
    assert all(chart["ticks"] == ["0", "20", "40", "60", "80", "100"] for chart in scores)
    assert index.locator("svg.chart g.whisker").count() > 0  # the intervals, drawn
    by_model: dict[str, set] = {}
    for chart in charts:
        for series, colour in chart["legend"]:
            if series.split(" / ")[0] in MODELS:
                by_model.setdefault(series.split(" / ")[0], set()).add(colour)
    assert set(by_model) == set(MODELS) and all(len(c) == 1 for c in by_model.values()), by_model
    assert len({next(iter(c)) for c in by_model.values()}) == len(MODELS)


def test_a_paper_sized_chart_fits_its_legend_labels_and_values_in_its_width(browser_context, tmp_path):
    """30 models, each judged twice, with names as long as real ones, on six suites: the legend takes
    as many lines as its entries need, and no label, value or legend entry leaves the chart."""
    from olympiad_eval.report.charts import PALETTE, Bar, bar_chart

    models = [f"vendor-{index}/model-{index}-large-instruct-2025-09-29" for index in range(30)]
    suites = ["hipho", "physelite-zh", "physelite-en", "mathvision", "olympiadbench maths and physics, every subset"]
    bars = [
        Bar(suite, f"{model} / {judge}", 40 + index, 30 + index, 55 + index, colour=PALETTE[index % 12])
        for suite in suites
        for index, model in enumerate(models)
        for judge in ("rules", "official")
    ]
    page_path = tmp_path / "chart.html"
    page_path.write_text(
        '<!doctype html><meta charset="utf-8"><body style="width: 1200px">'
        + bar_chart("a paper's plan: score per model", "%", bars)
        + "</body>",
        encoding="utf-8",
    )
    watched = Watched(browser_context, tmp_path)
    (chart,) = watched.open(page_path).eval_on_selector_all("svg.chart", CHART_GEOMETRY)
    assert {series for series, _ in chart["legend"]} == {bar.series for bar in bars}
    assert not chart["outside"], f"text cut at the chart's edge: {chart['outside'][:5]}"
    assert not chart["clash"], f"values on a bar or whisker: {chart['clash'][:5]}"
    assert len(chart["bars"]) == len(bars)
    watched.page.close()
    watched.check()


def text_outside_maths(element) -> str:
    """An element's text less its typeset maths and its raw text (one click away)."""
    return element.evaluate(
        "t => { const c = t.cloneNode(true); c.querySelectorAll('mjx-container, details').forEach(n => n.remove());"
        " return c.textContent; }"
    )


def test_golds_are_typeset_without_a_literal_boxed_and_empty_slots_show_a_dash(report, browse):
    _, page = problem_page(browse, report, "sample_hipho", "demo")
    typeset(page)
    gold = page.locator("table.gold").first
    shown = text_outside_maths(gold)
    assert "boxed" not in shown and "$" not in shown
    assert gold.locator("mjx-container").count() > 0
    index = cell_index(browse, report, "sample_hipho", "demo")
    extracted = index.eval_on_selector_all(f"{ROW} td:last-child", "cells => cells.map(c => c.textContent)")
    assert not [e for e in extracted if e.startswith(";") or "; ;" in e or e.endswith("; ")], extracted


def test_a_cell_index_typesets_its_extracted_answers_and_its_search_still_finds_them(run, report, browse, artefacts):
    page = cell_index(browse, report, "sample_hipho", "demo")
    page.wait_for_function(
        "() => document.querySelectorAll('table.problems .tex').length === 0"
        " && [...document.querySelectorAll('table.problems td:last-child .math-text')].every("
        "s => s.querySelector('mjx-container'))"
    )
    cells = page.locator(f"{ROW} td:last-child")
    assert cells.count() == len(rows(page)) and page.locator(f"{ROW} td:last-child mjx-container").count() >= 5
    print(f"cell index: {screenshot(page, artefacts, 'cell-index')}")
    for n in range(cells.count()):
        assert "\\" not in text_outside_maths(cells.nth(n)), text_outside_maths(cells.nth(n))  # no raw LaTeX
    judged = read_jsonl(run.judgments("hipho", "sample_hipho", "demo", "rule"), Judgment)
    [(root, answer)] = [(j.id, a) for j in judged for a in j.extracted if "\\sqrt" in a]
    page.fill("input#search", answer[answer.index("\\sqrt") :][:12])  # the LaTeX as extracted, though typeset
    assert shown(page) == [root]


def test_a_filter_that_matches_nothing_says_so_and_clears_in_one_click(report, browse, artefacts):
    page = cell_index(browse, report, "sample_hipho", "demo")
    every = [row["id"] for row in rows(page)]
    message = page.locator("#no-match")
    assert not message.is_visible()
    page.select_option("select#status-filter", "wrong")
    page.fill("input#search", "no problem is called this")
    assert shown(page) == [] and message.is_visible()
    said = message.inner_text()
    assert said.startswith(
        "No problem matches the search \u201cno problem is called this\u201d and the filter status wrong"
    )
    assert "Show every problem" in said
    print(f"no match: {screenshot(page, artefacts, 'cell-no-match')}")
    page.locator("#clear-view").click()
    assert shown(page) == every and not message.is_visible()
    assert (
        page.input_value("input#search") == ""
        and page.eval_on_selector("select#status-filter", "s => s.value") == "all"
    )
    assert "#" not in page.url or page.url.endswith("#")  # the view in the URL cleared too


def test_a_rules_only_judgment_of_hipho_shows_its_criteria_not_judged(report, browse):
    _, page = problem_page(browse, report, "sample_hipho", "demo")
    assert judgment_of(page, "rule").locator("table.criteria").count() == 1
    assert "not judged (rules only)" in judgment_of(page, "rule").locator("table.criteria").inner_text()
    assert judgment_of(page, "scripted").locator("table.criteria").count() == 1


def test_with_two_judges_the_index_says_which_judge_each_column_means(report, browse):
    page = cell_index(browse, report, "sample_physelite_en", "demo")
    heads = page.eval_on_selector_all("table.problems thead th", "ths => ths.map(t => t.textContent)")
    assert "status (all judges)" in heads and "score (mean of judges)" in heads
    assert "judge rule: points" in heads and "judge scripted: points" in heads
    assert "every judge and sample" in page.locator("p.legend").inner_text()
    # HiPhO's problems have no level: no column of dashes there; PhysElite's have one
    hipho = cell_index(browse, report, "sample_hipho", "demo")
    assert "level" not in hipho.eval_on_selector_all("th[data-sort]", "ths => ths.map(t => t.dataset.sort)")
    assert "level" in page.eval_on_selector_all("th[data-sort]", "ths => ths.map(t => t.dataset.sort)")


# ---------------------------------------------------------------- the whole report, offline


def test_every_page_opens_from_disk_with_no_error_and_no_request_off_disk(report, browse_all):
    pages = sorted(report.rglob("*.html"))
    assert len(pages) > len(SUITES) * len(MODELS)
    for path in pages:
        browse_all(path)


@pytest.fixture
def browse_all(browser_context, report):
    """As `browse`, but each page checked and closed at once: the whole report is many pages."""

    def open_page(path: Path) -> None:
        watched = Watched(browser_context, report)
        watched.open(path)
        watched.page.wait_for_load_state("load")
        watched.page.close()
        watched.check()

    return open_page


# ---------------------------------------------------------------- headers, counts, the question, dates


@pytest.mark.parametrize("suite,model", [("sample_hipho", "demo"), ("sample_mathvision", "reference")])
def test_every_sortable_header_shows_whole_with_its_arrow(report, browse, suite, model):
    page = cell_index(browse, report, suite, model)
    cut = "ths => ths.filter(th => th.scrollWidth > th.clientWidth).map(th => th.textContent)"
    assert page.eval_on_selector_all("th[data-sort]", cut) == []
    for key in page.eval_on_selector_all("th[data-sort]", "ths => ths.map(th => th.dataset.sort)"):
        page.locator(f'th[data-sort="{key}"]').first.click()  # its arrow now says the order
        assert page.eval_on_selector_all("th[data-sort]", cut) == [], key


def test_the_counts_say_each_status_once(report, browse):
    for suite, model in (("sample_hipho", "demo"), ("sample_physelite_en", "demo")):
        counts = cell_index(browse, report, suite, model).locator(".counts").first.inner_text()
        words = re.findall(r"[\w-]+", counts)
        assert words and not [a for a, b in zip(words, words[1:]) if a == b], counts


def test_the_question_is_the_problems_text_and_the_full_prompt_opens_on_a_click(report, browse):
    _, page = problem_page(browse, report, "sample_hipho", "demo", lambda row: True)
    question = page.locator("section.question")
    prompt = question.locator("details.prompt")
    assert prompt.count() == 1 and prompt.get_attribute("open") is None
    assert not prompt.locator("div.message").first.is_visible()  # one click away
    assert question.locator("div.math-text").first.is_visible()  # the problem's own text, shown
    prompt.locator(":scope > summary").click()
    assert prompt.locator("div.message").first.is_visible()


def test_every_page_says_when_its_replies_came_or_that_none_were_sent(report, browse):
    page = cell_index(browse, report, "sample_hipho", "demo")
    metadata = page.locator("section.metadata").inner_text()
    # the sample's models are offline, and so is the scripted judge: none sent a request
    assert "generation replies received\noffline provider: no requests" in metadata, metadata
    # and its usage says the same: no "requests 5" beside "no requests"
    assert "generation usage\nno requests: an offline provider, 5 replies made here" in metadata, metadata
    assert "requests 5" not in metadata
    assert "judge scripted replies received\noffline provider: no requests" in metadata, metadata
    assert "git commit" in metadata and "dvc.lock" in metadata


# ---------------------------------------------------------------- hostile maths and HTML


HOSTILE_PAGES = ("the demo's page", "the reference's page", "the demo's index", "the side-by-side page")


def hostile_pages(report: Path) -> dict[str, Path]:
    problem = "DemoCPhO_2025_1_1"  # the suite's first
    cells = report / "cells" / "hipho" / "sample_hipho"
    return {
        "the demo's page": cells / "demo" / "problems" / f"{problem}.html",
        "the reference's page": cells / "reference" / "problems" / f"{problem}.html",
        "the demo's index": cells / "demo" / "index.html",
        "the side-by-side page": report / "side" / "sample_hipho" / f"{problem}.html",
    }


@pytest.mark.parametrize("which", HOSTILE_PAGES)
def test_hostile_maths_and_html_run_no_script_and_fetch_nothing(browser_context, hostile, which):
    """Hostile maths in a response, its boxed answer, a gold and a problem's text, and raw HTML:
    typeset (or shown as text), yet no link to script, no style of its own, nothing fetched, no
    dialog, no console error (a blocked load would be one) — not on opening, not on clicking."""
    watched = Watched(browser_context, hostile)
    page = watched.open(hostile_pages(hostile)[which])
    if which == "the side-by-side page":
        page.wait_for_selector("body[data-typeset='1']", state="attached", timeout=30_000)
    else:
        typeset(page)
    url = page.url
    if which == "the demo's index":  # the answer extracted from the hostile box, typeset as its row shows
        page.wait_for_function("() => !document.querySelector('table.problems .tex')")
        assert page.locator(f"{ROW} td:last-child mjx-container").count() > 0
    else:
        assert HOSTILE_HTML in page.locator("body").text_content()  # shown as text, escaped
        assert page.locator("mjx-container").count() > 0
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    for handle in page.query_selector_all("mjx-container"):  # a link MathJax made would be in one
        if handle.is_visible():
            handle.click(timeout=2_000)
    page.wait_for_timeout(300)
    assert page.url == url
    found = page.evaluate(
        """() => ({
        script_links: [...document.querySelectorAll('[href]')].map(e => e.getAttribute('href'))
            .filter(h => /^\\s*(javascript|data|vbscript):/i.test(h) || /127\\.0\\.0\\.1/.test(h)).length
            + [...document.querySelectorAll('mjx-container [href]')].length,
        styled: [...document.querySelectorAll('mjx-container [style]')]
            .filter(e => /url\\(|background/i.test(e.getAttribute('style'))).length,
        own_class: document.querySelectorAll('.evil, #evil').length,
        images: [...document.images].filter(i => i.getAttribute('src') === 'x').length,
        inline_scripts: document.querySelectorAll('script:not([src])').length,
        })"""
    )
    assert found == {"script_links": 0, "styled": 0, "own_class": 0, "images": 0, "inline_scripts": 0}, found
    watched.page.close()
    watched.check()


def test_the_policy_refuses_remote_loads_and_inline_script_that_would_get_through(browser_context, hostile):
    """Behind the escaping and MathJax's safe mode, the page's Content-Security-Policy: an image from
    a host and an inline script, put into a page the way an escape that failed would, are refused."""
    page = browser_context.new_page()
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    try:
        page.goto(hostile_pages(hostile)["the demo's page"].resolve().as_uri(), wait_until="load")
        blocked = page.evaluate(
            """() => new Promise(done => {
            const seen = [];
            document.addEventListener('securitypolicyviolation', e => {
                seen.push(e.violatedDirective + ' ' + e.blockedURI);
                if (seen.length === 2) done(seen.sort());
            });
            const image = document.createElement('img');
            image.src = 'http://127.0.0.1:9/probe.png';
            document.body.appendChild(image);
            const script = document.createElement('script');
            script.textContent = 'window.ran = true';
            document.body.appendChild(script);
            setTimeout(() => done(seen.sort()), 3000);
        })"""
        )
        assert page.evaluate("window.ran === undefined")
        assert [entry.split()[0] for entry in blocked] == ["img-src", "script-src-elem"], blocked
    finally:
        page.close()


def test_the_model_settings_on_a_page_never_show_a_key(hostile):
    for path in hostile.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".js"):
            assert SECRET not in path.read_text(encoding="utf-8"), path
    cell = hostile / "cells" / "hipho" / "sample_hipho" / "demo" / "index.html"
    metadata = cell.read_text(encoding="utf-8").split('<section class="metadata"')[1]
    assert '"api_key": "(not shown: looks like a secret)"' in metadata
    assert '"Authorization": "(not shown: looks like a secret)"' in metadata and "provider" in metadata
