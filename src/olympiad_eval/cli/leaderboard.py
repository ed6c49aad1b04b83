"""The leaderboard: a row per model (and judge) of each experiment, a column per suite with its
headline score and 95% interval, as the aggregate stage wrote them (DVC metrics files,
`outputs/metrics/<benchmark>/<suite>/<model>/<judge>.json`).

    olympiad-eval leaderboard            the workspace's cells
    olympiad-eval leaderboard --exp      and every DVC experiment's (read with `dvc exp show --json`)

`dvc exp show` puts each metric of each cell in a column of its own (hundreds of columns, most of
them "-" in a model's row); here one model is one row and one suite one column, the columns wrapped
into blocks that each fit the width (`--width`, 120 characters by default). A score marked `*` is
of a partial suite or of less than full coverage (the cell's `partial` and `coverage`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tabulate import tabulate

from olympiad_eval.cli import run_alone
from olympiad_eval.core.layout import OUTPUTS, Layout, fields_of
from olympiad_eval.core.records import InputError
from olympiad_eval.core.stats import PARTIAL_NOTE, SCORES_NOTE, score_text

WIDTH = 120
WORKSPACE = "workspace"
LABELS = ("experiment", "model", "judge")
GAP = 2  # tabulate's `simple` format: two spaces between columns
PADDING = 2  # and a column at least two wider than its header's longest line (tabulate's MIN_PADDING)
NOTE = f"{SCORES_NOTE}; {PARTIAL_NOTE}"


def cells_of_files(metrics: dict[str, dict], experiment: str) -> dict[tuple, dict]:
    """{(experiment, model, judge, suite): headline} from metrics by path (`outputs/metrics/...`)."""
    names = fields_of("metrics")  # benchmark, suite, model, judge
    cells = {}
    for path, headline in metrics.items():
        parts = Path(path).with_suffix("").parts[-len(names) :]
        if len(parts) != len(names) or not isinstance(headline, dict) or "score" not in headline:
            continue
        found = dict(zip(names, parts))
        cells[(experiment, found["model"], found["judge"], found["suite"])] = headline
    return cells


def workspace_cells(outputs: Path) -> dict[tuple, dict]:
    folder = Layout(outputs).metrics()
    metrics = {path.as_posix(): json.loads(path.read_text(encoding="utf-8")) for path in folder.rglob("*.json")}
    return cells_of_files(metrics, WORKSPACE)


def experiment_cells(shown: list) -> dict[tuple, dict]:
    """Every experiment's cells from `dvc exp show --json` (the workspace and the baseline commits
    are left to the workspace's own files)."""
    cells = {}
    for baseline in shown:
        for experiment in baseline.get("experiments") or []:
            for rev in experiment.get("revs") or []:
                metrics = (rev.get("data") or {}).get("metrics") or {}
                name = rev.get("name") or experiment.get("name") or str(rev.get("rev"))[:7]
                cells |= cells_of_files({path: file.get("data") for path, file in metrics.items()}, name)
    return cells


def dvc_experiments(all_commits: bool) -> list:
    dvc = shutil.which("dvc") or str(Path(sys.executable).with_name("dvc"))
    command = [dvc, "exp", "show", "--json", *(["-A"] if all_commits else [])]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise InputError(f"`{' '.join(command[1:])}` failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


def header(name: str, width: int) -> str:
    """A suite's name wrapped at its underscores into lines no wider than `width`."""
    return "\n".join(textwrap.wrap(name.replace("_", "_ "), max(width, 8), break_long_words=True)).replace("_ ", "_")


def blocks(suites: list[str], cells: dict[tuple, dict], rows: list[tuple], width: int) -> list[str]:
    """The table cut into blocks of suite columns, each as wide as `width` at most. A column is as
    wide as its widest score, its header wrapped to fit (tabulate pads a header by `PADDING`)."""
    label_width = sum(max(len(label) + PADDING, *(len(row[i]) for row in rows)) + GAP for i, label in enumerate(LABELS))
    texts = {
        suite: [score_text(cells[(*row, suite)]) if (*row, suite) in cells else "-" for row in rows] for suite in suites
    }
    headers = {suite: header(suite, max(map(len, texts[suite])) - PADDING) for suite in suites}
    column = {
        suite: max(*map(len, texts[suite]), *(len(line) + PADDING for line in headers[suite].splitlines()))
        for suite in suites
    }
    chunks, current, used = [], [], label_width
    for suite in suites:
        if current and used + column[suite] > width:
            chunks.append(current)
            current, used = [], label_width
        current.append(suite)
        used += column[suite] + GAP
    chunks.append(current)
    return [
        tabulate(
            [[*row, *(texts[suite][i] for suite in chunk)] for i, row in enumerate(rows)],
            headers=[*LABELS, *(headers[suite] for suite in chunk)],
            tablefmt="simple",
            disable_numparse=True,
        )
        for chunk in chunks
    ]


def leaderboard(cells: dict[tuple, dict], width: int = WIDTH) -> str:
    if not cells:
        raise InputError("no headline metrics: run `dvc repro` first (the aggregate stages write outputs/metrics/...)")
    experiments = list(dict.fromkeys(key[0] for key in sorted(cells, key=lambda key: key[0] != WORKSPACE)))
    rows = sorted({key[:3] for key in cells}, key=lambda row: (experiments.index(row[0]), row[1], row[2]))
    suites = sorted({key[3] for key in cells})
    tables = blocks(suites, cells, rows, width)
    notes = NOTE
    return "\n\n".join(tables) + f"\n\n{notes}\n"


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--exp", action="store_true", help="add every DVC experiment's rows (`dvc exp show --json`)")
    parser.add_argument(
        "-A",
        "--all-commits",
        action="store_true",
        help="with --exp: the experiments of every commit (`dvc exp show -A`)",
    )
    parser.add_argument("--width", type=int, default=WIDTH, help=f"the most characters a line has (default {WIDTH})")
    parser.add_argument("--outputs", default=OUTPUTS, help=f"the outputs folder (default {OUTPUTS})")
    return parser


def execute(args: argparse.Namespace) -> int:
    try:
        cells = workspace_cells(Path(args.outputs))
        if args.exp:
            cells |= experiment_cells(dvc_experiments(args.all_commits))
        print(leaderboard(cells, args.width), end="")
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_alone("olympiad_eval.cli.leaderboard", __doc__, configure, execute, argv)


if __name__ == "__main__":
    sys.exit(main())
