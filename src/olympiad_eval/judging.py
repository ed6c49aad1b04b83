"""Judge: grade each generation of a suite x model cell.

Rules always come first (answer extraction and equivalence checks in worker processes). A
`rule` judge stops there. An `llm` judge then sends what the benchmark's protocol asks
(`judge_tasks`) to every judge of its ensemble, through the same client and request cache as
generation, all tasks of the cell concurrently; a reply that does not follow the asked schema is
asked again up to `max_reasks` times. The benchmark's `combine` turns the rules' score and the
judges' replies into the protocol's score. A generation that failed, or a task whose replies
stayed invalid, is recorded as such: never a score.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from omegaconf import OmegaConf
from tqdm import tqdm

from olympiad_eval.benchmarks import Score, module
from olympiad_eval.llm import request_key, send
from olympiad_eval.mathcheck import CheckPool
from olympiad_eval.records import Generation, InputError, Judgment, Problem, read_jsonl, write_jsonl

JUDGES = ("rule", "llm")


@dataclass(frozen=True)
class Outcome:
    total: int
    scored: int
    judge_errors: int
    generation_errors: int

    @property
    def coverage(self) -> float:
        return self.scored / self.total if self.total else 1.0

    def metrics(self) -> dict:
        return {"judgments": self.total, "scored": self.scored, "judge_errors": self.judge_errors,
                "failed_generations": self.generation_errors, "coverage": round(self.coverage, 6)}

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
    rel_tol = float(dict(cfg.get("rel_tol") or {}).get(kind, 0.0))
    rules = _by_rules(kind, problems, answered, rel_tol, cfg)
    grades = rules if cfg.kind == "rule" else _by_llm(kind, problems, answered, rules, cfg, cache_path)
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
                    slots=grade.slots, verdict=grade.verdict, detail=grade.detail, answer_points=grade.answer_points,
                    step_points=grade.step_points, process=grade.process, details=grade.details)


def _by_rules(kind: str, problems: dict, answered: list[Generation], rel_tol: float, cfg) -> dict:
    bench = module(kind)
    grades: dict = {}
    with CheckPool(int(cfg.get("workers", 2)), float(cfg.get("check_timeout", 10))) as pool:
        for generation in tqdm(answered, desc="judge (rules)", unit="resp"):
            grade = bench.score(problems[generation.id], generation.response or "", pool.check_many, rel_tol, cfg)
            grades[(generation.id, generation.sample)] = (
                "rules could not decide: " + "; ".join(grade.undecided) if grade.undecided else grade
            )
    return grades


def _by_llm(kind: str, problems: dict, answered: list[Generation], rules: dict, cfg, cache_path) -> dict:
    """Every task of every response to every judge, then the protocol's combination."""
    bench = module(kind)
    tasks = {
        (generation.id, generation.sample): bench.judge_tasks(
            problems[generation.id], generation.response or "", rules[(generation.id, generation.sample)], cfg)
        for generation in answered
    }
    judges = dict(cfg.judges)
    if not judges:
        raise InputError("an llm judge needs at least one entry under `judges` (name: endpoint)")
    replies = {key: {name: {} for name in judges} for key in tasks}
    for name, endpoint in judges.items():
        for (key, task_key), reply in _ask(name, endpoint, tasks, cfg, cache_path).items():
            replies[key][name][task_key] = reply
    return {key: bench.combine(problems[key[0]], rules[key], replies[key], cfg) for key in tasks}


def _ask(name: str, endpoint, tasks: dict, cfg, cache_path) -> dict:
    """One judge's parsed replies by (response, task), or why they stayed invalid."""
    settings = OmegaConf.to_container(cfg.settings, resolve=True) if cfg.get("settings") else {}
    identity = {"provider": "openai", "base_url": str(endpoint.base_url), "model": str(endpoint.model)}
    pending = {(key, task.key): task for key, cell_tasks in tasks.items() for task in cell_tasks}
    results: dict = {}
    for attempt in range(1 + int(cfg.get("max_reasks", 2))):
        if not pending:
            break
        order = list(pending)
        requests = [(request_key(identity, pending[k].messages, settings, attempt), list(pending[k].messages), settings)
                    for k in order]
        answers = send(endpoint, cache_path, requests, f"judge {name} (try {attempt + 1})")
        for k, reply in zip(order, answers):
            parsed = pending[k].parse(reply.text or "") if reply.error is None else None
            if parsed is not None:
                results[k] = parsed
                del pending[k]
            else:
                results[k] = (f"judge {name}: invalid reply to '{k[1]}' after {attempt + 1} tries: "
                              f"{reply.error or (reply.text or '')[:200]!r}")
    return results
