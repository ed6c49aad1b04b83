"""The report's screenshots in docs/report.md, taken again from the report of the bundled sample's
run: tests/test_report_browser.py builds that report and saves what its checks look at into
$OLYMPIAD_EVAL_ARTEFACTS; this runs the tests that take those shown in the docs and copies them
there (each a 1,400-pixel-wide viewport, a researcher's screen, or a section of it; never the whole
page: small files).

    python bench/report_screenshots.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the test that takes each screenshot (its -k expression), the artefact's name, the docs' name
SHOTS = [
    ("the_first_screen_is_the_leaderboard", "index", "report-index.png"),
    ("judges_disagree_keeps", "cell-judges-disagree", "report-cell-judges-disagree.png"),
    ("a_judge_conversation_opens_on_a_click", "hipho-conversation", "report-hipho-conversation.png"),
    ("the_side_by_side_page_shows_the_problem", "side-by-side", "report-side-by-side.png"),
    ("typesets_its_extracted_answers", "cell-index", "report-cell-index.png"),
    ("every_criterion_with_points_award_and_reason", "hipho-criteria-scripted", "report-hipho-criteria.png"),
    ("a_filter_that_matches_nothing", "cell-no-match", "report-cell-no-match.png"),
]
LARGEST_KB = 300


def take(folder: Path) -> None:
    tests = " or ".join(test for test, _, _ in SHOTS)
    command = [sys.executable, "-m", "pytest", "tests/test_report_browser.py", "-n", "0", "-q", "-k", tests]
    subprocess.run(command, cwd=ROOT, env={**os.environ, "OLYMPIAD_EVAL_ARTEFACTS": str(folder)}, check=True)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="oe-screenshots-") as folder:
        take(Path(folder))
        for _, artefact, name in SHOTS:
            source, target = Path(folder) / f"{artefact}.png", ROOT / "docs" / name
            shutil.copyfile(source, target)
            size = target.stat().st_size / 1000
            print(f"docs/{name}: {size:.0f} kB{'' if size < LARGEST_KB else f' (over {LARGEST_KB} kB)'}")


if __name__ == "__main__":
    main()
