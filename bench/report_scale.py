"""The report at PhysElite's size: how long it takes to write, how large its files are, how soon a
cell's index answers in headless Chromium, and what adding a model rewrites.

The release is bench/scale.py's synthetic one (11,586 problems x zh + en, Parquet shards, small
PNG diagrams), fetched and rendered by the real stages' functions into physelite_en and
physelite_zh. Models answer as scale.py's fake models do (right for most problems, with a slip in
the others; every 53rd response cut at max_tokens, every 97th a failed request), written straight
as generation records: no request is needed for the report. The three-judge ensemble
(conf/judge/physelite-ensemble.yaml, pointed at a local fake server replying as scale.py's judge)
grades the first problems of each cell through the real judge; the other problems get the
judgment of a graded problem in the same state (right, wrong, cut, failed), with its own id, so
every record has the form the ensemble writes without 400,000 judge requests. Then aggregate.

Measured: the report's generation (in a child process: wall time and peak RSS), its files (how
many, the largest, the largest of each part: the index, the cells, the side-by-side pages, the
assets), the time from opening a cell's index in headless Chromium to the first filter change
applied (median of 3, each in a fresh browser), the time to open the report's index and a
side-by-side page (until every model's column is on it), and after adding a model and running the
report stages that `dvc repro` would run, how many files they wrote (by inode and modification
time, whether or not their bytes changed), of which part, and how many files of the other cells
changed (target 0).

    python bench/report_scale.py [--problems 11586] [--graded 120] [--keep DIR] [--pages-only]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import scale  # noqa: E402  the synthetic release and its fake models and judge

from olympiad_eval.cli.fake_server import FakeOpenAI  # noqa: E402
from olympiad_eval.core.layout import Layout  # noqa: E402
from olympiad_eval.core.records import Generation, atomic_file  # noqa: E402
from olympiad_eval.testing import compose_stage  # noqa: E402

BENCHMARK = scale.BENCHMARK
FAMILY = "physelite"
SUITES = scale.SUITES
JUDGE = "physelite-ensemble"
MODELS = ["scale-1", "scale-2"]
ADDED = "scale-3"  # the model added afterwards
TRUNCATED_EVERY, FAILED_EVERY = 53, 97
TARGETS = {"largest_mb": 5.0, "interactive_s": 2.0, "report_s": 60.0, "report_rss_mb": 500.0}
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


def plan(models: list[str]) -> dict:
    """The run plan as `stage.read_plan` joins it."""
    return {
        "benchmarks": [BENCHMARK],
        "suites": {suite: BENCHMARK for suite in SUITES},
        "models": list(models),
        "judges": [JUDGE],
        "family": {BENCHMARK: FAMILY},
        "families": [FAMILY],
    }


# ---------------------------------------------------------------- the run the report reads


def bench_config(workdir: Path):
    return OmegaConf.create(scale.benchmark_config(ROOT / "conf", (workdir / "release").resolve()))


def suite_config(suite: str):
    return compose_stage("render", [f"suite={suite}", f"cell.benchmark={BENCHMARK}"], ROOT).suite


def fetch_and_render(workdir: Path, layout: Layout, problems: int) -> None:
    from olympiad_eval.stages.fetch import fetch
    from olympiad_eval.stages.render import render

    fields = scale.release_fields(ROOT)
    scale.write_release(workdir / "release", problems, fields)
    fetch(BENCHMARK, bench_config(workdir), layout.problems(BENCHMARK))
    for suite in SUITES:
        render(suite, suite_config(suite), BENCHMARK, layout.problem_records(BENCHMARK), layout.suite(FAMILY, suite))


def state(index: int, model: str) -> str:
    if index % FAILED_EVERY == 0:
        return "failed"
    if index % TRUNCATED_EVERY == 0:
        return "truncated"
    return "right" if scale.is_right(model, scale.problem_id(index)) else "wrong"


def generation(suite: str, model: str, index: int) -> Generation:
    pid, how = scale.problem_id(index), state(index, model)
    request = hashlib.sha256(f"{suite}/{model}/{pid}".encode()).hexdigest()
    if how == "failed":
        return Generation(
            id=pid,
            suite=suite,
            model=model,
            sample=0,
            response=None,
            request_hash=request,
            error="HTTP 500: the server had an error while processing your request",
        )
    text = scale.response(model, pid)
    if how == "truncated":
        return Generation(
            id=pid,
            suite=suite,
            model=model,
            sample=0,
            response=text[: len(text) // 2],
            request_hash=request,
            finish_reason="length",
        )
    return Generation(
        id=pid, suite=suite, model=model, sample=0, response=text, request_hash=request, finish_reason="stop"
    )


def write_generations(layout: Layout, suite: str, model: str, problems: int, first: int = 1) -> Path:
    from olympiad_eval.core.records import write_jsonl

    path = layout.generations(FAMILY, suite, model)
    write_jsonl(path, [generation(suite, model, index) for index in range(first, problems + 1)])
    return path


def ensemble_config(base_url: str):
    cfg = compose_stage("judge", [f"judge={JUDGE}", "cell.suite=x", "cell.model=y"], ROOT).judge
    for judge_cfg in cfg.judges.values():
        judge_cfg.base_url, judge_cfg.api_key_env, judge_cfg.concurrency = base_url, None, 64
    return cfg


def judge_cell(
    workdir: Path, layout: Layout, suite: str, model: str, problems: int, graded: int, base_url: str
) -> None:
    """The real ensemble on the first `graded` problems; each other problem the judgment of a graded
    one in the same state, with its own id."""
    from olympiad_eval.stages.judge import judge

    graded = min(graded, problems)
    sample = workdir / "graded" / suite / f"{model}.jsonl"
    sample.parent.mkdir(parents=True, exist_ok=True)
    all_lines = layout.generations(FAMILY, suite, model).read_text(encoding="utf-8").splitlines(keepends=True)
    sample.write_text("".join(all_lines[:graded]), encoding="utf-8")
    out = layout.judgments(FAMILY, suite, model, JUDGE)
    judge(layout.suite(FAMILY, suite), sample, JUDGE, ensemble_config(base_url), out, workdir / "cache.sqlite")
    templates: dict[str, str] = {}
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    for line in lines:
        index = int(json.loads(line)["id"].split("-")[1])
        templates.setdefault(state(index, model), line)
    for index in range(graded + 1, problems + 1):
        how = state(index, model)
        template = templates.get(how) or templates["wrong" if how != "right" else "right"]
        template_id = json.loads(template)["id"]
        lines.append(template.replace(f'"id":"{template_id}"', f'"id":"{scale.problem_id(index)}"'))
    with atomic_file(out) as staging:
        staging.writelines(lines)


def aggregate_all(workdir: Path, layout: Layout, models: list[str]) -> None:
    from olympiad_eval.stages.aggregate import aggregate

    aggregate(BENCHMARK, bench_config(workdir), plan(models), layout, suites={s: suite_config(s) for s in SUITES})


def run_models(workdir: Path, layout: Layout, models: list[str], problems: int, graded: int, base_url: str) -> None:
    """Generations and judgments of `models`, then the tables of every model run so far. The judges'
    endpoint is the same for every model (it is part of the judge's config, which all cells share)."""
    for model in models:
        for suite in SUITES:
            write_generations(layout, suite, model, problems)
            judge_cell(workdir, layout, suite, model, problems, graded, base_url)
    aggregate_all(workdir, layout, sorted(set(models) | set(known_models(layout))))


def known_models(layout: Layout) -> list[str]:
    return sorted(path.name for path in layout.cell(FAMILY, SUITES[0]).iterdir() if path.is_dir())


# ---------------------------------------------------------------- the report, measured

WRITE = """
import json, resource, sys
from olympiad_eval.core.layout import Layout  # noqa: E402
import olympiad_eval.report as report
plan, layout, cell = json.loads(sys.argv[1]), Layout(sys.argv[2]), json.loads(sys.argv[3])
if cell and "model" in cell:
    report.write_cell(plan, layout, cell["suite"], cell["model"], cell["settings"])
elif cell:
    report.write_side(plan, layout, cell["suite"])
else:
    report.write_report(plan, layout)
# the peak of this process's own memory since it started: VmHWM (ru_maxrss would count the parent's at fork)
own = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"peak_kb": max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)}))
"""


def model_settings(model: str) -> dict:
    """What a cell's pages show of its model: its config, as bench/scale.py writes it."""
    return {
        "provider": "openai",
        **scale.endpoint("http://127.0.0.1:1/v1", model, 64),
        "generation": {"temperature": 0, "max_tokens": 4096},
    }


def stage_measured(layout: Layout, models: list[str], cell: dict | None) -> dict:
    """One report stage (a cell's, or the root's) in a child process, as DVC runs it: its wall time
    and peak RSS (its own high-water mark, or its largest child's)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", WRITE, json.dumps(plan(models)), str(layout.root), json.dumps(cell)],
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    name = "report (root)"
    if cell:
        # named by what writes the pages: a cell's pages stage, a suite's render stage
        name = f"pages of {cell['model']} on {cell['suite']}" if "model" in cell else f"side pages of {cell['suite']}"
    return {
        "stage": name,
        "s": wall,
        "rss_mb": json.loads(done.stdout.strip().splitlines()[-1])["peak_kb"] / 1024,
    }


def has_side_stage() -> bool:
    """Whether the report has a stage per suite for its side-by-side pages (`write_side`); before it,
    the root wrote them."""
    import olympiad_eval.report as report

    return hasattr(report, "write_side")


def write_report_measured(layout: Layout, models: list[str], cells: list[str], side: bool) -> dict:
    """The report stages that `dvc repro` runs after `cells`' models were run: each of their cells,
    each suite's side-by-side stage where there is one and `side` (its deps are the suite's: adding
    a model does not run it), then the root."""
    stages = [
        stage_measured(layout, models, {"suite": suite, "model": model, "settings": model_settings(model)})
        for model in cells
        for suite in SUITES
    ]
    if side and has_side_stage():
        stages += [stage_measured(layout, models, {"suite": suite}) for suite in SUITES]
    stages.append(stage_measured(layout, models, None))
    return {
        "stages": stages,
        "report_s": sum(stage["s"] for stage in stages),
        "report_rss_mb": max(stage["rss_mb"] for stage in stages),
    }


def files_of(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def stamps(folder: Path) -> dict[str, tuple[int, int]]:
    """Each file's inode and modification time: a file written again (even with the same bytes, or
    replaced by an atomic rename) has another."""
    return {
        path.relative_to(folder).as_posix(): (path.stat().st_ino, path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def part_of(name: str) -> str:
    """The part of the report a file is in: the index, a cell's pages, the side-by-side pages, the
    root's comparison pages (flips), the assets."""
    first = name.split("/", 1)[0]
    return {"index.html": "index", "cells": "cells", "side": "side-by-side", "compare": "compare"}.get(
        first, "assets" if first == "assets" else first
    )


