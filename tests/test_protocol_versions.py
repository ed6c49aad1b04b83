"""Every verdict belongs to a protocol version: changing a verdict without bumping the version fails.

`tests/golden/protocol_verdicts.json` holds, per scenario (a sample suite judged by one judge
config), the protocol string that made it and every judgment's verdict on a fixed set of
responses: the `reference` answers, the `demo` replay, and the harder responses of
`tests/golden/responses/<suite>.jsonl`. LLM judges are a local fake server whose replies are a
fixed function of the request, so a changed prompt changes replies as a real judge's would.

- Same protocol string, other verdicts: a change altered verdicts without a version bump. Bump
  the benchmark's `protocol_versions` (or the judge prompt's `version`), then regenerate.
- Other protocol string: regenerate with `python -m tests.test_protocol_versions`, and review the
  verdicts that changed in `git diff`.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys

import pytest
import yaml

from olympiad_eval.benchmarks import plugin
from olympiad_eval.cli.fake_server import JUDGE_MARKER, FakeOpenAI
from olympiad_eval.core.records import Generation, Judgment, Prompt, read_jsonl, write_jsonl
from olympiad_eval.stages.judge import judge
from tests.support import ROOT, compose_stage, render_sample, rendered, suite_scoring

GOLDEN = ROOT / "tests" / "golden" / "protocol_verdicts.json"
RESPONSES = ROOT / "tests" / "golden" / "responses"

SCENARIO_FILES = ROOT / "tests" / "golden" / "scenarios"


def load_scenarios() -> dict[str, tuple]:
    """Every benchmark's scenarios (tests/golden/scenarios/<kind>.yaml), by name: (suite, benchmark,
    judge config, overrides of the suite, the suite whose responses are judged)."""
    scenarios = {}
    for path in sorted(SCENARIO_FILES.glob("*.yaml")):
        for name, s in yaml.safe_load(path.read_text(encoding="utf-8")).items():
            scenarios[name] = (s["suite"], s["benchmark"], s["judge"], tuple(s.get("overrides", ())), s["responses"])
    return scenarios


SCENARIOS = load_scenarios()

PINNED = ("status", "score", "points", "verdict", "answer_points", "step_points", "process")  # the last three: parts


def fixed_judge(body: dict) -> str:
    """A judge whose reply is a fixed function of what it is asked, in the schema it asks for."""
    text = json.dumps(body["messages"], ensure_ascii=False)
    pick = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    if "[Correct] or [Incorrect]" in text:  # VLMEvalKit's HiPhO answer judge (protocol vlmevalkit)
        return ("[Correct]", "[Incorrect]", "Correct", "[Correct].")[pick % 4]
    if "You are an expert physics competition grader." in text:  # VLMEvalKit's HiPhO criterion judge
        return ("\\boxed{0.0}", "\\boxed{0.5}", "\\boxed{1}", "Award: 0.25")[pick % 4]
    if JUDGE_MARKER not in text:
        return "<answer>[\\boxed{0}]</answer>"
    if '\\"awarded\\"' in text:
        worth = re.search(r"(?:worth at most|at most|up to) ([\d.]+) (?:points|pts?)", text)
        points = float(worth.group(1)) if worth else 0.0
        return json.dumps({"awarded": points * (pick % 3) / 2, "reasoning": "fixed"})
    if '\\"equivalent\\"' in text:
        return json.dumps({"equivalent": pick % 2 == 0, "reasoning": "fixed"})
    if '\\"steps\\"' in text:
        grades = [(pick >> shift) % 3 / 2 for shift in (0, 2, 4)]
        return json.dumps({"steps": [{"step": f"step {n}", "grade": g} for n, g in enumerate(grades, 1)]})
    if '\\"error_type\\"' in text:
        kinds = ("none", "physical_law", "algebraic_symbolic", "numerical")
        return json.dumps({"error_type": kinds[pick % len(kinds)], "reasoning": "fixed"})
    return json.dumps({"verdict": ("correct", "partially_correct", "incorrect")[pick % 3], "reasoning": "fixed"})


def responses(prompts: list[Prompt], suite: str, written_for: str) -> list[Generation]:
    """Sample 0 the reference answer, 1 the demo's, then the harder responses written for the suite
    `written_for` (the suite itself, or the one whose prompts a scoring variant shares)."""
    demo = {row["id"]: row["response"] for row in _rows(ROOT / "data" / "replay" / "demo" / f"{written_for}.jsonl")}
    extra: dict[str, list[str]] = {}
    for row in _rows(RESPONSES / f"{written_for}.jsonl"):
        extra.setdefault(row["id"], []).append(row["response"])
    generations = []
    for prompt in prompts:
        texts = [prompt.reference, demo.get(prompt.id, ""), *extra.get(prompt.id, [])]
        generations += [
            Generation(
                id=prompt.id, suite=suite, model="golden", sample=sample, response=text, request_hash=f"golden-{sample}"
            )
            for sample, text in enumerate(texts)
        ]
    return generations


def _rows(path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def verdicts(scenario: str, render_suite, tmp_path) -> dict:
    suite, benchmark, judge_name, overrides, written_for = SCENARIOS[scenario]
    outputs = render_suite(suite, benchmark, *overrides)
    suite_dir = rendered(outputs, suite)
    generations = tmp_path / "generations.jsonl"
    write_jsonl(generations, responses(read_jsonl(suite_dir / "prompts.jsonl", Prompt), suite, written_for))
    cfg = compose_stage("judge", [f"judge={judge_name}", "cell.suite=x", "cell.model=y"]).judge
    with FakeOpenAI(fixed_judge) as server:
        if cfg.kind == "llm":
            cfg.judges = {
                name: {"base_url": server.base_url, "model": name, "api_key_env": None, "max_retries": 0}
                for name in cfg.judges
            }
        out = tmp_path / "judgments.jsonl"
        judge(suite_dir, generations, judge_name, cfg, out, tmp_path / "cache.sqlite")
    judgments = read_jsonl(out, Judgment)
    return {
        "protocol": judgments[0].protocol,
        "verdicts": {
            f"{j.id}#{j.sample}": {
                name: _plain(getattr(j, name) if hasattr(j, name) else j.parts.get(name)) for name in PINNED
            }
            for j in judgments
        },
    }


def _plain(value):
    return round(value, 9) if isinstance(value, float) else value


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_verdicts_change_only_with_the_protocol_version(scenario, render_suite, tmp_path):
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert scenario in golden, f"no golden verdicts for '{scenario}': run `python -m tests.test_protocol_versions`"
    now, pinned = verdicts(scenario, render_suite, tmp_path), golden[scenario]
    assert now["protocol"] == pinned["protocol"], (
        f"'{scenario}' is now made by '{now['protocol']}' (golden: '{pinned['protocol']}'): regenerate the golden "
        "verdicts with `python -m tests.test_protocol_versions` and review what changed"
    )
    changed = sorted(
        key
        for key in now["verdicts"].keys() | pinned["verdicts"].keys()
        if now["verdicts"].get(key) != pinned["verdicts"].get(key)
    )
    assert not changed, (
        f"'{scenario}': {len(changed)} verdicts changed under the same protocol version '{now['protocol']}' "
        f"(first: {changed[0]}: {pinned['verdicts'].get(changed[0])} -> {now['verdicts'].get(changed[0])}); "
        "bump the benchmark's protocol_versions or the judge prompt's version, then regenerate"
    )


def test_a_judgment_records_what_made_it(render_suite, tmp_path):
    made = verdicts("hipho olympiad_eval", render_suite, tmp_path)["protocol"]
    assert re.fullmatch(
        r"hipho olympiad_eval v\d+ \(prompts .*hipho_answer_judge v\d+.*hipho_criterion_judge v\d+.*\)", made
    )
    assert verdicts("mathvision official", render_suite, tmp_path / "mv")["protocol"].endswith("(rules only)")


@pytest.mark.parametrize("suite", sorted(path.stem for path in (ROOT / "conf" / "suite").glob("*.yaml")))
def test_every_suite_names_a_versioned_protocol_for_every_judge(suite):
    from olympiad_eval.benchmarks.suites import protocol

    scoring = suite_scoring(suite)
    kind = compose_stage("render", [f"suite={suite}", "cell.benchmark=x"]).suite.kind
    assert re.fullmatch(rf"{kind} \w+ v\d+ \(rules only\)", protocol(plugin(kind), scoring, "rule"))
    assert re.fullmatch(
        rf"{kind} \w+ v\d+ \((rules only|prompts ({kind}_\w+ v\d+(, )?)+)\)", protocol(plugin(kind), scoring, "llm")
    )


def test_a_judge_prompt_without_a_version_is_refused():
    from olympiad_eval.benchmarks.suites import protocol
    from olympiad_eval.core.records import InputError

    scoring = suite_scoring("sample_hipho", "~suite.scoring.prompts.answer.version")
    with pytest.raises(InputError, match="prompts answer have no `version`"):
        protocol(plugin("hipho"), scoring, "llm")


def regenerate() -> None:
    """Write the golden verdicts of every scenario."""
    import functools
    import os
    import tempfile
    from pathlib import Path

    os.chdir(ROOT)  # configs name bundled data relative to the repository
    golden = {}
    for scenario in SCENARIOS:
        with tempfile.TemporaryDirectory() as tmp:
            render = functools.partial(render_sample, Path(tmp) / "outputs")
            golden[scenario] = verdicts(scenario, render, Path(tmp))
        print(f"{scenario}: {golden[scenario]['protocol']}, {len(golden[scenario]['verdicts'])} verdicts")
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(regenerate())
