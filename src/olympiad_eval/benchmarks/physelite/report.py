"""PhysElite's view in the report: each judge's verdict and graded steps."""

from __future__ import annotations

from olympiad_eval.benchmarks.base import ReportSection, ReportTable
from olympiad_eval.core.records import Problem


def report_sections(problem: Problem, judgment) -> list[ReportSection]:
    """Each judge's answer verdict with its reason and, where asked, the error type; the ensemble's
    majority; and the process steps each judge graded (1, 0.5 or 0). A rules-only judgment shows
    the rules' verdict."""
    entries = [entry for entry in judgment.details if isinstance(entry, dict)]
    verdicts = tuple(
        (
            str(entry.get("judge", "")),
            _field(entry, "answer", "verdict"),
            _field(entry, "answer", "reasoning"),
            _field(entry, "error_type", "error_type"),
            _field(entry, "error_type", "reasoning"),
        )
        for entry in entries
    )
    if not verdicts:
        verdicts = (
            (judgment.judge, judgment.verdict or "", "rules: " + (judgment.detail or "the answer compared"), "", ""),
        )
    process = (judgment.parts or {}).get("process")
    facts = (
        ("verdict", judgment.verdict or "–"),
        ("process score", "not graded" if process is None else f"{process:g} (mean over the judges)"),
    )
    sections = [
        ReportSection(
            "verdicts",
            "Verdicts per judge",
            facts,
            (
                ReportTable(
                    "verdicts",
                    ("judge", "verdict", "reason", "error type", "error reason"),
                    verdicts,
                    math=("reason", "error reason"),
                ),
            ),
        )
    ]
    steps = tuple(
        (str(entry.get("judge", "")), number + 1, step.get("step", ""), step.get("grade"))
        for entry in entries
        for number, step in enumerate(_steps(entry))
    )
    if steps:
        sections.append(
            ReportSection(
                "process",
                "Process steps, as each judge graded them",
                (),
                (ReportTable("steps", ("judge", "step", "text", "grade"), steps, math=("text",)),),
            )
        )
    return sections


def _field(entry: dict, task: str, key: str) -> str:
    reply = entry.get(task)
    return str(reply.get(key, "")) if isinstance(reply, dict) else ("" if reply is None else str(reply))


def _steps(entry: dict) -> list[dict]:
    reply = entry.get("process")
    steps = reply.get("steps") if isinstance(reply, dict) else None
    return [step for step in steps or [] if isinstance(step, dict)]
