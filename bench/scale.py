"""A PhysElite-sized run as a user runs it: `dvc repro` over a synthetic release, fake models and judges.

A temporary git copy of the repository gets a synthetic release in PhysElite's Hub layout (Parquet
shards, one row per problem x language, some problems with small PNG diagrams), a benchmark config
pointing at it (source type local), three fake models and an LLM judge served by a local fake
OpenAI server (real HTTP, a fixed latency), and a plan with the suites physelite_en and
physelite_zh, judged by `rule` and the LLM judge. Then `dvc repro`, then a no-op `dvc repro`.

Each stage's wall time, CPU and peak RSS are measured without touching the product: the copy's
stages run `python stages/<stage>.py ...`, and the `python` that DVC finds first on PATH is a shim
that runs the real interpreter as its child and logs getrusage(RUSAGE_CHILDREN) (the largest
process of the stage: the stage itself or one of its check workers).

    python bench/scale.py [--problems 11586] [--models 3] [--latency 0.5] [--concurrency 64] [--keep DIR]

DVC's own costs at a paper's count of stages are bench/paper_scale.py's.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from PIL import Image, ImageDraw

from olympiad_eval.cli.fake_server import JUDGE_MARKER, FakeOpenAI, judge_reply

ROOT = Path(__file__).resolve().parents[1]
from olympiad_eval.testing import clone, plan_yaml, stage_name  # noqa: E402

BIN = Path(sys.executable).parent
BENCHMARK = "physelite_scale"
SUITES = ("physelite_en", "physelite_zh")
JUDGE = "scale-judge"
RELEASE = Path("data/releases") / BENCHMARK  # where a user puts a downloaded release (ignored by git)
SHARD_ROWS = 8000  # rows per Parquet shard, as the Hub splits a release
SUBJECTS = ("Mechanics", "Electromagnetism", "Thermodynamics", "Optics", "Modern Physics")
UNITS = ("m", "m/s", "J", "N", "s", "K", "V", "Hz")
SLIP = "Taking the opposite sign for the friction term"  # the mark of a wrong response, for the fake judge


# ---------------------------------------------------------------- the synthetic release


def answer(index: int) -> str:
    return f"{1 + (index * 7919) % 9973 / 100:.2f} {UNITS[index % len(UNITS)]}"


def wrong_answer(index: int) -> str:
    value, unit = answer(index).split(" ", 1)
    return f"{float(value) * 1.5:.2f} {unit}"


def problem_id(index: int) -> str:
    return f"SE-{index:06d}"


def diagram(index: int, kind: str) -> bytes:
    """A small line drawing, different for every problem (so every figure is stored on its own)."""
    image = Image.new("RGB", (240, 160), "white")
    draw = ImageDraw.Draw(image)
    x, y = 20 + index % 150, 20 + (index * 7) % 100
    draw.rectangle((x, y, x + 50, y + 30), outline="black", width=2)
    draw.line((0, 150, 240, 150 - index % 60), fill="black", width=2)
    draw.ellipse((180 - index % 40, 30, 210 - index % 40, 60), outline="blue", width=2)
    draw.text((5, 5), f"{problem_id(index)} {kind}", fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def texts(index: int, language: str) -> tuple[str, str]:
    """A question of olympiad length and a worked solution, both naming the problem's id."""
    pid, value = problem_id(index), answer(index)
    if language == "zh":
        question = (
            f"[{pid}] " + "如图所示，质量为 $m$ 的小物块从倾角为 $\\theta$ 的粗糙斜面顶端由静止释放，"
            "动摩擦因数为 $\\mu$，斜面固定在水平地面上。" * 3 + "求所要求的物理量（保留三位有效数字）。"
        )
        steps = (f"第{k}步：列出受力分析与运动方程，代入数值。\n" for k in range(1, 9))
        solution = "".join(steps) + f"答案：{value}"
    else:
        setting = (
            "A small block of mass $m$ is released from rest at the top of a rough incline of angle "
            "$\\theta$ fixed on level ground; the coefficient of kinetic friction is $\\mu$. "
        )
        question = f"[{pid}] " + setting * 3 + "Find the requested quantity to three significant figures."
        solution = (
            "".join(
                f"Step {k}: write the force balance and the equation of motion, then substitute.\n" for k in range(1, 9)
            )
            + f"Answer: {value}"
        )
    return question, solution


