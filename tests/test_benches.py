"""Every agreement bench under bench/ runs here, on a small fixture or without what it compares
with, so that a changed signature breaks a test and not a bench nobody ran: each proves agreement
or fails (a bench that compares nothing exits non-zero unless `--allow-skip`), and each prints its
agreement last."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.support import ROOT

SKIPPED = 3  # bench/agreement.py: compared nothing
AGREEMENT_BENCHES = sorted(path.name for path in (ROOT / "bench").glob("*_agreement.py"))


def bench(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT / 'bench'}"},
    )


def last_line(done: subprocess.CompletedProcess) -> str:
    return done.stdout.strip().splitlines()[-1]


def mathvision_release(tmp_path, runs: dict[str, list[tuple[str, str, bool]]]):
    """The sample's MATH-V problems laid out as the release, with run files of (id, response, the
    official verdict) rows and their official accuracy."""
    root = tmp_path / "mathvision"
    shutil.copytree(ROOT / "data" / "sample" / "mathvision", root)
    (root / "outputs").mkdir()
    for run, rows in runs.items():
        lines = [json.dumps({"id": i, "model": run, "response": r, "correct": c}) + "\n" for i, r, c in rows]
        (root / "outputs" / f"{run}.jsonl").write_text("".join(lines), encoding="utf-8")
        right = sum(correct for *_, correct in rows)
        result = {"-all": f"{right}/{len(rows)}={100 * right / len(rows) if rows else 0:.2f}%"}
        (root / "outputs" / f"{run}_result.json").write_text(json.dumps(result), encoding="utf-8")
    return root


# Verdicts of the official MATH-V scorer: a letter read from the answer, a number compared as a number.
RUN = [
    ("1", "The perimeter is 26 cm, so the answer is C.", True),
    ("2", "The answer is 27.", True),
    ("3", "Two more: the answer is D.", False),
    ("4", "The shaded part is 1/2.", False),
]


def test_every_agreement_bench_is_run_here():
    assert AGREEMENT_BENCHES == [
        "evalscope_agreement.py",
        "mathvision_evalscope_agreement.py",
        "mathvision_official_agreement.py",
        "olympiadbench_official_agreement.py",
        "vlmevalkit_agreement.py",
    ], "a new agreement bench: run it in this module on a small fixture"


def test_mathvision_official_agreement_on_a_small_release_and_an_empty_run_file(tmp_path):
    release = mathvision_release(tmp_path, {"Run": RUN, "Empty": []})
    done = bench("mathvision_official_agreement.py", "--release", str(release))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(an empty run file: nothing to compare)" in done.stdout
    assert last_line(done) == "agreement: 4 of 4 rows (100.00%)"


def test_mathvision_official_agreement_fails_on_a_disagreement(tmp_path):
    release = mathvision_release(tmp_path, {"Run": [*RUN[:3], ("4", "The shaded part is 1/2.", True)]})
    done = bench("mathvision_official_agreement.py", "--release", str(release))
    assert done.returncode == 1 and last_line(done) == "agreement: 3 of 4 rows (75.00%)"


@pytest.mark.parametrize("runs", [{}, {"Empty": []}])
def test_mathvision_official_agreement_that_compares_nothing_fails_unless_allowed(tmp_path, runs):
    release = mathvision_release(tmp_path, runs)
    done = bench("mathvision_official_agreement.py", "--release", str(release))
    assert done.returncode == SKIPPED and last_line(done) == "agreement: none (nothing compared)"
    allowed = bench("mathvision_official_agreement.py", "--release", str(release), "--allow-skip")
    assert allowed.returncode == 0 and last_line(allowed) == "agreement: none (nothing compared)"


def test_mathvision_evalscope_agreement_scores_our_side_then_fails_without_evalscope(tmp_path):
    """Our side runs on the small release (the judge stage's loading and checks); evalscope cannot
    be had here (its venv cannot be made), so nothing is compared: a failure unless allowed."""
    release = mathvision_release(tmp_path, {"Run": RUN})
    args = ["--release", str(release), "--venv", "/dev/null/venv", "--cache", "", "--no-adversarial"]
    done = bench("mathvision_evalscope_agreement.py", *args)
    assert "ours: 4 responses scored, 2 right" in done.stdout, done.stdout + done.stderr
    assert done.returncode == SKIPPED and last_line(done) == "agreement: none (nothing compared)"
    allowed = bench("mathvision_evalscope_agreement.py", *args, "--allow-skip")
    assert allowed.returncode == 0 and "ours: 4 responses scored" in allowed.stdout


# A stand-in for OlympiadBench's eval/auto_scoring_judge.py, which is never in this repository: the
# official interface (`AutoScoringJudge().judge(answer, gold, precision)`) over our port of it, with
# its verdict passed through VERDICT (an expression of `correct`), so that the bench's whole path
# (its driver in the official protocol's interpreter, our check workers, the comparison, the report)
# runs on the sample's first release.
STAND_IN_JUDGE = """
import importlib.util
spec = importlib.util.spec_from_file_location("official_judge", {port!r})
port = importlib.util.module_from_spec(spec)
spec.loader.exec_module(port)


class AutoScoringJudge:
    def judge(self, expression1, expression2, precision=1e-8):
        correct = port.judge(expression1, expression2, precision)
        return {verdict}
"""
PORT = ROOT / "src" / "olympiad_eval" / "benchmarks" / "olympiadbench" / "official_judge.py"
FIRST_RELEASE = ROOT / "data" / "sample" / "olympiadbench" / "first_release"


def olympiadbench_agreement(tmp_path, verdict: str) -> subprocess.CompletedProcess:
    judge = tmp_path / "auto_scoring_judge.py"
    judge.write_text(STAND_IN_JUDGE.format(port=str(PORT), verdict=verdict), encoding="utf-8")
    args = ["--judge", str(judge), "--release", str(FIRST_RELEASE), "--per-class", "1"]
    return bench("olympiadbench_official_agreement.py", *args)


def test_olympiadbench_official_agreement_runs_its_whole_path_against_a_stand_in_judge(tmp_path):
    done = olympiadbench_agreement(tmp_path, "correct")
    assert done.returncode == 0, done.stdout + done.stderr
    pairs = int(re.search(r"(\d+) pairs;", done.stdout).group(1))
    assert re.search(r"^reference +(\d+) +\1 +100\.00$", done.stdout, re.M), done.stdout
    assert last_line(done) == f"agreement: {pairs} of {pairs} pairs (100.00%)"


def test_olympiadbench_official_agreement_fails_and_shows_where_the_judges_disagree(tmp_path):
    done = olympiadbench_agreement(tmp_path, "False")  # a judge that rejects every answer
    assert done.returncode == 1, done.stdout + done.stderr
    rejected = int(re.search(r"reference answers the official judge rejects \(release quirks\): (\d+)", done.stdout)[1])
    assert rejected > 0 and "  reference: ours True, official False:" in done.stdout
    assert last_line(done).startswith("agreement: ") and not last_line(done).endswith("(100.00%)")


@pytest.mark.parametrize(
    "name,args",
    [
        ("vlmevalkit_agreement.py", ["--vlmevalkit", "/nonexistent/VLMEvalKit"]),
        ("evalscope_agreement.py", ["--venv", "/dev/null/venv"]),
        ("olympiadbench_official_agreement.py", ["--judge", "/nonexistent/auto_scoring_judge.py"]),
    ],
)
def test_a_third_party_bench_without_the_third_party_compares_nothing_and_fails_unless_allowed(name, args):
    done = bench(name, *args)
    assert done.returncode == SKIPPED, done.stdout + done.stderr
    assert (
        done.stdout.splitlines()[-2].startswith("skipped: ") and last_line(done) == "agreement: none (nothing compared)"
    )
    allowed = bench(name, *args, "--allow-skip")
    assert allowed.returncode == 0 and last_line(allowed) == "agreement: none (nothing compared)"
