"""Judge: grade each generation of a suite x model cell.

Judges: `rule` (answer-level rules only, offline) and `llm` (an LLM judge through the same client
and request cache as generation, asked for a JSON verdict). A generation that failed, or a judge
reply that stays invalid after the allowed re-asks, is recorded as such: never a score.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path

from omegaconf import OmegaConf
from tqdm import tqdm

from olympiad_eval.benchmarks import Score, module
from olympiad_eval.llm import OpenAIEndpoint, RequestCache, complete_all, request_key
from olympiad_eval.mathcheck import CheckPool
from olympiad_eval.records import InputError, Generation, Judgment, Problem, read_jsonl, write_jsonl
from olympiad_eval.render import fill

JUDGES = ("rule", "llm")
VERDICTS = {"correct": 1.0, "partially_correct": 0.0, "incorrect": 0.0}  # answer accuracy is strict


@dataclass(frozen=True)
class Outcome:
    total: int
    scored: int
    judge_errors: int
    generation_errors: int

    @property
    def coverage(self) -> float:
        return self.scored / self.total if self.total else 1.0

    def summary(self) -> str:
        return (f"{self.total} judgments: {self.scored} scored, {self.judge_errors} judge errors, "
                f"{self.generation_errors} failed generations (coverage {self.coverage:.1%})")


def judge(suite_dir: str | Path, generations_path: str | Path, judge_name: str, cfg, out_path: str | Path,
          cache_path: str | Path) -> Outcome:
    if cfg.kind not in JUDGES:
        raise InputError(f"judge '{judge_name}': unknown kind '{cfg.kind}'; known: {', '.join(JUDGES)}")
    suite_dir = Path(suite_dir)
    kind = json.loads((suite_dir / "suite.json").read_text(encoding="utf-8"))["kind"]
    problems = {p.id: p for p in read_jsonl(suite_dir / "problems.jsonl", Problem)}
    generations = read_jsonl(generations_path, Generation)
    unknown = sorted({g.id for g in generations} - set(problems))
    if unknown:
        raise InputError(f"{generations_path}: generations for ids not in the suite: {', '.join(unknown[:5])}")
    answered = [g for g in generations if g.error is None]
    if cfg.kind == "rule":
        rel_tol = float(dict(cfg.get("rel_tol") or {}).get(kind, 0.0))
        grades = _by_rules(kind, problems, answered, rel_tol, cfg)
    else:
        grades = _by_llm(kind, problems, answered, cfg, cache_path)
    judgments = [_judgment(problems[g.id], g, judge_name, grades.get((g.id, g.sample))) for g in generations]
    write_jsonl(out_path, judgments)
    return Outcome(
        total=len(judgments),
        scored=sum(j.status == "scored" for j in judgments),
        judge_errors=sum(j.status == "judge_error" for j in judgments),
        generation_errors=sum(j.status == "generation_error" for j in judgments),
    )


def _judgment(problem: Problem, generation: Generation, judge_name: str, grade: Score | str | None) -> Judgment:
    common = dict(
        id=generation.id, suite=generation.suite, model=generation.model, judge=judge_name,
        sample=generation.sample, language=problem.language, subset=problem.subset, subject=problem.subject,
        level=problem.level, max_points=problem.points, truncated=generation.finish_reason == "length",
    )
    if generation.error is not None:
        return Judgment(**common, status="generation_error", score=None, points=None, detail=generation.error)
    if isinstance(grade, str) or grade is None:
        return Judgment(**common, status="judge_error", score=None, points=None, detail=grade or "not judged")
    return Judgment(**common, status="scored", score=grade.score, points=grade.points, extracted=grade.extracted,
                    slots=grade.slots, verdict=grade.verdict, detail=grade.detail)


def _by_rules(kind: str, problems: dict, answered: list[Generation], rel_tol: float, cfg) -> dict:
    bench = module(kind)
    grades: dict = {}
    with CheckPool(int(cfg.get("workers", 2)), float(cfg.get("check_timeout", 10))) as pool:
        for generation in tqdm(answered, desc="judge (rules)", unit="resp"):
            grade = bench.score(problems[generation.id], generation.response or "", pool.check_many, rel_tol)
            grades[(generation.id, generation.sample)] = (
                "rules could not decide: " + "; ".join(grade.undecided) if grade.undecided else grade
            )
    return grades


_JSON_OBJECT = re.compile(r"\{.*\}", re.S)


def parse_verdict(text: str | None) -> str | None:
    """The verdict of a judge reply `{"verdict": ..., "reasoning": ...}`, or None if invalid."""
    match = _JSON_OBJECT.search(text or "")
    if not match:
        return None
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    verdict = data.get("verdict") if isinstance(data, dict) else None
    return verdict if verdict in VERDICTS else None


def _by_llm(kind: str, problems: dict, answered: list[Generation], cfg, cache_path) -> dict:
    bench = module(kind)
    settings = OmegaConf.to_container(cfg.settings, resolve=True) if cfg.get("settings") else {}
    identity = {"provider": "openai", "base_url": str(cfg.endpoint.base_url), "model": str(cfg.endpoint.model)}
    pending = {(g.id, g.sample): _judge_messages(problems[g.id], g, bench, cfg) for g in answered}
    grades: dict = {}
    for attempt in range(1 + int(cfg.get("max_reasks", 2))):
        if not pending:
            break
        keys = list(pending)
        requests = [(request_key(identity, pending[k], settings, attempt), pending[k], settings) for k in keys]
        cache = RequestCache(cache_path)
        try:
            with tqdm(total=len(requests), desc=f"judge (llm, try {attempt + 1})", unit="req") as progress:
                replies = asyncio.run(complete_all(OpenAIEndpoint(cfg.endpoint), cache, requests, progress))
        finally:
            cache.close()
        for key, reply in zip(keys, replies):
            verdict = parse_verdict(reply.text) if reply.error is None else None
            if verdict is not None:
                score = VERDICTS[verdict]
                problem = problems[key[0]]
                grades[key] = Score(score=score, points=round(score * problem.points, 6), verdict=verdict,
                                    detail=_short_reasoning(reply.text))
                del pending[key]
            else:
                grades[key] = f"invalid judge reply after {attempt + 1} tries: {reply.error or (reply.text or '')[:200]!r}"
    return grades


def _judge_messages(problem: Problem, generation: Generation, bench, cfg) -> list[dict]:
    fields = {
        "question": problem.question,
        "reference": bench.judge_reference(problem),
        "solution": problem.solution,
        "response": generation.response or "",
    }
    return [{"role": "user", "content": fill(str(cfg.prompt.text), fields)}]


def _short_reasoning(text: str | None) -> str:
    match = _JSON_OBJECT.search(text or "")
    try:
        return str(json.loads(match.group(0)).get("reasoning", ""))[:500] if match else ""
    except json.JSONDecodeError:
        return ""