def release_rows(index: int, figures: dict) -> list[dict]:
    """The problem's rows in our field names: one per language, sharing its figures."""
    rows = []
    for language in ("en", "zh"):
        question, solution = texts(index, language)
        rows.append(
            {
                "id": problem_id(index),
                "language": language,
                "text": question,
                "answer": answer(index),
                "solution": solution,
                "difficulty": 1 + index % 7,
                "subject": SUBJECTS[index % len(SUBJECTS)],
                **figures,
            }
        )
    return rows


def figures_of(index: int) -> dict:
    """One problem in seven has a schematic, one in forty also a process diagram."""

    def image(kind: str) -> list[dict]:
        return [{"bytes": diagram(index, kind), "path": f"{problem_id(index)}_{kind}.png"}]

    return {
        "images": image("schematic") if index % 7 == 0 else [],
        "process_images": image("process") if index % 40 == 0 else [],
    }


IMAGES = pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())]))


def write_release(root: Path, problems: int, fields: dict) -> None:
    """Parquet shards `data/test-0000k-of-0000n.parquet` with the columns the benchmark config names."""
    types = {"images": IMAGES, "process_images": IMAGES, "difficulty": pa.int64()}
    ours = ("id", "language", "text", "answer", "solution", "images", "process_images", "difficulty", "subject")
    schema = pa.schema([(fields[name], types.get(name, pa.string())) for name in ours])
    rows_per_shard = SHARD_ROWS // 2
    shards = max(1, -(-problems // rows_per_shard))
    (root / "data").mkdir(parents=True, exist_ok=True)
    for shard in range(shards):
        indices = range(shard * rows_per_shard + 1, min(problems, (shard + 1) * rows_per_shard) + 1)
        rows = [row for index in indices for row in release_rows(index, figures_of(index))]
        table = pa.Table.from_pylist([{fields[k]: v for k, v in row.items()} for row in rows], schema=schema)
        pq.write_table(table, root / "data" / f"test-{shard:05d}-of-{shards:05d}.parquet")


# ---------------------------------------------------------------- the fake endpoint


def accuracy(model: str) -> float:
    """scale-1 answers 85% of problems right, scale-2 70%, scale-3 55%, ..."""
    return max(0.1, 1.0 - 0.15 * int(model.rsplit("-", 1)[1]))


def is_right(model: str, pid: str) -> bool:
    draw = int(hashlib.sha256(f"{model}/{pid}".encode()).hexdigest()[:8], 16) % 1000
    return draw < accuracy(model) * 1000


def expected_score(model: str, problems: int) -> float:
    """The rule judge's score (%) of a model that answers as `Responder` does."""
    right = sum(is_right(model, problem_id(i)) for i in range(1, problems + 1))
    return round(100 * right / problems, 2)


def response(model: str, pid: str) -> str:
    index = int(pid.split("-")[1])
    right = is_right(model, pid)
    steps = "".join(
        f"Step {k}: the forces along the incline give $m a = m g \\sin\\theta - \\mu m g \\cos\\theta$; "
        "integrating the motion over the incline's length and substituting the given values.\n"
        for k in range(1, 9)
    )
    slip = "" if right else f"{SLIP}, the acceleration becomes larger.\n"
    final = answer(index) if right else wrong_answer(index)
    return f"{model} solves problem {pid} step by step.\n{steps}{slip}FINAL ANSWER: {final}"


_ID = re.compile(r"\[(SE-\d+)\]")


class Responder:
    """Models answer in the PhysElite prompt's format, right for most problems; the judge replies in
    the schema asked (judge_reply), calling a response with the slip incorrect. Counts both."""

    def __init__(self):
        self.lock = threading.Lock()
        self.generations = self.judgments = 0

    def __call__(self, body: dict) -> str:
        system = body["messages"][0].get("content")
        if isinstance(system, str) and JUDGE_MARKER in system:
            return self.judge(json.dumps(body["messages"], ensure_ascii=False))
        with self.lock:
            self.generations += 1
        text = next(part["text"] for part in body["messages"][-1]["content"] if part.get("type") == "text")
        return response(body["model"], _ID.search(text).group(1))

    def judge(self, prompt: str) -> str:
        with self.lock:
            self.judgments += 1
        reply, wrong = judge_reply(prompt), SLIP in prompt
        if "verdict" in reply and wrong:
            reply = {"verdict": "incorrect", "reasoning": "The sign of the friction term is wrong."}
        if "steps" in reply:
            reply = {
                "steps": [
                    {"step": "Force balance.", "grade": 1.0},
                    {"step": "Equation of motion.", "grade": 1.0},
                    {"step": "Result.", "grade": 0.0 if wrong else 1.0},
                ],
                "reasoning": "Graded.",
            }
        return json.dumps(reply)


# ---------------------------------------------------------------- the repository copy

SHIM = '''#!{python}
"""`python` for DVC's stage commands: runs the real interpreter and logs the stage's cost."""
import json, resource, subprocess, sys, time
start = time.time()
code = subprocess.call([{real!r}, *sys.argv[1:]])
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open({log!r}, "a") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "start": start, "wall": time.time() - start, "code": code,
                          "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}}) + "\\n")
sys.exit(code)
'''


class Repo:
    """The copy, with a `python` shim first on PATH that logs every stage's wall, CPU and peak RSS."""

    def __init__(self, path: Path):
        self.path = path
        shims = path.parent / f"{path.name}-shims"
        shims.mkdir(exist_ok=True)
        self.stage_log = shims / "stages.jsonl"
        shim = shims / "python"
        shim.write_text(SHIM.format(python=sys.executable, real=str(BIN / "python"), log=str(self.stage_log)))
        shim.chmod(0o755)
        # the copy's own request cache, not the user's: every run starts cold and leaves no replies behind
        self.env = {
            **os.environ,
            "PATH": f"{shims}{os.pathsep}{BIN}{os.pathsep}{os.environ['PATH']}",
            "PYTHONPATH": str(path / "src"),
            "HYDRA_FULL_ERROR": "1",
            "OLYMPIAD_EVAL_REQUEST_CACHE": str(path / ".cache" / "requests.sqlite"),
        }

    def write(self, name: str, text: str) -> None:
        (self.path / name).parent.mkdir(parents=True, exist_ok=True)
        (self.path / name).write_text(text, encoding="utf-8")

    def dvc(self, *args: str) -> tuple[float, str]:
        """(wall seconds, output) of a dvc command; its output also goes to dvc.log beside the copy."""
        start = time.perf_counter()
        result = subprocess.run(
            [str(BIN / "dvc"), *args], cwd=self.path, env=self.env, capture_output=True, text=True, check=False
        )
        wall = time.perf_counter() - start
        with open(self.path.parent / f"{self.path.name}-dvc.log", "a", encoding="utf-8") as log:
            log.write(f"$ dvc {' '.join(args)}  ({wall:.2f} s)\n{result.stdout}{result.stderr}\n")
        if result.returncode != 0:
            raise RuntimeError(f"dvc {' '.join(args)} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
        return wall, result.stdout + result.stderr

    def repro(self, *args: str) -> tuple[float, list[str]]:
        wall, output = self.dvc("repro", *args)
        return wall, sorted(map(stage_name, re.findall(r"Running stage '([^']+)'", output)))

    def stage_names(self) -> list[str]:
        return sorted(map(stage_name, self.dvc("stage", "list", "--all", "--name-only")[1].split()))

    def stages(self) -> list[dict]:
        """What the shim logged, one record per stage run, named as DVC names the stage."""
        if not self.stage_log.is_file():
            return []
        return [
            {**run, "stage": shim_stage_name(run["argv"])}
            for run in map(json.loads, self.stage_log.read_text().splitlines())
        ]


ORDER = {
    "fetch": ["benchmark"],
    "render": ["suite"],
    "generate": ["cell.suite", "model"],
    "pages": ["cell.suite", "cell.model"],
    "evaluate": ["cell.benchmark", "model"],  # a tree with a stage per model and benchmark (c51b051 and before)
    "judge": ["cell.suite", "cell.model", "judge"],
    "aggregate": ["benchmark"],
}


def shim_stage_name(argv: list[str]) -> str:
    stage = Path(argv[0]).stem
    overrides = dict(arg.split("=", 1) for arg in argv[1:] if "=" in arg)
    keys = ORDER.get(stage, [])  # the report's root has no cell
    return f"{stage}@{'-'.join(overrides.get(key, '?') for key in keys)}" if keys else stage


def release_fields(repo: Path) -> dict:
    return yaml.safe_load((repo / "conf/benchmark/physelite.yaml").read_text(encoding="utf-8"))["fields"]


def benchmark_config(conf: Path, release: Path) -> dict:
    """A benchmark config like the Hub one in `conf`, but reading the synthetic release at `release`."""
    hub = yaml.safe_load((conf / "benchmark/physelite.yaml").read_text(encoding="utf-8"))
    return {
        "kind": "physelite",
        "source": {"type": "local", "path": release.as_posix()},
        "split": "test",
        "fields": hub["fields"],
        "languages": hub["languages"],
        "difficulty_bands": hub["difficulty_bands"],
    }


def write_benchmark(repo: Repo, problems: int) -> None:
    """The release in the copy, and a benchmark config like the Hub one but with a local source."""
    write_release(repo.path / RELEASE, problems, release_fields(repo.path))
    config = benchmark_config(repo.path / "conf", RELEASE)
    repo.write(
        f"conf/benchmark/{BENCHMARK}.yaml",
        "# A synthetic PhysElite-sized release (bench/scale.py).\n" + yaml.safe_dump(config, sort_keys=False),
    )


def endpoint(base_url: str, model: str, concurrency: int) -> dict:
    return {
        "base_url": base_url,
        "model": model,
        "api_key_env": None,
        "concurrency": concurrency,
        "max_retries": 2,
        "timeout": 120,
    }


def write_plan(repo: Repo, models: list[str], judges: list[str], suites: dict[str, str] | None = None) -> None:
    suites = suites or {suite: BENCHMARK for suite in SUITES}
    repo.write("params.yaml", plan_yaml(suites, models, judges, ROOT, conf=repo.path / "conf"))


def configure(repo: Repo, base_url: str, models: int, concurrency: int) -> list[str]:
    names = [f"scale-{i}" for i in range(1, models + 1)]
    for name in names:
        model = {
            "provider": "openai",
            **endpoint(base_url, name, concurrency),
            "generation": {"temperature": 0, "max_tokens": 4096},
        }
        repo.write(f"conf/model/{name}.yaml", yaml.safe_dump(model, sort_keys=False))
    judges = {"fake-judge": endpoint(base_url, "fake-judge", concurrency)}
    judge = {"defaults": ["llm_base", "_self_"], "judges": judges}
    repo.write(f"conf/judge/{JUDGE}.yaml", yaml.safe_dump(judge, sort_keys=False))
    write_plan(repo, names, ["rule", JUDGE])
    return names


# ---------------------------------------------------------------- the run


def ideal_seconds(stage: str, problems: int, concurrency: int, latency: float) -> float | None:
    """Requests / concurrency x latency: a generate stage asks one request per prompt of its suite,
    an LLM judge's stage two per response (the answer verdict and the process)."""
    if stage.startswith("generate@"):
        return problems / concurrency * latency
    if stage.startswith("judge@") and stage.endswith(f"-{JUDGE}"):
        return 2 * problems / concurrency * latency
    return None


def run(problems: int, models: int, latency: float, concurrency: int, keep: Path | None = None) -> dict:
    """The whole bench; returns its figures (also written to results.json beside the copy)."""
    workdir = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="oe-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    repo = Repo(clone(workdir / "repo", ROOT))
    start = time.perf_counter()
    write_benchmark(repo, problems)
    release_s = time.perf_counter() - start
    responder = Responder()
    with FakeOpenAI(responder, latency=latency, record=False) as server:  # 200,000 bodies would take gigabytes
        names = configure(repo, server.base_url, models, concurrency)
        repro_s, ran = repro_checked(repo)
        noop_s, noop_ran = repo.repro()
        status_s, _ = repo.dvc("status")
        peak = server.peak_in_flight
    result = {
        "problems": problems,
        "models": names,
        "latency": latency,
        "concurrency": concurrency,
        "release_s": release_s,
        "repro_s": repro_s,
        "ran": ran,
        "noop_s": noop_s,
        "noop_ran": noop_ran,
        "status_s": status_s,
        "generation_requests": responder.generations,
        "judge_requests": responder.judgments,
        "peak_in_flight": peak,
        "expected": {name: expected_score(name, problems) for name in names},
        "stages": [
            {**stage, "ideal": ideal_seconds(stage["stage"], problems, concurrency, latency)} for stage in repo.stages()
        ],
        "repo": str(repo.path),
    }
    (workdir / "results.json").write_text(json.dumps(result, indent=2))
    if not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return result


def repro_checked(repo: Repo) -> tuple[float, list[str]]:
    wall, ran = repo.repro()
    if ran != repo.stage_names():
        raise RuntimeError(f"dvc repro ran {ran}, not every stage of the plan")
    return wall, ran


def report(result: dict) -> None:
    print(
        f"{result['problems']} problems x 2 languages, models {', '.join(result['models'])}, judges rule and "
        f"{JUDGE}; latency {result['latency']} s, concurrency {result['concurrency']} "
        f"({result['concurrency'] / result['latency']:.0f} req/s ideal); "
        f"release written in {result['release_s']:.1f} s"
    )
    print(f"{'stage':<46}{'wall s':>9}{'ideal s':>9}{'ideal/wall':>12}{'CPU s':>8}{'peak RSS MB':>13}")
    for stage in result["stages"]:
        ideal = stage["ideal"]
        share = f"{ideal / stage['wall']:.1%}" if ideal else ""
        print(
            f"{stage['stage']:<46}{stage['wall']:>9.1f}{ideal or 0:>9.1f}{share:>12}{stage['cpu']:>8.1f}"
            f"{stage['rss_mb']:>13.0f}"
        )
    total = sum(stage["wall"] for stage in result["stages"])
    print(
        f"dvc repro: {result['repro_s']:.1f} s ({total:.1f} s in stages, {result['repro_s'] - total:.1f} s in DVC); "
        f"requests: {result['generation_requests']} generation, {result['judge_requests']} judge; "
        f"peak in flight {result['peak_in_flight']}"
    )
    print(
        f"no-op dvc repro: {result['noop_s']:.2f} s (ran {len(result['noop_ran'])} stages; target < 10 s); "
        f"dvc status: {result['status_s']:.2f} s"
    )
    worst = max(result["stages"], key=lambda stage: stage["rss_mb"])
    print(f"peak RSS: {worst['rss_mb']:.0f} MB in {worst['stage']} (target < 1024 MB per stage)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", type=int, default=11586, help="problems (each in zh and en)")
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds before each fake reply")
    parser.add_argument("--concurrency", type=int, default=64, help="requests in flight per model and judge")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep the copy, its logs and results.json")
    args = parser.parse_args()
    report(run(args.problems, args.models, args.latency, args.concurrency, args.keep))


if __name__ == "__main__":
    main()
