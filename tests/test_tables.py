"""Golden tests: small judgments in, exact Markdown, LaTeX and CSV out."""

from __future__ import annotations

import json

from omegaconf import OmegaConf

from olympiad_eval.records import Judgment, write_jsonl
from olympiad_eval.tables import aggregate, judgment_path

PLAN = {"suites": {"hipho": "olympiad"}, "models": ["alpha", "beta"], "judges": ["rule"]}
BENCH = OmegaConf.create({"kind": "hipho", "exams": {"X_2025": {"gold": 3.0, "silver": 2.0, "bronze": 1.0}}})


def judged(model: str, pid: str, points: float | None, status: str = "scored", sample: int = 0) -> Judgment:
    return Judgment(id=pid, suite="hipho", model=model, judge="rule", sample=sample, language="en", subset="X_2025",
                    status=status, score=None if points is None else points / 2, points=points, max_points=2.0)


def write(outputs, rows: dict[str, list[Judgment]]) -> None:
    for model, judgments in rows.items():
        write_jsonl(judgment_path(outputs, "hipho", model, "rule"), judgments)


def test_hipho_tables_golden(tmp_path):
    outputs = tmp_path / "outputs"
    (outputs / "usage" / "hipho").mkdir(parents=True)
    (outputs / "usage" / "hipho" / "alpha.json").write_text(json.dumps(
        {"prompt_tokens": 1000, "completion_tokens": 200, "cost_usd": 0.004}))
    write(outputs, {
        "alpha": [judged("alpha", "p1", 2.0), judged("alpha", "p2", 1.5)],
        "beta": [judged("beta", "p1", 1.0), judged("beta", "p2", None, status="judge_error")],
    })
    aggregate("olympiad", BENCH, PLAN, outputs, tmp_path / "tables", tmp_path / "metrics.json")
    tables = tmp_path / "tables"
    assert (tables / "exam_scores.md").read_text() == (
        "| suite      | model   | judge   |   X_2025 |\n"
        "|:-----------|:--------|:--------|---------:|\n"
        "| hipho      | alpha   | rule    |     3.50 |\n"
        "| hipho      | beta    | rule    |     1.00 |\n"
        "| full marks |         |         |     4.00 |\n")
    assert (tables / "exam_scores.tex").read_text() == (
        "\\begin{tabular}{lllr}\n\\toprule\nsuite & model & judge & X\\_2025 \\\\\n\\midrule\n"
        "hipho & alpha & rule & \\textbf{3.50} \\\\\nhipho & beta & rule & \\underline{1.00} \\\\\n"
        "full marks &  &  & 4.00 \\\\\n\\bottomrule\n\\end{tabular}\n")
    assert (tables / "medals.csv").read_text() == (
        "suite,model,judge,X_2025,gold,silver,bronze\nhipho,alpha,rule,gold,1,0,0\nhipho,beta,rule,bronze,0,0,1\n")
    assert (tables / "summary.csv").read_text() == (
        "suite,model,judge,problems,samples,scored,judge errors,failed generations,truncated,score (%),"
        "95% CI low,95% CI high,tokens,cost ($)\n"
        "hipho,alpha,rule,2,1,2,0,0,0,87.5,75.0,100.0,1200,0.004\n"
        "hipho,beta,rule,2,1,1,1,0,0,25.0,0.0,50.0,,\n")
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["hipho"]["beta"]["rule"] == {"score": 25.0, "scored": 1, "problems": 2, "judge_errors": 1,
                                                "failed_generations": 0, "truncated": 0}


def test_samples_give_a_mean_and_a_standard_deviation(tmp_path):
    outputs = tmp_path / "outputs"
    write(outputs, {
        "alpha": [judged("alpha", "p1", 2.0, sample=0), judged("alpha", "p1", 1.0, sample=1)],
        "beta": [judged("beta", "p1", 0.0, sample=0), judged("beta", "p1", 0.0, sample=1)],
    })
    aggregate("olympiad", BENCH, PLAN, outputs, tmp_path / "tables", tmp_path / "metrics.json")
    assert (tmp_path / "tables" / "exam_scores_std.csv").read_text() == (
        "suite,model,judge,X_2025\nhipho,alpha,rule,0.5\nhipho,beta,rule,0.0\n")
    assert "| hipho      | alpha   | rule    |     1.50 |" in (tmp_path / "tables" / "exam_scores.md").read_text()
