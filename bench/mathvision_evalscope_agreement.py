"""MATH-Vision's `protocol: evalscope` against evalscope 1.14.1's own scoring, response by response.

evalscope 1.14.1 is installed by `evalscope_agreement.ensure_evalscope` into its own virtual
environment (`--venv`, by default .cache/bench/evalscope-venv; never a project dependency). There a
small driver (written to a temporary file) scores every response with evalscope's own code: its
`math_vision` adapter from evalscope's registry turns each release row into its `Sample`, the
response becomes the model's output (`ModelOutput.from_content`, which splits off a think block as
evalscope does), and the adapter's `calculate_metrics` gives the verdict (its `accuracy`, or no
value where evalscope excludes the response). Our side scores the same responses in this process
as the judge stage does: `MATHVISION.rule_checks` run by a `CheckPool`, then `rule_score`.

The responses: the five released runs (<release>/outputs/*.jsonl, 15,200 responses to
data/test.jsonl) and an adversarial set written here (`adversarial`, deterministic): several boxes,
a box and an "ANSWER:" line that disagree, markers revised or echoed, bold, brackets, LaTeX around
letters, Chinese answer phrases, a think block, numbers just inside and outside Math-Verify's
6-digit rounding, percentages, E notation, units, unclosed boxes; and golds that evalscope
excludes or reads oddly (`ODD_GOLDS`). Both tools read the release's
rows with the form feed of `\\frac` repaired (`mathvision.loading._repair`: one gold, id 2830).

Printed per run: responses, verdicts that agree (an excluded response agrees only with an
excluded one), evalscope's accuracy and ours (right / scored, in %), how many each excluded, and
the first disagreements.

    python bench/mathvision_evalscope_agreement.py [--venv PATH] [--release ../shared/data/mathvision]
                                                   [--show 5] [--runs Gemini-Pro,SPHINX-MoE] [--cache PATH]
                                                   [--no-adversarial] [--allow-skip]

Our side scores first; where evalscope cannot be had (no release, an install that fails), the bench
compares nothing, which fails unless `--allow-skip`. The last line is the agreement over every
response.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agreement import agreement, allow_skip, skipped  # bench/ is on the path
from evalscope_agreement import VENV, ensure_evalscope
from omegaconf import OmegaConf

from olympiad_eval.benchmarks import mathvision, plugin
from olympiad_eval.benchmarks.release import FigureStore
from olympiad_eval.scoring.pool import CheckPool

ROOT = Path(__file__).resolve().parents[1]
MATHVISION = plugin("mathvision")
RELEASE = ROOT.parent / "shared" / "data" / "mathvision"
ADVERSARIAL = "adversarial"

# Run inside evalscope's venv: reads {"key", "record", "response"} lines, writes {"key", "value",
# "extracted"} lines; value None where evalscope excludes the response.
DRIVER = r"""
import json, sys
from evalscope import TaskConfig
from evalscope.api.evaluator import TaskState
from evalscope.api.model import ModelOutput
from evalscope.api.registry import get_benchmark

adapter = get_benchmark("math_vision", TaskConfig(model="m", datasets=["math_vision"], eval_type="mock_llm"))
with open(sys.argv[1], encoding="utf-8") as source, open(sys.argv[2], "w", encoding="utf-8") as out:
    for index, line in enumerate(source):
        item = json.loads(line)
        sample = adapter.record_to_sample({**item["record"], "decoded_image": None})
        sample.id = index
        state = TaskState(model="m", sample=sample, output=ModelOutput.from_content("m", item["response"]),
                          completed=True)
        score = adapter.calculate_metrics(state).score
        out.write(json.dumps({"key": item["key"], "value": score.value.get("accuracy"),
                              "extracted": score.extracted_prediction}) + "\n")
