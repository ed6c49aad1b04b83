"""A paper's plan through DVC: 30 models on every suite of the bundled sample's plan, judged by the rules
and by an offline LLM judge (the scripted one: every LLM protocol's prompts, parsing and combination, no
endpoint), as `dvc repro` runs it; DVC's own costs measured.

    python bench/paper_scale.py            # this tree: the whole plan, a no-op, a model added, a judge edited
    python bench/paper_scale.py --tree /old/tree --fill  # a plan too long to run whole (see below)

Each tree is a fresh git copy with its own request cache, its stages importing its own `src`. The
`python` that DVC finds first on PATH is a shim that logs each stage's wall time (bench/scale.py's),
so DVC's own cost is the time `dvc repro` takes beyond its stages' commands, per stage it ran.

Measured, in order: the whole plan from nothing (or, with --fill, one model's stages run and every
other model's outputs copied from them, then locked in bulk with DVC's own serialisation: what the
run would have left, without its hours); a no-op `dvc repro`; one model added to the plan (the
stages it runs, and DVC's cost per stage); one judge's config edited (unless --fill: that reruns
every model's judge cells of a tree with a stage per cell).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale  # the shim-timed copy of a tree: bench/scale.py's Repo

from olympiad_eval.testing import clone, lock_files, plan_yaml

ROOT = Path(__file__).resolve().parents[1]
# Every suite of the bundled sample's plan (suite: its benchmark), in its four families. (Not the protocol
# variants: a benchmark's tables take one protocol per judge, so a variant is a plan of its own.)
SUITES = {
    "sample_hipho": "sample_hipho",
    "sample_mathvision": "sample_mathvision",
    "sample_olympiadbench": "sample_olympiadbench",
    "sample_olympiadbench_current": "sample_olympiadbench_current",
    "sample_physelite_en": "sample_physelite",
    "sample_physelite_zh": "sample_physelite",
}
JUDGES = ["rule", "scripted"]
FIRST = "m01"


def model_names(count: int) -> list[str]:
    return [f"m{n:02d}" for n in range(1, count + 1)]


def prepare(tree: Path, folder: Path, models: list[str]) -> scale.Repo:
    """A copy of `tree` with `models` offline models (each answers with the gold answer) and a plan of
    every sample suite and both judges. A judge error does not fail a cell here (min_coverage 0): the
    scripted judge's canned replies fit most prompts, not every protocol's every task."""
    repo = scale.Repo(clone(folder / "repo", tree))
    for name in model_names(len(models) + 1):
        repo.write(f"conf/model/{name}.yaml", "provider: reference\nsamples: 1\n")
    for config in (
        "conf/judge.yaml",
        "conf/evaluate.yaml",
    ):  # where each tree keeps min_coverage (the stage per model's)
        path = repo.path / config
        if path.is_file():
            path.write_text(re.sub(r"min_coverage: [\d.]+", "min_coverage: 0.0", path.read_text()), encoding="utf-8")
    write_plan(repo, models)
    return repo


def write_plan(repo: scale.Repo, models: list[str]) -> None:
    repo.write("params.yaml", plan_yaml(SUITES, models, JUDGES, repo.path))


def timed_repro(repo: scale.Repo, *args: str) -> dict:
    """`dvc repro`: its wall time, the stages it ran, their commands' time, and DVC's own per stage."""
    before = len(repo.stages())
    start = time.perf_counter()
    _, output = repo.dvc("repro", *args)
    wall = time.perf_counter() - start
    ran = re.findall(r"Running stage '([^']+)'", output)
    commands = sum(run["wall"] for run in repo.stages()[before:])
    return {
        "wall": wall,
        "stages": len(ran),
        "commands": commands,
        "dvc_per_stage": (wall - commands) / len(ran) if ran else None,
    }


def fill(repo: scale.Repo, models: list[str]) -> dict:
    """One model's stages run, every other model's outputs copied from them (the model's name changed
    in each record), every stage of the plan then locked as DVC would after running it."""
    write_plan(repo, models[:1])
    first = timed_repro(repo)
    write_plan(repo, models)
    outputs = repo.path / "outputs"
    copied = 0
    for path in sorted(outputs.rglob("*")):
        parts = path.relative_to(outputs).parts
        if not path.is_file() or not (FIRST in parts or path.stem == FIRST):
            continue
        for model in models[1:]:
            renamed = tuple(model if part == FIRST else part for part in parts[:-1])
            name = f"{model}{path.suffix}" if path.stem == FIRST else parts[-1]
            target = outputs.joinpath(*renamed, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix in (".jsonl", ".json"):
                target.write_text(path.read_text(encoding="utf-8").replace(f'"{FIRST}"', f'"{model}"'), "utf-8")
            else:
                shutil.copyfile(path, target)
            copied += 1
    start = time.perf_counter()
    locked = lock_everything(repo.path)
    return {
        "first_model": first,
        "files_copied": copied,
        "stages_locked": locked,
        "lock_s": time.perf_counter() - start,
    }


def lock_everything(path: Path) -> int:
    """Every stage's entry in its dvc.lock and its outputs in DVC's cache, as DVC leaves them after running
    the stage (its dependencies' and outputs' hashes as they are now), one write per lock file instead
    of one per stage. In the repository's folder: DVC reads a stage's paths from where it runs."""
    from dvc.repo import Repo

    by_file = defaultdict(list)
    with contextlib.chdir(path), Repo(".") as repo, repo.lock:
        for stage in repo.index.stages:
            stage.save(run_cache=False)
            stage.commit()  # else a no-op finds the outputs "not in cache" and runs the stage
            by_file[stage.dvcfile.path].append(stage)
        for stages in by_file.values():
            stages[0].dvcfile._lockfile.dump_stages(stages)
    return sum(len(stages) for stages in by_file.values())


def measure(tree: Path, folder: Path, count: int, filled: bool) -> dict:
    models = model_names(count)
    repo = prepare(tree, folder, models)
    result: dict = {"tree": str(tree), "models": count, "suites": len(SUITES), "judges": len(JUDGES)}
    if filled:
        result["fill"] = fill(repo, models)
    else:
        result["full"] = timed_repro(repo)
    result["stages"] = len(repo.stage_names())
    result["noop"] = timed_repro(repo)  # a filled plan that ran stages here was not what a run leaves
    write_plan(repo, models + model_names(count + 1)[-1:])
    result["add_model"] = timed_repro(repo)
    if not filled:
        judge = repo.path / "conf/judge/scripted.yaml"
        judge.write_text(judge.read_text(encoding="utf-8") + "max_reasks: 1\n", encoding="utf-8")
        result["edit_judge"] = timed_repro(repo)
    locks = lock_files(repo.path)
    result["lock_files"], result["lock_lines"] = len(locks), sum(len(lock.splitlines()) for lock in locks.values())
    result["largest_lock_lines"] = max(len(lock.splitlines()) for lock in locks.values())
    return result


def report(result: dict) -> None:
    scan = result["noop"]["wall"]  # what every `dvc repro` pays before it runs a stage: reading the plan

    def line(name: str, run: dict, on_the_plan: bool = False) -> str:
        per = ""
        if run["dvc_per_stage"] is not None:
            per = f", DVC's own {run['dvc_per_stage']:.2f} s per stage"
            if on_the_plan:  # the scan of the plan measured by the no-op: what is left is per stage
                beyond = (run["wall"] - run["commands"] - scan) / run["stages"]
                per += f" ({beyond:.2f} s beyond a no-op's {scan:.1f} s)"
        ran = f"{run['stages']:5d} stages run (their commands {run['commands']:.1f} s)"
        return f"  {name:<22}{run['wall']:8.1f} s, {ran}{per}"

    print(f"{result['tree']}: {result['models']} models x {result['suites']} suites x {result['judges']} judges")
    print(f"  the plan: {result['stages']} stages; {result['lock_files']} lock files, {result['lock_lines']:,} lines "
          f"(the largest {result['largest_lock_lines']:,})")  # fmt: skip
    if "fill" in result:
        filled = result["fill"]
        print(line("one model, whole", filled["first_model"]))
        print(f"  filled: {filled['files_copied']:,} files copied, {filled['stages_locked']} stages locked in "
              f"{filled['lock_s']:.1f} s")  # fmt: skip
    else:
        print(line("whole plan", result["full"]))
    print(line("no-op", result["noop"]))
    print(line("a model added", result["add_model"], on_the_plan=True))
    if "edit_judge" in result:
        print(line("a judge edited", result["edit_judge"], on_the_plan=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the working tree to copy (default: this one)")
    parser.add_argument("--models", type=int, default=30)
    parser.add_argument("--fill", action="store_true", help="run one model, copy and lock the others (see above)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it, with results.json")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="paper-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        result = measure(args.tree.resolve(), folder, args.models, args.fill)
        (folder / "results.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
        report(result)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
