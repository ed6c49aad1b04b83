"""HiPhO's `protocol: evalscope` against evalscope 1.14.1 itself, problem by problem.

evalscope 1.14.1 is installed by this script into its own virtual environment (`--venv`, by
default .cache/bench/evalscope-venv; never a project dependency: `pip install evalscope==1.14.1`,
about 1.2 GB and 115 packages, no torch). Both tools then run on the same HiPhO exams
(../shared/data/hipho, read in place by evalscope through `dataset_args={'hipho': {'local_path':
...}}`) against ONE local fake OpenAI-compatible server:

- the model's response to a problem is a deterministic function of the problem (found in the
  prompt by its question and context): boxed answers in `<answer>`, some the gold as written, some
  the gold in another form (a number in scientific notation), some wrong, some with fewer boxes
  than slots, a few with no answer at all;
- a criterion judge awards a hash-chosen quarter (0, 1/4, ..., 1) of the criterion's points as
  the request bounds them (so a tool that parsed other points than evalscope would get other
  awards), the hash taken over the question and the criterion's text;
- an answer judge's verdict is a hash of the question and the answer it is asked about.

So both tools get the same replies although they write their prompts separately. Besides the
shared exams, a small synthetic exam written for this bench (saved as `NBPhO_2025`, a name
evalscope accepts and that is not among the shared exams; marked * in the table) has criteria that
state "Award a total of X pt", whose points evalscope misparses and the evalscope protocol copies. Our side runs
the real stage scripts (fetch, render suite `hipho_evalscope`, generate, judge with `judge=gpt-4o`), as DVC runs
them. The table compares each problem's score (evalscope's `acc`, our judgment's `score`; a
problem that a tool leaves unscored counts as equal only when the other leaves it unscored too),
with each tool's mean per-problem ratio per exam, and checks that every judge prompt our side sent
is one evalscope sent.

    python bench/evalscope_agreement.py [--exams EuPhO_2024,CPhO_2025,IPhO_2025] [--venv PATH] [--keep]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agreement import allow_skip, skipped  # bench/ is on the path
from hipho_end_to_end import (
    hipho_plan,  # bench/ is on the path
    release as linked_release,
)

from olympiad_eval.benchmarks.judging import unfenced
from olympiad_eval.cli.fake_server import FakeOpenAI
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.records import Judgment, read_jsonl
from olympiad_eval.scoring.answers import boxes
from olympiad_eval.scoring.expressions import to_number

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT.parent / "shared" / "data" / "hipho"
VENV = ROOT / ".cache" / "bench" / "evalscope-venv"
EVALSCOPE = "evalscope==1.14.1"
TOLERANCE = 1e-6

# Run inside evalscope's venv: one evalscope run, its per-problem scores and per-exam metric as JSON.
RUNNER = r"""
import glob, json, os, sys
from evalscope import TaskConfig, run_task
args = json.loads(sys.argv[1])
run_task(TaskConfig(
    model="fake-model", api_url=args["url"], api_key="EMPTY", eval_type="openai_api",
    datasets=["hipho"], dataset_args={"hipho": {"local_path": args["data"], "subset_list": args["exams"]}},
    judge={"strategy": "llm", "models": [{"model_id": "fake-judge", "api_url": args["url"], "api_key": "EMPTY"}]},
    generation_config={"temperature": 0.0}, eval_batch_size=16, work_dir=args["work"], no_timestamp=True))
scores, metrics = {}, {}
for path in glob.glob(os.path.join(args["work"], "reviews", "*", "*.jsonl")):
    for line in open(path, encoding="utf-8"):
        sample = json.loads(line)["sample_score"]
        value = (sample["score"].get("value") or {}).get("acc")
        scores[sample["sample_metadata"]["id"]] = value
for path in glob.glob(os.path.join(args["work"], "reports", "*", "*.json")):
    report = json.load(open(path, encoding="utf-8"))
    for metric in report.get("metrics", []):
        for category in metric.get("categories", []):
            for subset in category.get("subsets", []):
                metrics[subset["name"]] = {"score": subset["score"], "num": subset["num"]}