"""


def load_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# ---------------------------------------------------------------- the adversarial responses


def adversarial(rows: list[dict]) -> list[tuple[dict, str]]:
    """(release row, response): tricky readings of the first multiple-choice and free-form problems,
    then a free-form problem given golds that Math-Verify cannot parse or compare (evalscope
    excludes its responses), or reads oddly."""
    choice_rows = [row for row in rows if row["options"]][:8]
    numeric_rows = [row for row in rows if not row["options"] and _number(row["answer"]) is not None][:8]
    other_rows = [row for row in rows if not row["options"] and _number(row["answer"]) is None][:8]
    out = []
    for n, row in enumerate(choice_rows):
        gold = row["answer"]
        other = "ABCDE"[("ABCDE".index(gold) + 1 + n % 4) % 5]
        text = row["options"]["ABCDE".index(gold)]
        for response in (
            f"So the answer is \\boxed{{{gold}}}.\nANSWER: {other}",
            f"ANSWER: {other}\nOn reflection the answer is \\boxed{{{gold}}}",
            f"ANSWER: {gold}\nWait, that is wrong.\nANSWER: {other}",
            f"The format is 'ANSWER: [LETTER]'.\nANSWER: {gold}",
            f"\\boxed{{{gold}}} and then \\boxed{{{other}}}",
            f"\\boxed{{{gold}}}",
            f"**ANSWER: {gold}**",
            f"ANSWER: **{gold}**",
            f"Answer: ({gold})",
            f"answer: {gold.lower()}",
            f"ANSWER: $\\boxed{{\\text{{{gold}}}}}$",
            f"ANSWER: \\({gold}\\)",
            f"ANSWER: [{gold}]",
            f"ANSWER: （{gold}）",
            f"ANSWER: 【{gold}】",
            f"ANSWER: {gold}, not {other}",
            f"ANSWER: {gold} and {other}",
            f"ANSWER: {gold} or {other}",
            f"ANSWER: {gold}{other}",
            f"ANSWER: {gold}/{other}",
            f"ANSWER: {gold}.",
            f"ANSWER: The answer is {gold}",
            f"ANSWER: {text}",
            f"The answer is {text}.",
            f"答案：{gold}",
            f"答案: {other}\n答案：{gold}",
            f"最终答案是{gold}",
            f"故选{gold}。",
            f"答案是 ({gold})，不是{other}",
            f"I pick ({gold}) over Euler's {other}",
            f"The answer is {gold}. I also checked option {other} and the Pythagorean theorem.",
            f"<think>ANSWER: {other}</think>\nANSWER: {gold}",
            f"<think>so {gold}</think>",
            "No letter at all here.",
            "ANSWER: F",
            f"ANSWER: {gold}\nΔ",
            f"ANSWER:\n{gold}",
            f"ANSWER: 1\nso {gold}",
            "",
        ):
            out.append((row, response))
    for row in numeric_rows:
        gold = row["answer"]
        value = _number(gold)
        near = [value * (1 + 1e-7), value * (1 + 1e-5), value + 4e-7, value + 6e-7, value - 1e-6, value + 0.5]
        for response in (
            f"\\boxed{{{gold}}}",
            f"\\boxed{{{value + 1:g}}} then \\boxed{{{gold}}}",
            f"\\boxed{{{gold}}} then \\boxed{{{value + 1:g}}}",
            f"\\boxed{{{gold}}}\nANSWER: {value + 1:g}",
            f"ANSWER: {gold}",
            f"答案：{gold}",
            f"最终答案是 \\boxed{{{gold}}}",
            f"答案为{gold}。",
            f"\\boxed{{{gold}\\%}}",
            f"{gold}%",
            f"\\boxed{{{gold} \\text{{ cm}}}}",
            f"\\boxed{{{gold}}} cm",
            f"\\boxed{{x = {gold}}}",
            f"\\boxed{{{gold}, {gold}}}",
            f"${gold}$",
            f"\\boxed{{{value:.3e}}}",
            f"\\boxed{{{value:.3E}}}",
            f"\\boxed{{{gold}",
            f"<think>\\boxed{{{value + 1:g}}}</think>\\boxed{{{gold}}}",
            f"The answer is {gold}.",
            f"\\boxed{{{gold}.0}}",
            f"\\boxed{{\\frac{{{2 * value:g}}}{{2}}}}",
            *(f"\\boxed{{{number!r}}}" for number in near),
            *(f"\\boxed{{{number:.7f}}}" for number in near[:3]),
        ):
            out.append((row, response))
    for row in other_rows:
        gold = row["answer"]
        for response in (
            f"\\boxed{{{gold}}}",
            f"${gold}$",
            f"The answer is {gold}",
            f"\\boxed{{{gold}}} or \\boxed{{0}}",
            f"\\boxed{{{gold.replace(' ', '')}}}",
            "\\boxed{}",
            f"\\fbox{{{gold}}}",
        ):
            out.append((row, response))
    base = other_rows[0] if other_rows else numeric_rows[0]
    for n, gold in enumerate(ODD_GOLDS):
        row = {**base, "id": f"{base['id']}-gold{n}", "answer": gold}
        for response in ("\\boxed{1}", f"\\boxed{{{gold}}}", "no answer"):
            out.append((row, response))
    return out


# Golds evalscope excludes (no parse: `?`, `\\`, `[`, `\\sqrt{`, a `\\x` escape; 1/0 fails
# Math-Verify's comparison) or reads as text, a symbol, a set.
ODD_GOLDS = (
    "\\x0crac{1}{2}",
    "?",
    "\\text{none}",
    "A or B",
    "{}",
    "\\",
    "[",
    "\\sqrt{",
    "x",
    "\\infty",
    "1,2,3",
    "\\frac{1}{0}",
)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


# ---------------------------------------------------------------- both sides


def evalscope_verdicts(venv: Path, items: list[dict], cache: Path | None) -> dict[str, dict]:
    """evalscope's verdict on each item, by key; kept in `cache` (with a digest of the items, so
    that other responses are scored again) for reruns that change only our side."""
    source_text = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
    digest = hashlib.sha256(source_text.encode()).hexdigest()
    if cache is not None and cache.is_file():
        head, *lines = cache.read_text(encoding="utf-8").splitlines()
        if json.loads(head).get("items") == digest:
            print(f"evalscope's verdicts: from {cache} (the same responses; delete it to score them again)")
            return {row["key"]: row for row in map(json.loads, lines)}
    installed = ensure_evalscope(venv)
    if installed is not None:
        print(f"installed evalscope 1.14.1 into {venv} in {installed:.0f} s")
    with tempfile.TemporaryDirectory() as folder:
        driver, source, out = Path(folder, "driver.py"), Path(folder, "in.jsonl"), Path(folder, "out.jsonl")
        driver.write_text(DRIVER, encoding="utf-8")
        source.write_text(source_text, encoding="utf-8")
        subprocess.run(
            [str(venv / "bin" / "python"), str(driver), str(source), str(out)],
            check=True,
            stderr=subprocess.DEVNULL,
            cwd=folder,
        )
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps({"items": digest}) + "\n" + out.read_text(encoding="utf-8"), encoding="utf-8")
        return {row["key"]: row for row in load_jsonl(out)}


def our_verdicts(release: Path, items: list[dict]) -> dict[str, dict]:
    """Each item scored as the judge stage scores it, its problem read by `MATHVISION.load` from its
    row (the rows written as a release of their own: the adversarial golds are in no release)."""
    scoring = OmegaConf.create({"protocol": "evalscope", "rel_tol": 0.0, "check_options": {}, "prompts": {}})
    rows = {item["record"]["id"]: item["record"] for item in items}
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "data").mkdir()
        (Path(folder) / "data" / "test.jsonl").write_text(
            "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows.values()), encoding="utf-8"
        )
        cfg = OmegaConf.create({"split": "test", "require_figures": False})
        loaded = MATHVISION.load(Path(folder), cfg, "mathvision", FigureStore(Path(folder) / "figures"))
    problems = {problem.id: problem for problem in loaded}
    needed = {
        item["key"]: MATHVISION.rule_checks(problems[item["record"]["id"]], item["response"], scoring) for item in items
    }
    unique = list(dict.fromkeys(check for checks in needed.values() for check in checks))
    with CheckPool(workers=2, cpu_seconds=30.0) as pool:
        verdicts = dict(zip(unique, pool.check_many(unique)))
    out = {}
    for item in items:
        score = MATHVISION.rule_score(
            problems[item["record"]["id"]],
            item["response"],
            scoring,
            [verdicts[check] for check in needed[item["key"]]],
        )
        out[item["key"]] = {
            "value": None if score.unscorable else score.score,
            "extracted": score.extracted[0] if score.extracted else "",
            "why": score.unscorable,
        }
    return out


def accuracy(values: list) -> str:
    scored = [value for value in values if value is not None]
    return f"{100 * sum(scored) / len(scored):6.2f}" if scored else "   -  "


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=VENV, help="evalscope 1.14.1's virtual environment")
    parser.add_argument("--release", type=Path, default=RELEASE, help="the MATH-V release (data/, outputs/)")
    parser.add_argument("--runs", default="", help="comma-separated runs of outputs/ (default: all)")
    parser.add_argument("--show", type=int, default=5, help="disagreements to print per run")
    parser.add_argument(
        "--cache",
        default=str(ROOT / ".cache" / "bench" / "mathvision_evalscope_verdicts.jsonl"),
        help="evalscope's verdicts, kept for reruns on the same responses ('' to keep none)",
    )
    parser.add_argument("--no-adversarial", action="store_true", help="only the release's runs")
    allow_skip(parser)
    args = parser.parse_args()

    if not (args.release / "data" / "test.jsonl").is_file():
        skipped(f"no MATH-V release at {args.release} (data/test.jsonl)", args.allow_skip)
    rows = [mathvision.loading._repair(row) for row in load_jsonl(args.release / "data" / "test.jsonl")]
    records = {row["id"]: row for row in rows}
    wanted = [name for name in args.runs.split(",") if name]
    runs = {
        path.stem: [(records[row["id"]], row["response"]) for row in load_jsonl(path)]
        for path in sorted((args.release / "outputs").glob("*.jsonl"))
        if not wanted or path.stem in wanted
    }
    if not args.no_adversarial:
        runs[ADVERSARIAL] = adversarial(rows)
    items = [
        {"key": f"{run}#{n}", "record": record, "response": response}
        for run, responses in runs.items()
        for n, (record, response) in enumerate(responses)
    ]
    if not items:
        skipped(f"no responses to compare ({args.release / 'outputs'} has no run)", args.allow_skip)

    start = time.perf_counter()
    ours = our_verdicts(args.release, items)
    our_seconds = time.perf_counter() - start
    print(f"ours: {len(items)} responses scored, {sum(o['value'] == 1 for o in ours.values())} right")
    start = time.perf_counter()
    try:
        theirs = evalscope_verdicts(args.venv, items, Path(args.cache) if args.cache else None)
    except (OSError, subprocess.CalledProcessError) as error:
        skipped(f"evalscope 1.14.1 could not be had or run ({error})", args.allow_skip)
    their_seconds = time.perf_counter() - start

    print(
        f"{'run':24} {'n':>6} {'agree':>6} {'agree %':>8} {'evalscope %':>11} {'ours %':>7} "
        f"{'excl. evalscope':>15} {'excl. ours':>10}"
    )
    all_agree = True
    for run, responses in runs.items():
        keys = [f"{run}#{n}" for n in range(len(responses))]
        agree = [key for key in keys if theirs[key]["value"] == ours[key]["value"]]
        all_agree &= len(agree) == len(keys)
        print(
            f"{run:24} {len(keys):6d} {len(agree):6d} {100 * len(agree) / len(keys):8.2f} "
            f"{accuracy([theirs[k]['value'] for k in keys]):>11} {accuracy([ours[k]['value'] for k in keys]):>7} "
            f"{sum(theirs[k]['value'] is None for k in keys):15d} {sum(ours[k]['value'] is None for k in keys):10d}"
        )
        for key in [key for key in keys if key not in set(agree)][: args.show]:
            item = next(i for i in items if i["key"] == key)
            print(
                f"    {key} (id {item['record']['id']}, gold {item['record']['answer']!r}): evalscope "
                f"{theirs[key]['value']} reading {theirs[key]['extracted']!r}, ours {ours[key]['value']} reading "
                f"{ours[key]['extracted']!r} {ours[key]['why']}; response {item['response'][-200:]!r}"
            )
    print(f"scoring time: evalscope {their_seconds:.0f} s, ours {our_seconds:.0f} s ({len(items)} responses)")
    agreed = sum(theirs[item["key"]]["value"] == ours[item["key"]]["value"] for item in items)
    print(agreement(agreed, len(items), "responses"))
    sys.exit(0 if all_agree else 1)


if __name__ == "__main__":
    main()