def sizes(folder: Path) -> dict:
    files = [path for path in folder.rglob("*") if path.is_file()]
    largest = max(files, key=lambda path: path.stat().st_size)
    parts: dict[str, dict] = {}
    for path in files:
        name, size = path.relative_to(folder).as_posix(), path.stat().st_size
        part = parts.setdefault(part_of(name), {"files": 0, "mb": 0.0, "largest": "", "largest_mb": 0.0})
        part["files"] += 1
        part["mb"] += size / 1e6
        if size / 1e6 > part["largest_mb"]:
            part["largest"], part["largest_mb"] = name, size / 1e6
    return {
        "files": len(files),
        "total_mb": sum(p.stat().st_size for p in files) / 1e6,
        "largest": largest.relative_to(folder).as_posix(),
        "largest_mb": largest.stat().st_size / 1e6,
        "parts": dict(sorted(parts.items())),
    }


def cell_index(report: Path, suite: str, model: str) -> Path:
    """The cell's index page, found by the index's link to it (`a.cell-link`)."""
    from html.parser import HTMLParser

    class Links(HTMLParser):
        def __init__(self):
            super().__init__()
            self.links: list[str] = []

        def handle_starttag(self, tag, attrs):
            attributes = dict(attrs)
            if tag == "a" and "cell-link" in (attributes.get("class") or "").split():
                self.links.append(attributes["href"])

    parser = Links()
    parser.feed((report / "index.html").read_text(encoding="utf-8"))
    [link] = [link for link in parser.links if suite in link and model in link and ADDED not in link]
    return (report / link).resolve()