json.dump({"scores": scores, "metrics": metrics}, open(args["out"], "w"))
"""


# ---------------------------------------------------------------- evalscope's environment


def ensure_evalscope(venv: Path) -> float | None:
    """evalscope 1.14.1 in its own venv; the seconds its installation took (None: already there)."""
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import evalscope, sys; sys.exit(evalscope.__version__ != '1.14.1')"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return None
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", EVALSCOPE], check=True)
    return time.perf_counter() - start


# ---------------------------------------------------------------- the exams and the fake server

SYNTHETIC = "NBPhO_2025"


def synthetic_exam() -> list:
    """Original problems in the release's format: "a total of" criteria, alternative schemes, a range."""
    common = {"modality": "text-only", "field": "Mechanics", "source": SYNTHETIC, "image_question": []}
    return [
        {"information": "None."},
        {
            **common,
            "id": f"{SYNTHETIC}_S1",
            "context": "A block slides from rest down a frictionless incline of height $h$ and length $L$.",
            "question": "Find the speed $v$ of the block at the bottom and the time $t$ the slide takes.",
            "marking": [
                [
                    "Award a total of 1.0 pt for the following: award 0.4 pt if the answer uses energy conservation "
                    "$mgh = \\frac{1}{2}mv^2$, and 0.6 pt if it obtains $v = \\sqrt{2gh}$.",
                    "Award 1.0 pt if the answer obtains $t = \\frac{2L}{\\sqrt{2gh}}$. Otherwise, award 0 pt.",
                ]
            ],
            "answer": ["\\boxed{$v = \\sqrt{2 g h}$}", "\\boxed{$t = \\frac{2L}{\\sqrt{2gh}}$}"],
            "answer_type": ["Expression", "Expression"],
            "unit": ["m/s", "s"],
            "points": [1.0, 1.0],
        },
        {
            **common,
            "id": f"{SYNTHETIC}_S2",
            "context": "A point charge $q$ sits in vacuum.",
            "question": "Sketch the field lines and find the field strength $E$ at distance $r$.",
            "marking": [
                [
                    "Award a total of 2 pts if the sketch of the field lines is right.",
                    "Award 1.0 pt if the answer obtains $E = \\frac{q}{4\\pi\\varepsilon_0 r^2}$. "
                    "Otherwise, award 0 pt.",
                ],
                [
                    "Award 1.5 pt if the answer applies Gauss's law to a sphere of radius $r$. Otherwise, award 0 pt.",
                    "Award 1.5 pt if the answer obtains $E$ correctly. Otherwise, award 0 pt.",
                ],
            ],
            "answer": ["\\boxed{$E = \\frac{q}{4\\pi\\varepsilon_0 r^2}$}"],
            "answer_type": ["Expression"],
            "unit": ["V/m"],
            "points": [3.0],
        },
        {
            **common,
            "id": f"{SYNTHETIC}_S3",
            "context": "",
            "question": "A pendulum of length $1.0\\ \\mathrm{m}$: give (1) its period in seconds, (2) which of "
            "(A) longer, "
            "(B) shorter, (C) unchanged describes the period on a mountain top, and (3) the ratio of its "
            "energies at two amplitudes $\\theta_0$ and $\\theta_0/\\sqrt{2}$.",
            "answer": ["\\boxed{$[1.9, 2.1]$}", "\\boxed{$A$}", "\\boxed{$2$}"],
            "answer_type": ["Numerical Value", "Multiple Choice", "Numerical Value"],
            "unit": ["s", None, None],
            "points": [2.0, 1.0, 1.0],
        },
    ]


def release(exams: list[str], folder: Path) -> Path:
    """A folder in the official layout holding the chosen exams (links) and the synthetic one."""
    if not exams:  # `linked_release` would hand back the shared release itself
        sys.exit(f"no exams to compare in {RELEASE / 'data'}")
    copy = linked_release(exams, folder)
    (copy / "data" / f"{SYNTHETIC}.json").write_text(
        json.dumps(synthetic_exam(), ensure_ascii=False, indent=1), encoding="utf-8"
    )
    return copy


