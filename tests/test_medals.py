"""HiPhO medals: the paper's 30 models' exam scores through our medal logic and our config's
cutoffs reproduce every gold/silver/bronze count the paper prints (Table 3)."""

from __future__ import annotations

import csv
from fractions import Fraction

import pytest

from olympiad_eval.benchmarks.hipho.tables import MEDALS, medal
from tests.support import compose_stage, shared_data


@pytest.mark.parametrize(
    "score,expected",
    [
        (19.7, "gold"),
        (19.69, "silver"),
        (12.1, "silver"),
        (7.2, "bronze"),
        (7.19, ""),
        (0.0, ""),
        (Fraction(197, 10), "gold"),
        (19.6999996, "silver"),  # a millionth below: not gold (once rounded up)
        (float("nan"), ""),
        (None, ""),
    ],
)
def test_a_score_at_the_cutoff_earns_the_medal(score, expected):
    assert medal(score, {"gold": 19.7, "silver": 12.1, "bronze": 7.2}) == expected


def test_an_exam_without_cutoffs_gives_no_medal():
    assert medal(300.0, {"full_marks": 320.0}) == ""


def test_the_papers_medal_counts_are_reproduced():
    exams = compose_stage("fetch", ["benchmark=hipho"]).benchmark.exams
    rows = list(csv.DictReader(open(shared_data("hipho_results", "hipho_table3_exam_scores.csv"), encoding="utf-8")))
    assert len(rows) == 30
    for row in rows:
        won = [medal(float(row[exam]), exams[exam]) for exam in row if exam in exams]
        assert len(won) == 13
        counts = {name: won.count(name) for name in MEDALS}
        assert counts == {name: int(row[name]) for name in MEDALS}, row["model"]