def interactive_seconds(page_path: Path, profile: Path) -> dict:
    """From navigating to the page until the first filter change (status `wrong`) is applied: rows
    hidden and the count of shown rows updated; with the page's own navigation timing (parsed: its
    DOMContentLoaded handlers done; loaded: its load event) and how long the next change (back to
    `all`) takes to be painted."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=shutil.which("chromium") or "/usr/bin/chromium",
            args=CHROMIUM_ARGS,
            headless=True,
        )
        page = context.new_page()
        start = time.perf_counter()
        page.goto(page_path.as_uri(), wait_until="commit")
        page.wait_for_selector("select#status-filter", state="attached", timeout=60_000)
        rows = page.evaluate("document.querySelectorAll('tr.problem-row').length")
        page.select_option("select#status-filter", "wrong")
        page.wait_for_function(
            """() => { const shown = [...document.querySelectorAll('tr.problem-row')].filter(r => !r.hidden).length;
                       const wrong = document.querySelectorAll('tr.problem-row[data-status="wrong"]').length;
                       const count = document.querySelector('#shown-count');
                       return shown === wrong && count && count.textContent.includes(String(wrong)); }""",
            timeout=60_000,
        )
        seconds = time.perf_counter() - start
        timing = page.evaluate(
            "(({domContentLoadedEventEnd, loadEventEnd}) => [domContentLoadedEventEnd, loadEventEnd])"
            "(performance.getEntriesByType('navigation')[0])"
        )
        changed = time.perf_counter()
        page.select_option("select#status-filter", "all")
        page.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
        again = time.perf_counter() - changed
        context.close()
    if not rows:
        raise RuntimeError(f"{page_path}: no tr.problem-row")
    return {"s": seconds, "parsed_s": timing[0] / 1000, "loaded_s": timing[1] / 1000, "next_change_s": again}


def page_seconds(page_path: Path, profile: Path, ready: str) -> dict:
    """From navigating to a page until the JavaScript condition `ready` holds (its content on it),
    with its own navigation timing (parsed, loaded)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=shutil.which("chromium") or "/usr/bin/chromium",
            args=CHROMIUM_ARGS,
            headless=True,
        )
        page = context.new_page()
        start = time.perf_counter()
        page.goto(page_path.as_uri(), wait_until="commit")
        page.wait_for_function(ready, timeout=60_000)
        seconds = time.perf_counter() - start
        page.wait_for_load_state("load")
        timing = page.evaluate(
            "(({domContentLoadedEventEnd, loadEventEnd}) => [domContentLoadedEventEnd, loadEventEnd])"
            "(performance.getEntriesByType('navigation')[0])"
        )
        context.close()
    return {"s": seconds, "parsed_s": timing[0] / 1000, "loaded_s": timing[1] / 1000}


