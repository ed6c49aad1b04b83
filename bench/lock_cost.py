"""What DVC pays after each stage it runs to rewrite its pipeline's dvc.lock, by the lock's size.

    python bench/lock_cost.py                  # pipelines/physelite/judge/dvc.lock, 1 to 32 times its stages
    python bench/lock_cost.py --lock pipelines/hipho/generate/dvc.lock --copies 1 4

After each stage, DVC reads the whole lock of the stage's dvc.yaml with ruamel's round-trip loader,
puts the stage's entry in and writes the file back (`dvc.utils.serialize.modify_yaml`, the call its
lockfile makes). A family's stages of one kind share one lock (its cells' judge stages, say), so
this cost grows with the plan: here the lock is the committed one with its stages copied under new
names, and each size is timed as DVC does it.
Prints the lock's lines and the seconds per rewrite (the median of `--repeat`), and beside them what
reading the same file takes with ruamel's C loader (`typ="safe"`, how DVC reads a lock to know a
stage's status): what a rewrite could cost were it not a round trip.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import yaml
from dvc.utils.serialize import modify_yaml, parse_yaml

ROOT = Path(__file__).resolve().parents[1]


def grown(lock: dict, copies: int) -> dict:
    """The lock with each stage `copies` times, each copy under its own name (as more models would be)."""
    stages = {f"{name}-{n}" if n else name: entry for n in range(copies) for name, entry in lock["stages"].items()}
    return {**lock, "stages": stages}


def safe_load_seconds(path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        parse_yaml(path.read_text(encoding="utf-8"), str(path))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def rewrite_seconds(path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        with modify_yaml(path) as data:
            data["stages"]["bench"] = {"cmd": "true"}  # one stage's entry, as DVC writes it after the stage
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lock", type=Path, default=ROOT / "pipelines" / "physelite" / "judge" / "dvc.lock")
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    lock = yaml.safe_load(args.lock.read_text(encoding="utf-8"))
    print(f"{args.lock}: {len(lock['stages'])} stages")
    print(f"{'stages':>7} {'lines':>8} {'s per rewrite':>14} {'s to read (C)':>14}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "dvc.lock"
        for copies in args.copies:
            data = grown(lock, copies)
            # no anchors: each entry written out in full, as DVC writes them
            path.write_text(yaml.dump(data, Dumper=_NoAliases, sort_keys=False), encoding="utf-8")
            lines = len(path.read_text(encoding="utf-8").splitlines())
            rewrite, read = rewrite_seconds(path, args.repeat), safe_load_seconds(path, args.repeat)
            print(f"{len(data['stages']):>7} {lines:>8} {rewrite:>14.3f} {read:>14.3f}")


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data) -> bool:
        return True


if __name__ == "__main__":
    main()
