"""Agreement of `mathvision_official` with the verdicts of MATH-Vision's released runs.

For each run in <release>/outputs/<RUN>.jsonl (scored by the official MATH-V code against
<release>/data/test.jsonl), prints the rows, the rows (and %) whose verdict we reproduce, our accuracy,
the official one (<RUN>_result.json), their difference, and our scoring time per row (a cold cache).

    python bench/mathvision_official_agreement.py [--release ../shared/data/mathvision] [--show 10] [--allow-skip]

A run file without rows is said to be empty and compares nothing; a release without run files (or
none at all) compares nothing, which fails unless `--allow-skip`. The last line is the agreement
over every row compared.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from agreement import agreement, allow_skip, skipped  # bench/ is on the path

from olympiad_eval.benchmarks.mathvision import official

DEFAULT_RELEASE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mathvision"


def load_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def official_accuracy(path: Path) -> float:
    """`"-all": "537/3040=17.66%"` -> 17.664..."""
    right, total = json.loads(path.read_text(encoding="utf-8"))["-all"].split("=")[0].split("/")
    return 100 * int(right) / int(total)


def score_run(rows: list[dict], problems: dict[str, dict]) -> tuple[list[bool], float]:
    official._cached_value.cache_clear()  # time each run from a cold cache
    start = time.perf_counter()
    verdicts = [
        official.is_correct(row["response"], problems[row["id"]]["answer"], problems[row["id"]]["options"])
        for row in rows
    ]
    return verdicts, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release", type=Path, default=DEFAULT_RELEASE, help="the MATH-V release (data/, outputs/)")
    parser.add_argument("--show", type=int, default=5, help="disagreeing rows to print per run")
    allow_skip(parser)
    args = parser.parse_args()

    if not (args.release / "data" / "test.jsonl").is_file():
        skipped(f"no MATH-V release at {args.release} (data/test.jsonl)", args.allow_skip)
    problems = {row["id"]: row for row in load_jsonl(args.release / "data" / "test.jsonl")}
    print(
        f"{'run':26} {'rows':>5} {'agree':>5} {'agree %':>8} {'ours %':>7} {'official %':>10} {'diff':>6} {'ms/row':>7}"
    )
    compared = agreed = 0
    for path in sorted((args.release / "outputs").glob("*.jsonl")):
        rows = load_jsonl(path)
        if not rows:
            print(f"{path.stem:26} {0:5d}  (an empty run file: nothing to compare)")
            continue
        verdicts, seconds = score_run(rows, problems)
        disagree = [(row, mine) for row, mine in zip(rows, verdicts) if mine != row["correct"]]
        ours = 100 * sum(verdicts) / len(rows)
        theirs = official_accuracy(path.with_name(f"{path.stem}_result.json"))
        print(
            f"{path.stem:26} {len(rows):5d} {len(rows) - len(disagree):5d} "
            f"{100 * (1 - len(disagree) / len(rows)):8.2f} "
            f"{ours:7.2f} {theirs:10.2f} "
            f"{ours - theirs:+6.2f} {1000 * seconds / len(rows):7.2f}"
        )
        compared, agreed = compared + len(rows), agreed + len(rows) - len(disagree)
        for row, mine in disagree[: args.show]:
            problem = problems[row["id"]]
            print(
                f"    id {row['id']}: ours {mine}, official {row['correct']}; "
                f"extracted {official.extract(row['response'])!r}, "
                f"answer {problem['answer']!r}, options {problem['options']}"
            )
    if not compared:
        skipped(f"no rows in {args.release / 'outputs'}/*.jsonl to compare", args.allow_skip)
    print(agreement(agreed, compared, "rows"))
    sys.exit(0 if agreed == compared else 1)


if __name__ == "__main__":
    main()
