"""The bundled sample's `dvc repro` as a user runs it after `git clone`: the whole plan, then a no-op,
then one stage forced again (DVC's own cost around a stage: the time beyond the stage's command).

    python bench/sample_repro.py                    # this working tree
    python bench/sample_repro.py --tree /other/tree --repeat 3

Each run is a fresh copy of the tree (its files git does not ignore) with its own request cache;
the tree's own `src` is imported by its stages. Prints wall and CPU seconds (this process's
children: DVC and every stage it ran) and the size of the lock files DVC rewrites after each stage.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from olympiad_eval.testing import clone, lock_files

ROOT = Path(__file__).resolve().parents[1]
# The stage forced again, and its command alone, by the tree's stage granularity: a model's evaluate stage
# (a tree with a stage per model and benchmark: its every part found up to date), or a rules-only judge cell.
FORCED = {
    "evaluate@sample_physelite-demo": ["stages/evaluate.py", "model=demo", "cell.benchmark=sample_physelite"],
    "judge@sample_physelite_en-demo-rule": [
        "stages/judge.py",
        "judge=rule",
        "cell.suite=sample_physelite_en",
        "cell.model=demo",
    ],
}


def timed(command: list[str], cwd: Path, env: dict) -> tuple[float, float, str]:
    """Wall and CPU seconds of a command (its whole process tree, once it has ended), and its output."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode:
        sys.exit(f"{' '.join(command)} failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, result.stdout + result.stderr


def measure(tree: Path, folder: Path) -> dict:
    repo = clone(folder / "repo", tree)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(repo / "src"),
        "OLYMPIAD_EVAL_REQUEST_CACHE": str(folder / "requests.sqlite"),
    }
    dvc = [str(Path(sys.executable).parent / "dvc")]
    full = timed([*dvc, "repro"], repo, env)
    noop = timed([*dvc, "repro"], repo, env)
    listed = timed([*dvc, "stage", "list", "--all", "--name-only"], repo, env)[2].split()
    [(address, script)] = [(a, FORCED[a.rpartition(":")[2]]) for a in listed if a.rpartition(":")[2] in FORCED]
    forced = timed([*dvc, "repro", "--force", "--single-item", address], repo, env)
    command = timed([sys.executable, *script], repo, env)
    return {
        "stages": len(re.findall(r"Running stage '", full[2])),
        "full": full[:2],
        "noop": noop[:2],
        "forced": forced[:2],
        "command": command[:2],
        "lock_lines": sum(len(lock.splitlines()) for lock in lock_files(repo).values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the working tree to copy (default: this one)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"{args.tree}: wall / CPU seconds")
    for run in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="sample-repro-") as folder:
            m = measure(args.tree.resolve(), Path(folder))
        dvc_wall, dvc_cpu = (m["forced"][i] - m["command"][i] for i in (0, 1))
        print(
            f"run {run + 1}: {m['stages']} stages: repro {m['full'][0]:.1f} / {m['full'][1]:.1f}; "
            f"no-op {m['noop'][0]:.1f} / {m['noop'][1]:.1f}; one stage forced {m['forced'][0]:.1f} / "
            f"{m['forced'][1]:.1f}, its command alone {m['command'][0]:.1f} / {m['command'][1]:.1f}, "
            f"DVC's cost {dvc_wall:.1f} / {dvc_cpu:.1f}; lock files {m['lock_lines']} lines"
        )


if __name__ == "__main__":
    main()
