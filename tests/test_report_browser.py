"""The report in a real browser: headless Chromium (the system's, driven by Playwright) opens the
report of a real small run of the bundled sample from disk, as a reader does, and checks the page
contract: filters, sorting and counts on a cell's index, typeset maths, figures that load, HiPhO's
marking criteria and PhysElite's process steps on problem pages, no console error, and no request
that leaves the report's folder. Screenshots are kept as test artefacts (in
$OLYMPIAD_EVAL_ARTEFACTS, or a folder under pytest's temporary directory; its path is printed)."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from omegaconf import OmegaConf

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import Generation, read_jsonl, write_json, write_jsonl
from olympiad_eval.report import write_cell, write_report, write_side
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


# ---------------------------------------------------------------- the browser


def chromium_binary() -> str:
    """The system's Chromium: Playwright's own download (`playwright install`) is never used."""
    for name in ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium found (install the Debian package `chromium`, as .ci/run does) for the browser tests")


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory, report):
    """One headless Chromium for the module, with a fresh profile. Started after the report is
    written: the run's judge runs its own event loop, which Playwright's, once running, forbids."""
    binary = chromium_binary()
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=binary,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 900},
        )
        yield context
        context.close()


class Watched:
    """A page and what it did wrong: requests outside the report folder (aborted), console errors,
    uncaught exceptions. `check()` fails the test on any of them."""

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
    return compose_stage("report", [f"model={model}"]).model


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
                layout.prompts(suite),
                generations,
                cache,
                layout.usage(family, suite, model),
            )
            if (suite, model) == CUT:
                cut_first_response(generations)
            for name in JUDGES:
                cfg = compose_stage("judge", [f"judge={name}", f"cell.suite={suite}", f"cell.model={model}"]).judge
                outcome = judge(
                    layout.suite(suite),
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


@pytest.fixture(scope="module")
def report(run) -> Path:
    """The report as its stages write it: each suite's side-by-side pages, each cell's folder, then
    the root."""
    for suite in SUITES:
        write_side(PLAN, run, suite)
        for model in MODELS:
            write_cell(PLAN, run, suite, model, OmegaConf.to_container(model_config(model), resolve=True))
    write_report(PLAN, run)
    return run.report()


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
    print(f"cell index: {screenshot(page, artefacts, 'cell-index')}")
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
    page.evaluate("document.querySelectorAll('details:not(.raw)').forEach(d => d.open = true)")  # a solution
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


def test_the_side_by_side_page_puts_every_model_of_the_plan_in_one_table(report, browse):
    _, page = problem_page(browse, report, "sample_hipho", "demo")
    link = page.locator("a", has_text="side by side")
    assert link.count() > 0, "no link to the side-by-side page"
    other = browse(path_of(link.first.evaluate("a => a.href")))
    table = other.locator("table.side-by-side")
    assert table.count() > 0
    text = table.first.text_content()
    assert all(model in text for model in MODELS) and all(judge in text for judge in JUDGES), text[:1000]


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
    assert "judge scripted replies received\noffline provider: no requests" in metadata, metadata
    assert "git commit" in metadata and "dvc.lock" in metadata
