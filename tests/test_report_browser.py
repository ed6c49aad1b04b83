"""The report in a real browser: headless Chromium (the system's, driven by Playwright) opens the
report of a real small run of the bundled sample from disk, as a reader does, and checks the page
contract: filters, sorting and counts on a cell's index, typeset maths, figures that load, HiPhO's
marking criteria and PhysElite's process steps on problem pages, no console error, and no request
that leaves the report's folder. Screenshots are kept as test artefacts (in
$OLYMPIAD_EVAL_ARTEFACTS, or a folder under pytest's temporary directory; its path is printed)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from omegaconf import OmegaConf

from olympiad_eval.generate import generate
from olympiad_eval.judging import judge
from olympiad_eval.layout import Layout
from olympiad_eval.report import write_report
from olympiad_eval.tables import aggregate
from tests.support import ROOT, compose_stage, render_sample

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra: pip install -e '.[test]'")

# The run: HiPhO (marking criteria), PhysElite in both languages (verdicts, process steps, Chinese
# text) and MATH-Vision (figures in choices), each by the reference and the demo model, judged by
# the rules and by the offline scripted LLM judge (conf/judge/scripted.yaml).
SUITES = {"sample_hipho": "sample_hipho", "sample_physelite_en": "sample_physelite",
          "sample_physelite_zh": "sample_physelite", "sample_mathvision": "sample_mathvision"}
FAMILY = {"sample_hipho": "hipho", "sample_physelite": "physelite", "sample_mathvision": "mathvision"}
MODELS = {"reference": {"provider": "reference"},
          "demo": {"provider": "replay", "path": str(ROOT / "data/replay/demo/{suite}.jsonl")}}
JUDGES = ["rule", "scripted"]
PLAN = {"benchmarks": sorted(FAMILY), "suites": SUITES, "models": list(MODELS), "judges": JUDGES, "family": FAMILY,
        "families": sorted(set(FAMILY.values()))}

# Chromium as the brief of the report's tests asks: headless, and none of its own connections
# (component updates, sync, field trials), which would fail offline and are not the report's.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
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
def browser_context(tmp_path_factory):
    """One headless Chromium for the module, with a fresh profile."""
    binary = chromium_binary()
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=binary, args=CHROMIUM_ARGS,
            headless=True, viewport={"width": 1280, "height": 900})
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
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(
            f"console error on {self.page.url}: {message.text} ({message.location.get('url', '')})"))
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


# ---------------------------------------------------------------- the run and its report

def real_run(outputs: Path) -> Layout:
    """Fetch, render, generate, judge and aggregate every suite of the plan, as the stages do."""
    layout = Layout(outputs)
    for suite, benchmark in SUITES.items():
        render_sample(outputs, suite, benchmark)
        family = FAMILY[benchmark]
        for model, cfg in MODELS.items():
            generations = layout.generations(family, suite, model)
            generate(suite, model, OmegaConf.create(cfg), layout.prompts(suite), generations, outputs.parent / "cache.sqlite")
            for judge_name in JUDGES:
                judge_cfg = compose_stage("judge", [f"judge={judge_name}", f"cell.suite={suite}", f"cell.model={model}"]).judge
                judge(layout.suite(suite), generations, judge_name, judge_cfg,
                      layout.judgments(family, suite, model, judge_name), outputs.parent / "cache.sqlite")
    for benchmark in FAMILY:
        bench_cfg = compose_stage("aggregate", [f"benchmark={benchmark}"]).benchmark
        suites = {suite: compose_stage("render", [f"suite={suite}", f"cell.benchmark={benchmark}"]).suite
                  for suite, of in SUITES.items() if of == benchmark}
        aggregate(benchmark, bench_cfg, PLAN, layout, suites=suites)
    return layout


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Layout:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # configs name the bundled data relative to the repository
        return real_run(tmp_path_factory.mktemp("run") / "outputs")


@pytest.fixture(scope="module")
def report(run) -> Path:
    write_report(PLAN, run)
    return run.report()


def test_smoke(report, browse):
    page = browse(report / "index.html")
    assert page.title()