def records(source: Path) -> list[dict]:
    return [
        item
        for path in sorted((source / "data").glob("*.json"))
        for item in json.loads(path.read_text(encoding="utf-8"))
        if "question" in item
    ]


BOXED = re.compile(r"\\boxed\{")  # the project's one brace matcher reads what follows


def digest(*parts: str) -> bytes:
    return hashlib.sha256("\x1f".join(parts).encode()).digest()


def box_payload(value: str) -> str:
    """The inside of the release's `\\boxed{...}` (the gold as written), else the text."""
    found = boxes(value, BOXED)
    return found[0].inside.strip() if found else value.strip()


def slot_answer(record: dict, index: int) -> str:
    """One box: the gold as written, the gold in scientific notation, or a wrong value."""
    gold = box_payload(str(record["answer"][index]))
    draw = digest(record["id"], str(index))
    if draw[0] < 150:  # right
        number = to_number(gold.replace("$", ""))
        if number is not None and draw[1] % 3 == 0:
            mantissa, exponent = f"{number:.6e}".split("e")
            return f"{float(mantissa):g} \\times 10^{{{int(exponent)}}}"
        return gold
    if re.fullmatch(r"\$?[A-E]\$?", gold):
        return "ABCDE"[("ABCDE".index(gold.strip("$")) + 1) % 5]
    return "\\text{no idea}" if draw[1] % 7 == 0 else f"{draw[2] % 90 + 10}.{draw[3] % 10}"


def model_response(record: dict) -> str:
    """All boxes; or fewer boxes than slots (about one problem in five); or none (one in ten). One
    in five also boxes a first guess in its think block, and one in five boxes a check after its
    answer block (0): boxes outside `<answer>` that evalscope reads and the official code does not."""
    slots, draw = len(record["answer"]), digest("response", record["id"])
    if draw[0] % 10 == 0:
        return "<think>\nThe problem is too hard for me.\n</think>\nI could not finish."
    shown = slots if draw[0] % 10 > 2 or slots < 2 else 1 + draw[1] % (slots - 1)
    boxes = ", ".join(f"\\boxed{{{slot_answer(record, index)}}}" for index in range(shown))
    guess = " A first guess: \\boxed{1}." if draw[2] % 5 == 0 else ""
    check = "\nCheck: \\boxed{0}" if draw[2] % 5 == 1 else ""
    return (
        f"<think>\nStep 1: set up the equations.{guess} Step 2: solve them.\n</think>\n"
        f"<answer>\n[{boxes}]\n</answer>{check}"
    )


def prompt_text(messages: list) -> str:
    """The text of a request as evalscope would send it (our fence taken out), its figures left
    out (our prompts cut the text at a figure's marker)."""
    return "".join(
        part if isinstance(part, str) else part.get("text", "")
        for message in unfenced(messages)
        for part in ([message["content"]] if isinstance(message["content"], str) else message["content"])
        if isinstance(part, str) or part.get("type") == "text"
    )


def responder(items: list[dict]):
    """Replies as a function of the problem (its question, and context for the model's answer),
    the criterion and the answer asked about, never of the prompt's wording around them."""
    by_question: dict[str, list[dict]] = {}
    for item in items:
        by_question.setdefault(item["question"].strip(), []).append(item)

    def reply(body: dict) -> str:
        text = prompt_text(body["messages"])
        # a later part's context may quote an earlier part's question: the asked question ends last
        found = [(text.rfind(q) + len(q), len(q), q) for q in by_question if q in text]
        if not found:
            raise ValueError(f"no known question in the request: {text[:300]!r}")
        question = max(found)[2]
        if '"awarded"' in text:
            criteria = sorted({c for item in by_question[question] for c in criteria_of(item) if c in text}, key=len)
            if not criteria:
                raise ValueError(f"no known criterion in the request: {text[:300]!r}")
            criterion = criteria[-1]
            bound = float(re.search(r'"awarded": a number >= 0\.0 and <= ([0-9.]+)', text).group(1))
            return json.dumps({"awarded": digest("award", question, criterion)[0] % 5 / 4 * bound})
        if '"correct"' in text:
            given = re.search(r"Output sentence: (.*?)\nCorrect answer: ", text, re.S).group(1)
            return json.dumps({"correct": digest("verdict", question, given)[0] % 2 == 0})
        # problems may share a question: the one whose context (the longest, as contexts grow) is asked
        candidates = [item for item in by_question[question] if str(item.get("context") or "").strip() in text]
        return model_response(
            max(candidates or by_question[question], key=lambda item: len(str(item.get("context") or "")))
        )

    return reply


