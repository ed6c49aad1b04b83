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


def physelite_judgment(pid, language, subject, level, score, process, details):
    return Judgment(id=pid, suite=f"pe_{language}", model="m", judge="ens", sample=0, language=language,
                    subset=subject, subject=subject, level=level, status="scored", score=score, points=score,
                    max_points=1.0, process=process, details=details)


def judge_said(verdict, grades, error_type=None):
    said = {"answer": {"verdict": verdict}, "process": {"steps": [{"step": "s", "grade": g} for g in grades]}}
    return said | ({"error_type": {"error_type": error_type}} if error_type else {})


def test_physelite_tables_golden(tmp_path):
    outputs = tmp_path / "outputs"
    rows = {
        "en": [physelite_judgment("p1", "en", "Mechanics", 2, 1.0, 1.0, (judge_said("correct", [1, 1]),)),
               physelite_judgment("p2", "en", "Optics", 6, 0.0, 0.5, (judge_said("incorrect", [1, 0.5, 0], "numerical"),))],
        "zh": [physelite_judgment("p1", "zh", "Mechanics", 2, 0.0, 0.75, (judge_said("incorrect", [1, 0.5], "physical_law"),)),
               physelite_judgment("p2", "zh", "Optics", 6, 0.0, 0.0, (judge_said("incorrect", [0]),))],
    }
    for language, judgments in rows.items():
        write_jsonl(judgment_path(outputs, f"pe_{language}", "m", "ens"), judgments)
    plan = {"suites": {"pe_en": "pe", "pe_zh": "pe"}, "models": ["m"], "judges": ["ens"]}
    aggregate("pe", OmegaConf.create({"kind": "physelite"}), plan, outputs, tmp_path / "tables", tmp_path / "m.json")
    tables = tmp_path / "tables"
    assert (tables / "accuracy.csv").read_text() == "model,judge,Mechanics,Optics,Ans.,Proc.\nm,ens,50.0,0.0,25.0,56.2\n"
    assert (tables / "accuracy_by_language.csv").read_text() == (
        "model,judge,Ans. en,Ans. zh,Proc. en,Proc. zh\nm,ens,50.0,0.0,75.0,37.5\n")
    assert (tables / "accuracy_by_difficulty.csv").read_text() == "model,judge,Easy,Hard\nm,ens,50.0,0.0\n"
    # first errors at steps 2, 2, 1 (mean 1.67); 1 of 4 complete; 2 of 4 failed steps soft; 2 of 4 last-step-only
    assert (tables / "failure_analyses.csv").read_text() == (
        "model,judge,first error (mean step),complete (%),soft failures (%),last-step-only (%),"
        "error: numerical,error: physical_law,judges agree (%)\nm,ens,1.7,25.0,50.0,50.0,50.0,50.0,100.0\n")


def test_mathvision_tables_golden(tmp_path):
    def row(pid, subject, level, score):
        return Judgment(id=pid, suite="mv", model="m", judge="rule", sample=0, language="en", subset=subject,
                        subject=subject, level=level, status="scored", score=score, points=score, max_points=1.0)

    outputs = tmp_path / "outputs"
    write_jsonl(judgment_path(outputs, "mv", "m", "rule"), [
        row("1", "algebra", 1, 1.0), row("2", "algebra", 2, 0.0), row("3", "counting", 1, 1.0), row("4", "counting", 1, 0.0)])
    plan = {"suites": {"mv": "mathv"}, "models": ["m"], "judges": ["rule"]}
    aggregate("mathv", OmegaConf.create({"kind": "mathvision"}), plan, outputs, tmp_path / "tables", tmp_path / "m.json")
    tables = tmp_path / "tables"
    assert (tables / "accuracy.csv").read_text() == "suite,model,judge,overall,level 1,level 2\nmv,m,rule,50.0,66.67,0.0\n"
    assert (tables / "accuracy_by_subject.csv").read_text() == "suite,model,judge,algebra,counting\nmv,m,rule,50.0,50.0\n"
    assert (tables / "accuracy_by_subject_and_level.csv").read_text() == (
        "suite,model,judge,subject,level 1,level 2\nmv,m,rule,algebra,100.0,0.0\nmv,m,rule,counting,50.0,\n")
    assert (tables / "accuracy.md").read_text() == (
        "| suite   | model   | judge   |   overall |   level 1 |   level 2 |\n"
        "|:--------|:--------|:--------|----------:|----------:|----------:|\n"
        "| mv      | m       | rule    |     50.00 |     66.67 |      0.00 |\n")


def test_the_bootstrap_is_the_same_drawn_in_chunks(monkeypatch):
    """Resamples are drawn in chunks to bound memory; the seeded stream, so the interval, is unchanged."""
    import numpy as np
    import pandas as pd

    from olympiad_eval import tables

    rng = np.random.default_rng(1)
    group = pd.DataFrame({"id": [f"p{i}" for i in range(37)], "points": rng.integers(0, 2, 37).astype(float),
                          "max_points": 1.0})
    whole = tables.bootstrap_interval(group)
    monkeypatch.setattr(tables, "BOOTSTRAP_CHUNK", 37 * 3)  # three resamples per chunk: 334 chunks
    assert tables.bootstrap_interval(group) == whole


def test_judges_prose_is_not_loaded_into_the_tables_frame(tmp_path):
    """Reasons and step descriptions are for the report; the tables read only the grades."""
    from olympiad_eval.tables import load_judgments

    said = {"judge": "j", "answer": {"verdict": "correct", "reasoning": "long prose"},
            "process": {"steps": [{"step": "prose", "grade": 1.0}], "reasoning": "more prose"}}
    judgment = physelite_judgment("p1", "en", "Optics", 3, 1.0, 1.0, (said,))
    write_jsonl(judgment_path(tmp_path, "pe_en", "m", "ens"), [judgment])
    frame = load_judgments(tmp_path, {"suites": {"pe_en": "pe"}, "models": ["m"], "judges": ["ens"]}, "pe")
    assert frame["details"][0] == ({"judge": "j", "answer": {"verdict": "correct"}, "process": {"steps": ({"grade": 1.0},)}},)
    assert "detail" not in frame.columns and frame["score"][0] == 1.0
