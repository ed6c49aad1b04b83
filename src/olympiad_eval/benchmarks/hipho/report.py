"""HiPhO's view in the report: the marking scheme with each criterion's award, and the medals chart."""

from __future__ import annotations

import re

from olympiad_eval.benchmarks.base import ReportChart, ReportSection, ReportTable
from olympiad_eval.benchmarks.hipho.tables import MEDALS
from olympiad_eval.core.records import (
    Problem,
)


def report_sections(problem: Problem, judgment) -> list[ReportSection]:
    """The marking scheme as each judge applied it: every criterion with its text, its points, the
    award and the judge's reason; each scheme's total and the one that won; the answer slots the
    judge compared; and the answer level against the step level (the protocol takes the larger).
    A rules-only judgment awards no criterion: its section shows every criterion, marked not judged
    (the page may have no LLM judge's section to show them)."""
    entries = [entry for entry in judgment.details if isinstance(entry, dict)]
    if not entries:
        criteria = tuple(
            (f"{s + 1}.{c + 1}", criterion.text, criterion.points, NOT_JUDGED)
            for s, scheme in enumerate(problem.marking)
            for c, criterion in enumerate(scheme)
        )
        return [
            ReportSection(
                "criteria",
                "Marking scheme: not judged (rules only)",
                (
                    ("answer level", _points(judgment.points, problem.points) + " (the rules' answer slots)"),
                    ("step level", "not judged: only an LLM judge awards the marking criteria"),
                    (
                        "the marking scheme",
                        f"{len(criteria)} criteria in {len(problem.marking)} scheme{'s' * (len(problem.marking) != 1)}",
                    ),
                ),
                (ReportTable("criteria", ("criterion", "text", "points", "awarded"), criteria, math=("text",)),)
                if criteria
                else (),
            )
        ]
    sections = []
    for entry in entries:
        judge = str(entry.get("judge", judgment.judge))
        rows, totals = [], []
        for s, scheme in enumerate(problem.marking):
            awarded = []
            for c, criterion in enumerate(scheme):
                reply = entry.get(f"criterion {s}.{c}")
                award = reply.get("awarded") if isinstance(reply, dict) else None
                award = award if isinstance(award, (int, float)) and not isinstance(award, bool) else None
                awarded.append(None if award is None else min(float(award), criterion.points))
                rows.append(
                    (
                        f"{s + 1}.{c + 1}",
                        criterion.text,
                        criterion.points,
                        award,
                        reply.get("reasoning", "") if isinstance(reply, dict) else "no reply",
                    )
                )
            judged = [a for a in awarded if a is not None]
            totals.append((min(sum(judged), problem.points) if judged else None, sum(c.points for c in scheme)))
        facts = [
            (f"scheme {s + 1}", f"{'–' if got is None else f'{got:g}'} of {most:g} points")
            for s, (got, most) in enumerate(totals)
        ]
        scored = [(got, s) for s, (got, _) in enumerate(totals) if got is not None]
        if scored:
            best, winner = max(scored)
            facts.append(("winning scheme", f"scheme {winner + 1}: this judge's step level, {best:g} points"))
        parts = judgment.parts or {}
        answer = parts.get("answer_points")
        facts += [
            ("answer level", _points(answer, problem.points) + " (mean over the judges)"),
            ("step level", _points(parts.get("step_points"), problem.points) + " (mean over the judges)"),
            ("the protocol's score", "the larger of the two levels, of each judge, averaged"),
        ]
        tables = (
            [
                ReportTable(
                    "criteria",
                    ("criterion", "text", "points", "awarded", "reason"),
                    tuple(rows),
                    math=("text", "reason"),
                )
            ]
            if rows
            else []
        )
        slots = [
            (_slot_number(key), reply.get("equivalent"), reply.get("reasoning", ""))
            for key, reply in sorted(entry.items())
            if key.startswith("slot ") and isinstance(reply, dict)
        ]
        if slots:
            tables.append(
                ReportTable("slot-judgments", ("answer slot", "equivalent", "reason"), tuple(slots), math=("reason",))
            )
        other = [
            (key, str(reply))
            for key, reply in sorted(entry.items())
            if key != "judge" and not key.startswith(("criterion ", "slot "))
        ]
        if other:
            tables.append(ReportTable("replies", ("task", "reply"), tuple(other), math=("reply",)))
        sections.append(ReportSection("criteria", f"Marking scheme: judge {judge}", tuple(facts), tuple(tables)))
    return sections


NOT_JUDGED = "not judged (rules only)"


def _slot_number(key: str) -> str:
    """`slot 0` is the first answer, numbered from 1 as the page numbers them."""
    index = key.removeprefix("slot ")
    return str(int(index) + 1) if index.isdigit() else index


def _points(value, most: float) -> str:
    return "not judged" if value is None else f"{value:g} of {most:g} points"


def report_charts(tables: dict) -> list[ReportChart]:
    """Medals per cell (stacked gold, silver, bronze), from the `medals` table."""
    medals = tables.get("medals")
    if medals is None or medals.empty:
        return []
    bars = tuple(
        (f"{row['model']} / {row['judge']} / {row['suite']}", name, float(row[name]))
        for row in medals.to_dict("records")
        for name in MEDALS
        if str(row.get("suite", ""))
    )
    return [ReportChart("medals", "medals", bars, stacked=True)] if bars else []


# A judge task's key, as HiPhO's protocols make them: `criterion <scheme>.<criterion>` and `slot
# <answer>`, numbered from 0, with what the protocol adds (`attempt 2`, `split`).
_TASK = re.compile(r"(criterion (\d+)\.(\d+)|slot (\d+))(.*)", re.S)


def report_task_label(key: str) -> str:
    """A judge task as the marking table and the answer-slot table number it, from 1: `criterion
    0.1` is criterion 1.2, `slot 0 split` answer slot 1 split."""
    found = _TASK.fullmatch(key)
    if found is None:
        return key
    _, scheme, criterion, slot, rest = found.groups()
    named = f"criterion {int(scheme) + 1}.{int(criterion) + 1}" if slot is None else f"answer slot {int(slot) + 1}"
    return named + rest