def criteria_of(item: dict) -> list[str]:
    marking = item.get("marking") or []
    schemes = [marking] if all(isinstance(line, str) for line in marking) else marking
    return [str(c) for scheme in schemes for c in ([scheme] if isinstance(scheme, str) else scheme)]


# ---------------------------------------------------------------- the two runs


def run_evalscope(venv: Path, server: FakeOpenAI, source: Path, exams: list[str], folder: Path) -> dict:
    out = folder / "evalscope.json"
    args = {
        "url": server.base_url,
        "data": str(source),
        "exams": exams,
        "work": str(folder / "evalscope"),
        "out": str(out),
    }
    with (folder / "evalscope.log").open("w") as log:
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-c", RUNNER, json.dumps(args)],
            cwd=folder,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    if done.returncode:
        sys.exit(f"evalscope failed ({done.returncode}):\n{(folder / 'evalscope.log').read_text()[-3000:]}")
    return json.loads(out.read_text())


def run_stage(script: str, overrides: list[str], log: Path) -> None:
    with log.open("w") as sink:
        done = subprocess.run(
            [sys.executable, f"stages/{script}.py", *overrides], cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT
        )
    if done.returncode:
        sys.exit(f"stages/{script}.py failed ({done.returncode}):\n{log.read_text()[-3000:]}")


def run_ours(server: FakeOpenAI, source: Path, folder: Path) -> tuple[dict, dict]:
    common = [
        f"paths.outputs={folder / 'outputs'}",
        f"paths.request_cache={folder / 'cache.sqlite'}",
        f"paths.plan={hipho_plan(folder, source, 'gpt-4o', 'hipho_evalscope')}",
    ]
    endpoint = [f"base_url={server.base_url}", "api_key_env=null", "concurrency=16"]
    run_stage(
        "fetch",
        ["benchmark=hipho", f"benchmark.source.path={source}", f"benchmark.exams.{SYNTHETIC}.full_marks=null", *common],
        folder / "fetch.log",
    )
    run_stage("render", ["suite=hipho_evalscope", "cell.benchmark=hipho", *common], folder / "render.log")
    run_stage(
        "generate",
        ["model=gpt-4o", "cell.suite=hipho_evalscope", *(f"model.{o}" for o in endpoint), *common],
        folder / "generate.log",
    )
    run_stage(
        "judge",
        [
            "judge=gpt-4o",
            "cell.suite=hipho_evalscope",
            "cell.model=gpt-4o",
            "min_coverage=0",
            "judge.check_cpu_seconds=120",  # this protocol does not use their verdicts: no timeouts on a busy machine
            *(f"judge.judges.gpt-4o.{o}" for o in endpoint),
            *common,
        ],
        folder / "judge.log",
    )
    judgments = read_jsonl(
        Layout(folder / "outputs").judgments("hipho", "hipho_evalscope", "gpt-4o", "gpt-4o"), Judgment
    )
    return {j.id: (j.score if j.status == "scored" else None) for j in judgments}, {j.id: j.subset for j in judgments}


# ---------------------------------------------------------------- report


def judge_prompts(bodies: list[dict]) -> set[str]:
    return {
        text
        for text in map(lambda body: prompt_text(body["messages"]), bodies)
        if '"awarded"' in text or '"correct"' in text
    }


