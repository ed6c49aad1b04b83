"""A benchmark from outside the package, as a user writes one: plain questions with numeric answers
(`<release>/questions.jsonl`), scored by rules. Configs name it `kind: toy_plugin` (on the path)."""

import json
from dataclasses import dataclass, field

from olympiad_eval.benchmarks.base import Benchmark, Score
from olympiad_eval.benchmarks.suites import Scoring, Suite
from olympiad_eval.core.records import AnswerSlot, Problem
from olympiad_eval.scoring.answers import boxed
from olympiad_eval.scoring.checks import Equivalence


@dataclass
class ToySuite(Suite):
    scoring: Scoring = field(default_factory=lambda: Scoring(rel_tol=0.01))


class Toy(Benchmark):
    name = "toy"
    Suite = ToySuite
    protocol_versions = {"official": 1}

    def load(self, root, cfg, benchmark, store):
        rows = [json.loads(line) for line in (root / "questions.jsonl").read_text().splitlines()]
        return [Problem(id=row["id"], benchmark=benchmark, language="en", question=row["question"],
                        answers=(AnswerSlot(row["answer"]),)) for row in rows]  # fmt: skip

    def template_fields(self, problem, suite):
        return "default", {"question": problem.question}

    def figures(self, problem, suite):
        return []

    def reference(self, problem, suite):
        return f"The answer is \\boxed{{{problem.answers[0].value}}}."

    def rule_checks(self, problem, response, scoring):
        given = boxed(response)
        return [Equivalence(problem.answers[0].value, given[-1], scoring.rel_tol)] if given else []

    def rule_score(self, problem, response, scoring, verdicts):
        right = float(bool(verdicts) and verdicts[0].correct is True)
        return Score(score=right, points=right, extracted=tuple(boxed(response)[-1:]))

    def tables(self, frame, cfg):
        return {"accuracy": frame.groupby(["suite", "model", "judge"], as_index=False)["score"].mean()}


BENCHMARK = Toy()