# When the report's index is usable: its links to the cells are on it. A side-by-side page: every
# model's column is on it (written in the page, or filled in by the viewer's script, which marks
# the page `data-side-ready`).
INDEX_READY = "() => document.querySelectorAll('a.cell-link').length > 0 && document.readyState !== 'loading'"
SIDE_READY = (
    "() => document.readyState !== 'loading' && (document.querySelector('table.side-by-side') !== null"
    " || document.body.dataset.sideReady === '1')"
)


def side_page(layout: Layout, suite: str) -> Path:
    """The side-by-side page of the suite's problem in the middle of its prompts."""
    from olympiad_eval.core.records import Prompt, read_jsonl
    from olympiad_eval.report.html import page_slug

    prompts = read_jsonl(layout.prompts(FAMILY, suite), Prompt)
    slug = page_slug(prompts[len(prompts) // 2].id)
    for folder in ("side", "compare"):
        path = layout.report() / folder / suite / f"{slug}.html"
        if path.is_file():
            return path
    raise RuntimeError(f"no side-by-side page of {slug} in {layout.report()}")


def run(problems: int, graded: int, keep: Path | None) -> dict:
    workdir = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="oe-report-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    layout = Layout(workdir / "outputs")
    with FakeOpenAI(scale.Responder(), latency=0, record=False) as server:
        start = time.perf_counter()
        fetch_and_render(workdir, layout, problems)
        run_models(workdir, layout, MODELS, problems, graded, server.base_url)
        result: dict = {"problems": problems, "graded": graded, "inputs_s": time.perf_counter() - start}
        result.update(write_report_measured(layout, MODELS, MODELS, side=True))
        result.update(sizes(layout.report()))
        result.update(pages_timed(workdir, layout))
        before, stamped = files_of(layout.report()), stamps(layout.report())
        run_models(workdir, layout, [ADDED], problems, graded, server.base_url)
        result["with_added"] = write_report_measured(layout, [*MODELS, ADDED], [ADDED], side=False)
        result.update(changes(before, files_of(layout.report()), layout))
        result.update(written(stamped, stamps(layout.report()), layout))
    (workdir / "results.json").write_text(json.dumps(result, indent=2))
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return result


def pages_timed(workdir: Path, layout: Layout) -> dict:
    """How soon a cell's index, the report's index and a side-by-side page answer in headless
    Chromium (each the median of 3, each in a fresh browser profile)."""
    for profile in workdir.glob("profile-*"):
        shutil.rmtree(profile, ignore_errors=True)  # a fresh browser each time, also when timed again
    result: dict = {}
    page = cell_index(layout.report(), SUITES[0], MODELS[0])
    result["cell_index"] = page.relative_to(layout.report().resolve()).as_posix()
    result["cell_index_mb"] = page.stat().st_size / 1e6
    runs = [interactive_seconds(page, workdir / f"profile-{n}") for n in range(3)]
    result["interactive_runs"] = runs
    result["interactive_s"] = statistics.median(run["s"] for run in runs)
    index = layout.report_index()
    index_runs = [page_seconds(index, workdir / f"profile-index-{n}", INDEX_READY) for n in range(3)]
    result["index_runs"], result["index_s"] = index_runs, statistics.median(run["s"] for run in index_runs)
    side = side_page(layout, SUITES[0])
    result["side_page"] = side.relative_to(layout.report()).as_posix()
    side_runs = [page_seconds(side, workdir / f"profile-side-{n}", SIDE_READY) for n in range(3)]
    result["side_runs"], result["side_s"] = side_runs, statistics.median(run["s"] for run in side_runs)
    return result


def report_pages(result: dict) -> None:
    runs = ", ".join(f"{run['s']:.2f}" for run in result["interactive_runs"])
    print(
        f"cell index {result['cell_index']} ({result['cell_index_mb']:.2f} MB): interactive in "
        f"{result['interactive_s']:.2f} s, median of {runs} (target < {TARGETS['interactive_s']:.0f} s)"
    )
    for run in result["interactive_runs"]:
        print(
            f"  parsed {run['parsed_s']:.2f} s, loaded {run['loaded_s']:.2f} s, first filter applied {run['s']:.2f} s;"
            f" the next change painted in {run['next_change_s']:.2f} s"
        )
    for name, key, ready in (("report index", "index", "its cell links"), ("side-by-side page", "side", "every model")):
        runs = result[f"{key}_runs"]
        seconds = ", ".join(f"{run['s']:.2f}" for run in runs)
        where = "index.html" if key == "index" else result["side_page"]
        print(
            f"{name} {where}: {ready} on it in {result[f'{key}_s']:.2f} s (median of "
            f"{seconds}; parsed {runs[0]['parsed_s']:.2f} s, "
            f"loaded {runs[0]['loaded_s']:.2f} s)"
        )


def changes(before: dict[str, str], after: dict[str, str], layout: Layout) -> dict:
    """What writing the report again with one more model did to the files already there. The other
    cells' files are those in the folders of the cells that were there before (Layout.report_cell);
    the rest are the root's (index, assets, side-by-side pages), which name every model."""
    report = layout.report()
    cells = [
        layout.report_cell(FAMILY, suite, model).relative_to(report).as_posix() + "/"
        for suite in SUITES
        for model in MODELS
    ]
    changed = sorted(name for name in before if name in after and before[name] != after[name])
    removed = sorted(set(before) - set(after))
    of_cells = [name for name in changed + removed if name.startswith(tuple(cells))]
    return {
        "added_files": len(set(after) - set(before)),
        "changed_files": changed,
        "removed_files": removed,
        "other_cells_files": sum(name.startswith(tuple(cells)) for name in before),
        "other_cells_changed": len(of_cells),
    }


def written(before: dict, after: dict, layout: Layout) -> dict:
    """The files the report stages wrote when a model was added (new, or written again: another
    inode or modification time), by part, and of those the added model's own cells."""
    report = layout.report()
    own = tuple(layout.report_cell(FAMILY, suite, ADDED).relative_to(report).as_posix() + "/" for suite in SUITES)
    names = [name for name, stamp in after.items() if before.get(name) != stamp]
    by_part: dict[str, int] = {}
    for name in names:
        part = "the added model's cells" if name.startswith(own) else part_of(name)
        by_part[part] = by_part.get(part, 0) + 1
    return {"written_files": len(names), "written_by_part": dict(sorted(by_part.items()))}


def report(result: dict) -> None:
    print(
        f"{result['problems']} problems x zh + en, models {', '.join(MODELS)}, judge {JUDGE} (3 judges; "
        f"{result['graded']} problems a cell graded by the real judge, the rest replicated); "
        f"inputs built in {result['inputs_s']:.0f} s"
    )
    for stage in result["stages"]:
        print(f"  {stage['stage']:<40}{stage['s']:>8.1f} s{stage['rss_mb']:>8.0f} MB peak RSS")
    print(
        f"report written in {result['report_s']:.1f} s in all (target < {TARGETS['report_s']:.0f} s), "
        f"peak RSS {result['report_rss_mb']:.0f} MB (target < {TARGETS['report_rss_mb']:.0f} MB)"
    )
    print(
        f"{result['files']} files, {result['total_mb']:.0f} MB in all; largest {result['largest']} "
        f"{result['largest_mb']:.2f} MB (target < {TARGETS['largest_mb']:.0f} MB)"
    )
    for part, about in result["parts"].items():
        print(
            f"  {part:<14}{about['files']:>7} files {about['mb']:>8.1f} MB; largest {about['largest']} "
            f"{about['largest_mb']:.2f} MB"
        )
    report_pages(result)
    added = result["with_added"]
    for stage in added["stages"]:
        print(f"  {stage['stage']:<40}{stage['s']:>8.1f} s{stage['rss_mb']:>8.0f} MB peak RSS")
    print(
        f"with {ADDED} added: report written in {added['report_s']:.1f} s, peak RSS {added['report_rss_mb']:.0f} MB; "
        f"{result['added_files']} files added, {len(result['changed_files'])} changed "
        f"({', '.join(result['changed_files'][:8])}{' ...' if len(result['changed_files']) > 8 else ''}), "
        f"{len(result['removed_files'])} removed; of the other cells' {result['other_cells_files']} files, "
        f"{result['other_cells_changed']} changed (target 0)"
    )
    print(
        f"files written when {ADDED} was added: {result['written_files']} ("
        + ", ".join(f"{part} {count}" for part, count in result["written_by_part"].items())
        + ")"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", type=int, default=11586, help="problems (each in zh and en)")
    parser.add_argument("--graded", type=int, default=120, help="problems a cell the real judge grades")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (with results.json)")
    parser.add_argument(
        "--pages-only",
        action="store_true",
        help="only time the pages of the report kept in --keep (on a quieter machine, say); nothing written",
    )
    args = parser.parse_args()
    if args.pages_only:
        if not args.keep:
            parser.error("--pages-only times the report kept in --keep DIR")
        report_pages(pages_timed(args.keep, Layout(args.keep / "outputs")))
        return
    report(run(args.problems, args.graded, args.keep))


if __name__ == "__main__":
    main()