def report(theirs: dict, ours: dict, subsets: dict, exams: list[str]) -> bool:
    print(f"{'exam':<20}{'problems':>9}{'equal':>7}{'unscored':>10}{'max diff':>10}{'evalscope':>11}{'ours':>9}")
    agree = True
    for exam in exams:
        ids = sorted(i for i, subset in subsets.items() if subset == exam)
        pairs = [(theirs["scores"].get(i), ours.get(i)) for i in ids]
        differences = [abs(a - b) for a, b in pairs if a is not None and b is not None]
        equal = sum(
            (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= TOLERANCE) for a, b in pairs
        )
        unscored = f"{sum(a is None for a, _ in pairs)}/{sum(b is None for _, b in pairs)}"
        scored = [b for _, b in pairs if b is not None]
        mine = sum(scored) / len(scored) if scored else float("nan")
        reported = theirs["metrics"].get(exam, {}).get("score", float("nan"))
        agree &= equal == len(ids) and len(ids) > 0
        print(
            f"{exam + ('*' if exam == SYNTHETIC else ''):<20}{len(ids):>9}{equal:>7}{unscored:>10}"
            f"{max(differences, default=0.0):>10.2e}"
            f"{reported:>11.4f}{mine:>9.4f}"
        )
    missing = sorted(set(theirs["scores"]) - set(ours))
    if missing:
        print(f"scored by evalscope only: {', '.join(missing[:10])}")
        agree = False
    return agree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exams", help="comma-separated exams; all of ../shared/data/hipho by default")
    parser.add_argument("--venv", type=Path, default=VENV, help="evalscope's own virtual environment")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (outputs, logs)")
    allow_skip(parser)
    args = parser.parse_args()
    if not (RELEASE / "data").is_dir():
        skipped(f"the HiPhO release is not at {RELEASE}", args.allow_skip)
    exams = args.exams.split(",") if args.exams else sorted(p.stem for p in (RELEASE / "data").glob("*.json"))
    started = time.perf_counter()
    try:
        installed = ensure_evalscope(args.venv)
    except (OSError, subprocess.CalledProcessError) as error:
        skipped(f"evalscope 1.14.1 could not be installed into {args.venv} ({error})", args.allow_skip)
    print(
        f"evalscope 1.14.1 in {args.venv}: " + (f"installed in {installed:.0f} s" if installed else "already installed")
    )
    folder = Path(tempfile.mkdtemp(prefix="evalscope-agreement-"))
    source = release(exams, folder)
    items = records(source)
    with FakeOpenAI(responder(items)) as server:
        start = time.perf_counter()
        theirs = run_evalscope(args.venv, server, source, [*exams, SYNTHETIC], folder)
        evalscope_s, evalscope_requests = time.perf_counter() - start, len(server.requests)
        their_prompts = judge_prompts(server.requests)
        start = time.perf_counter()
        ours, subsets = run_ours(server, source, folder)
        ours_s = time.perf_counter() - start
        our_prompts = judge_prompts(server.requests[evalscope_requests:])
    print(
        f"HiPhO, {len(items)} problems of {len(exams)} shared exams and a synthetic one (*); one fake server; "
        "per-problem scores equal within "
        f"{TOLERANCE:g}; 'unscored': evalscope's/ours (a problem left out of the mean)"
    )
    agree = report(theirs, ours, subsets, [*exams, SYNTHETIC])
    verbatim = our_prompts <= their_prompts
    print(
        f"judge prompts: ours {len(our_prompts)} distinct, evalscope {len(their_prompts)} distinct; "
        f"every one of ours is one of evalscope's: {verbatim}"
    )
    print(
        f"time: evalscope {evalscope_s:.0f} s ({evalscope_requests} requests), our stages {ours_s:.0f} s "
        f"({len(server.requests) - evalscope_requests} requests), whole bench {time.perf_counter() - started:.0f} s"
    )
    print("AGREE" if agree and verbatim else "DISAGREE")
    if args.keep:
        print(f"outputs and logs: {folder}")
    else:
        shutil.rmtree(folder)
    print(f"agreement: {'every problem and prompt' if agree and verbatim else 'NOT every problem or prompt (above)'}")
    sys.exit(0 if agree and verbatim else 1)


if __name__ == "__main__":
    main()
