"""Compare two runs of one suite, and measure how far judges agree.

    olympiad-eval compare runs SUITE A B          two cells: sample_hipho reference/rule demo/rule
    olympiad-eval compare judges SUITE CELL...    one ensemble cell, or cells of one model
(or `python -m olympiad_eval.cli.compare ...`)

A cell is MODEL/JUDGE, with the samples to take after a colon where a model was sampled more than
once: `demo/rule:0`, `demo/rule:0-3`, `demo/rule:0,2`. Two cells are two models, two judges, or two
sample sets of one model (`demo/rule:0-3 demo/rule:4-7`).

`runs` pairs the cells' problems: which flipped (right in A, wrong in B, or back), the difference
B - A of the score and of the share right with a paired cluster bootstrap interval, a paired test
of each (a sign-flip permutation test of the points, McNemar's test of right/wrong; where the
benchmark's clusters hold several problems, HiPhO's exam problems, a sign-flip test of the
clusters' differences for both), and the smallest difference the suite can detect (the minimum
detectable effect at 80% power, from the clustered variance of the paired differences). `judges` gives
Cohen's kappa between two judges and Fleiss' kappa among three or more, on what they judged of the
same responses. Each writes its tables (Markdown, CSV, LaTeX) into its own folder under
outputs/comparisons/<suite>/ (`Layout.comparison`), prints them, and rewrites the page that lists
every comparison (`Layout.comparison_index`, which the report links).

The statistics use numpy and the standard library only (scipy is no dependency). Every test is
two-sided, and every random draw comes from a generator seeded by the caller (`--seed`), so that a
comparison rerun on the same judgments gives the same numbers.
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

import numpy as np
import pandas as pd

from olympiad_eval.benchmarks import plugin
from olympiad_eval.core.layout import OUTPUTS, Layout
from olympiad_eval.core.outcomes import (
    RIGHT_FROM,
    Cell,
    Judged,
    Outcome,
    flips_table,
    outcomes,
    parse_cell,
    percent,
    samples_text,
)
from olympiad_eval.core.plan import family_of_suite, read_plan
from olympiad_eval.core.records import (
    InputError,
    Judgment,
    atomic_dir,
    natural_key,
    read_jsonl,
    read_suite_info,
    write_json,
)
from olympiad_eval.core.stats import (
    ALPHA,
    FEW_CLUSTERS,
    MCNEMAR_EXACT_BELOW,
    POWER,
    SIGN_FLIP_EXACT_UP_TO,
    TIE,
    category_counts,
    cohen_kappa,
    fleiss_kappa,
    mcnemar,
    minimum_detectable_effect,
    normal_quantile,
    paired_bootstrap,
    sign_flip_test,
)
from olympiad_eval.core.tables import check_one_provenance, made_by_latex, made_by_markdown, to_latex, to_markdown
from olympiad_eval.report import write_comparison_index
from olympiad_eval.stages.runner import fail

RESAMPLES = 10_000
SEED = 0

# ---------------------------------------------------------------- statistics


# ---------------------------------------------------------------- cells


def read_cell(layout: Layout, family: str, suite: str, cell: Cell) -> Judged:
    path = layout.judgments(family, suite, cell.model, cell.judge)
    if not path.is_file():
        raise InputError(
            f"{path}: no judgments of cell {cell.label} on suite {suite}; {cells_on_disk(layout, family, suite, cell)}"
        )
    judgments = read_jsonl(path, Judgment)
    if not judgments:
        raise InputError(f"{path}: cell {cell.label} holds no judgments; judge it again (dvc repro)")
    present = sorted({judgment.sample for judgment in judgments})
    missing = sorted(set(cell.samples) - set(present))
    if missing:
        raise InputError(
            f"{path}: cell {cell.model}/{cell.judge} has samples {samples_text(present)}, not {samples_text(missing)}"
        )
    samples = cell.samples or tuple(present)
    chosen = tuple(judgment for judgment in judgments if judgment.sample in samples)
    return Judged(cell, path, chosen, samples, one_provenance(path, chosen))


def cells_on_disk(layout: Layout, family: str, suite: str, asked: Cell) -> str:
    """What a user can compare instead of a cell that is not there: the suite's cells, the closest first."""
    folder = layout.cell(family, suite)  # cells/<family>/<suite>/<model>/judges/<judge>/judgments.jsonl
    pattern = f"*/judges/*/{layout.judgments(family, suite, 'm', 'j').name}"
    found = sorted(f"{path.parents[2].name}/{path.parent.name}" for path in folder.glob(pattern))
    if not found:
        return f"suite {suite} has no judgments in {folder}: run its stages first (dvc repro)"
    closest = difflib.get_close_matches(f"{asked.model}/{asked.judge}", found, n=1, cutoff=0.5)
    return f"its cells are {', '.join(found)}" + (f" (closest: {closest[0]})" if closest else "")


def one_provenance(path: Path, judgments: Sequence[Judgment]) -> tuple[str, str, str]:
    """What made a cell's judgments: one protocol, judge config and package set (the tables refuse
    a file that mixes them too)."""
    made = {(j.protocol, j.judge_config, j.packages) for j in judgments}
    check_one_provenance(path, made)
    return made.pop()


def made_by_line(name: str, judged: Judged) -> str:
    protocol, config, packages = judged.made_by
    made = f"{protocol}; judge config {config}; {packages}" if protocol else "not recorded"
    return f"{name} {judged.cell.label}: {made}"


# ---------------------------------------------------------------- two runs, problem by problem


def paired_problems(a: Judged, b: Judged, first: dict[str, Outcome], second: dict[str, Outcome]) -> list[str]:
    """The problems of both cells in natural order; cells of different problems (a cell from an
    older release, a partial run) or problems worth different points are refused, naming them."""
    only_a, only_b = (
        sorted(set(first) - set(second), key=natural_key),
        sorted(set(second) - set(first), key=natural_key),
    )
    if only_a or only_b:
        sides = [
            f"only in {cell.label} ({path}): {few(ids)}"
            for cell, path, ids in ((a.cell, a.path, only_a), (b.cell, b.path, only_b))
            if ids
        ]
        raise InputError(
            f"cells {a.cell.label} and {b.cell.label} judged different problems: {'; '.join(sides)}. "
            "Compare cells of the same problems (rerun the older cell's stages)"
        )
    for problem in sorted(first, key=natural_key):
        if not math.isclose(first[problem].max_points, second[problem].max_points):
            raise InputError(
                f"{b.path}: record {problem}: field 'max_points': {second[problem].max_points:g}, but "
                f"{first[problem].max_points:g} in {a.path}: the cells judged different versions of it"
            )
    return sorted(first, key=natural_key)


def few(ids: Sequence[str], shown: int = 10) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def check_comparable(a: Judged, b: Judged) -> None:
    """Two cells of one judge must be judged alike: the same protocol version, judge config and
    packages, else the difference could be the protocol's, not the models'. Two judges differ by
    design (comparing them is the point); their protocols are printed with the tables."""
    if a.cell == b.cell or (a.cell.model, a.cell.judge, a.samples) == (b.cell.model, b.cell.judge, b.samples):
        raise InputError(
            f"cells {a.cell.label} and {b.cell.label} are the same run: compare two models, two judges "
            "or two sample sets of one model (demo/rule:0 demo/rule:1)"
        )
    if a.cell.judge == b.cell.judge and a.made_by != b.made_by:
        raise InputError(
            f"judge '{a.cell.judge}' judged {a.cell.label} ({a.path}) and {b.cell.label} ({b.path}) under "
            f"different protocols or setups ({' | '.join(a.made_by)} against {' | '.join(b.made_by)}): "
            "judge the older cell again (dvc repro --force judge@<suite>-<model>-<judge>, then dvc repro)"
        )


@dataclass
class Comparison:
    """What a comparison writes: its tables in print order, the notes that say how they were made,
    and what made each cell's judgments."""

    suite: str
    name: str
    title: str
    kind: str  # "runs" or "judges"
    cells: list[str]
    tables: dict[str, pd.DataFrame]
    notes: list[str]
    made_by: list[str]
    settings: dict = field(default_factory=dict)  # seed, resamples


@dataclass(frozen=True)
class Clustering:
    """How a suite's problems cluster: its benchmark's `cluster_of` and `cluster_unit` (by default
    each problem is its own cluster, with all its samples), and what to say of where they came from."""

    cluster_of: Callable[[Judgment], str] = attrgetter("id")
    unit: str = "problem"
    note: str = ""


def clustering(layout: Layout, family: str, suite: str) -> Clustering:
    """The suite's benchmark's clusters, its kind read from the rendered suite (`suite.json`, which
    the judge stage read too); without that file, each problem its own cluster, and the notes say so."""
    path = layout.suite_info(family, suite)
    if not path.is_file():
        return Clustering(note=f"{path} not found (the suite's render stage writes it): each problem its own cluster")
    bench = plugin(read_suite_info(path).kind)
    return Clustering(bench.cluster_of, bench.cluster_unit)


def compare_runs(
    suite: str,
    a: Judged,
    b: Judged,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    clusters: Clustering | None = None,
) -> Comparison:
    check_comparable(a, b)
    clusters = clusters or Clustering()
    first, second = outcomes(a), outcomes(b)
    problems = paired_problems(a, b, first, second)
    pairs = [(first[p], second[p]) for p in problems]
    cluster_of = {judgment.id: clusters.cluster_of(judgment) for judgment in a.judgments}
    groups = [cluster_of[problem] for problem in problems]
    tables = {
        "runs": runs_table(a, b, pairs),
        "difference": difference_table(pairs, resamples, seed, groups, clusters.unit),
        "flips": flips_table(problems, pairs),
    }
    return Comparison(
        suite,
        f"{a.cell.slug}-vs-{b.cell.slug}",
        f"{suite}: {a.cell.label} (A) vs {b.cell.label} (B)",
        "runs",
        [a.cell.label, b.cell.label],
        tables,
        run_notes(resamples, seed, clusters, len(set(groups)), len(problems)),
        [made_by_line("A", a), made_by_line("B", b)],
        {"resamples": resamples, "seed": seed},
    )


def samples_shown(samples) -> str:
    """How many samples a run took, and which: `1 (sample 0)`, `4 (samples 0-3)`. Sample numbers
    alone read as a count: a run of one sample, numbered 0, showed `samples 0`."""
    return f"{len(samples)} (sample{'s' if len(samples) > 1 else ''} {samples_text(samples)})"


def runs_table(a: Judged, b: Judged, pairs: list[tuple[Outcome, Outcome]]) -> pd.DataFrame:
    def row(name: str, judged: Judged, side: int) -> dict:
        unscored = sum((pair[side].unscored for pair in pairs), Counter())
        return {
            "run": name,
            "model": judged.cell.model,
            "judge": judged.cell.judge,
            "samples": samples_shown(judged.samples),
            "problems": len(pairs),
            "failed generations": unscored["generation_error"],
            "judge errors": unscored["judge_error"],
        }

    return pd.DataFrame([row("A", a, 0), row("B", b, 1)])


MDE = f"MDE ({POWER:.0%} power)"


def per_cluster(values: np.ndarray, groups: Sequence[str]) -> np.ndarray:
    """The values summed per cluster, the clusters in the order they first appear (so that, each
    problem its own cluster, the problems keep their natural order and the bootstrap its draws)."""
    order = {name: index for index, name in enumerate(dict.fromkeys(groups))}
    return np.bincount([order[name] for name in groups], values, len(order))


def difference_table(
    pairs: list[tuple[Outcome, Outcome]],
    resamples: int,
    seed: int,
    groups: Sequence[str] | None = None,
    unit: str = "problem",
) -> pd.DataFrame:
    """B - A of the score (points) and of the share right, each with its paired cluster bootstrap
    interval, the problems where each run did better, its paired test, and the minimum detectable
    effect. `groups` is each pair's cluster (by default each problem its own): the bootstrap, the
    tests and the MDE see each cluster's differences summed, pairs over clusters. Where every
    cluster is one problem the tests are the usual ones (a sign-flip test of the problems' point
    differences, McNemar's of right/wrong); where a cluster holds several, McNemar's test (which
    takes the problems as independent) gives way to a sign-flip test of the clusters' differences."""
    groups = list(groups) if groups is not None else [str(index) for index in range(len(pairs))]
    one_each = len(set(groups)) == len(groups)
    points_a, points_b = (np.array([pair[side].points for pair in pairs]) for side in (0, 1))
    right_a, right_b = (np.array([float(pair[side].right) for pair in pairs]) for side in (0, 1))
    available = np.array([pair[0].max_points for pair in pairs])
    rows = []
    for measure, a, b, possible in (
        ("score (%)", points_a, points_b, available),
        ("right (%)", right_a, right_b, np.ones(len(pairs))),
    ):
        score_a, score_b = percent(a.sum(), possible.sum()), percent(b.sum(), possible.sum())
        gained, worth = per_cluster(b - a, groups), per_cluster(possible, groups)
        low, high = paired_bootstrap(gained, worth, resamples, seed)
        if measure == "right (%)" and one_each:
            p, test = mcnemar(int((a > b).sum()), int((b > a).sum()))
        else:
            p, test = sign_flip_test(gained, resamples, seed)
            if not one_each:
                test = test.replace("sign-flip permutation", f"sign-flip permutation of {len(worth)} {unit}s", 1)
        rows.append(
            {
                "measure": measure,
                "A": score_a,
                "B": score_b,
                "B - A": score_b - score_a,
                "95% CI low": low,
                "95% CI high": high,
                MDE: minimum_detectable_effect(gained, worth),
                "A ahead": int((a > b + TIE * possible).sum()),
                "B ahead": int((b > a + TIE * possible).sum()),
                "test": test,
                "p": float(f"{p:.4g}"),
            }
        )
    table = pd.DataFrame(rows)
    return table.round({column: 2 for column in ("A", "B", "B - A", "95% CI low", "95% CI high", MDE)})


def run_notes(
    resamples: int, seed: int, clusters: Clustering | None = None, drawn: int = 0, problems: int = 0
) -> list[str]:
    """What the comparison's numbers are and how they were made; `drawn`: the clusters of the
    `problems` compared."""
    clusters = clusters or Clustering()
    unit, one_each = clusters.unit, drawn == problems
    few = f" Fewer than {FEW_CLUSTERS} clusters: the interval is likely too narrow." if drawn < FEW_CLUSTERS else ""
    if one_each:
        resampled = f"each problem is its own cluster ({drawn:,} {unit}s, each with its samples)"
        tests = (
            f"`right (%)` by McNemar's test on the problems right in one run only (exact binomial below "
            f"{MCNEMAR_EXACT_BELOW} of them, else chi-square with continuity correction); `score (%)` by a paired "
            f"sign-flip permutation test of the summed point differences (every flip up to {SIGN_FLIP_EXACT_UP_TO} "
            f"differing problems, else {resamples} random flips, seed {seed})"
        )
    else:
        resampled = f"{drawn:,} {unit}s holding the {problems:,} problems compared"
        tests = (
            f"both measures by a paired sign-flip permutation test of the {unit}s' summed differences (each "
            f"{unit} flips as one; every flip up to {SIGN_FLIP_EXACT_UP_TO} differing {unit}s, else {resamples} "
            f"random flips, seed {seed}); McNemar's test would take the problems as independent"
        )
    factor = normal_quantile(1 - ALPHA / 2) + normal_quantile(POWER)
    return [
        "right: a problem that earned all its points (score 1) in every sample compared; for HiPhO, full "
        "marks on the problem. `right (%)` is the share of problems right.",
        "score (%): points earned over points available, as in the tables; a failed generation or judgment "
        "earns 0 (as in the tables; `unscored` in the flips says where).",
        f"Clusters, drawn and paired whole by the interval, the tests and the MDE: {resampled}.{few}"
        + (f" ({clusters.note})" if clusters.note else ""),
        f"B - A with its 95% interval: a paired percentile cluster bootstrap (each {unit} keeps both runs), "
        f"{resamples} resamples, seed {seed}.",
        f"Tests, two-sided: {tests}.",
        f"{MDE}: the minimum detectable effect, the smallest |B - A| (percentage points) that a two-sided test "
        f"at alpha {ALPHA:g} finds with {POWER:.0%} power: (z_{1 - ALPHA / 2:g} + z_{POWER:.2f}) x SE = {factor:.2f} "
        "x SE, "
        "SE = 100 sqrt(n/(n-1) sum_c (d_c - D m_c)^2) / sum_c m_c over the n clusters, the clustered standard error "
        "of the paired differences (d_c: B's points minus A's in cluster c, m_c: its points available, D: the "
        "observed B - A as a fraction). A smaller true difference is likely missed.",
        "A ahead / B ahead: the problems where that run earned more points, or was right where the other was not.",
    ]


# ---------------------------------------------------------------- judges' agreement

# The category each kind of judge reply holds, read from its field: PhysElite's answer verdict,
# HiPhO's answer-slot equivalence (evalscope's slot `correct`), the error type of a wrong answer,
# and a HiPhO criterion's award binarised as some credit or none (awards are points on each
# criterion's own scale, not categories). Replies with none of these (PhysElite's process grading,
# whose steps each judge splits its own way) are left out.
LABELS = {
    "verdict": str,
    "equivalent": lambda value: "equivalent" if value else "not equivalent",
    "correct": lambda value: "correct" if value else "incorrect",
    "error_type": str,
    "awarded": lambda value: "some credit" if value > 0 else "no credit",
}
_TASK_NUMBER = re.compile(r"\s+[\d.]+$")  # "criterion 0.1" and "slot 2" are kinds of task "criterion", "slot"


def reply_label(task: str, reply) -> tuple[str, str] | None:
    """What a judge's reply to a task decided, as (what was asked, the category); None for a reply
    that failed (kept as its error text) or holds no category."""
    if not isinstance(reply, dict):
        return None
    for name, read in LABELS.items():
        if reply.get(name) is not None:
            asked = _TASK_NUMBER.sub("", task)
            return (f"{asked} ({name} > 0)" if name == "awarded" else f"{asked} ({name})"), read(reply[name])
    return None


def ensemble_ratings(judged: Judged) -> tuple[list[str], dict[str, list[list[str]]]]:
    """The judges of an ensemble cell, and per kind of task the labels each gave (one list per
    item, in the judges' order): every task of every scored response that all of them answered."""
    judges = sorted({detail["judge"] for judgment in judged.judgments for detail in judgment.details})
    if len(judges) < 2:
        raise InputError(
            f"{judged.path}: cell {judged.cell.label} was judged by "
            f"{'rules only' if not judges else 'one judge, ' + judges[0]}: agreement needs several judges of "
            "the same responses, an ensemble cell (judge=physelite-ensemble) or two or more cells of one "
            "model (demo/rule demo/gpt-4o)"
        )
    ratings: dict[str, list[list[str]]] = {}
    for judgment in judged.judgments:
        replies = {detail["judge"]: detail for detail in judgment.details}
        if judgment.status != "scored" or sorted(replies) != judges:
            continue
        for task in sorted({key for detail in judgment.details for key in detail if key != "judge"}):
            labels = [reply_label(task, replies[judge].get(task)) for judge in judges]
            if all(labels) and len({asked for asked, _ in labels}) == 1:
                ratings.setdefault(labels[0][0], []).append([label for _, label in labels])
    if not ratings:
        raise InputError(
            f"{judged.path}: the judges of cell {judged.cell.label} gave no category to compare "
            f"(the fields {', '.join(LABELS)} in their replies)"
        )
    return judges, ratings


def cross_cell_ratings(cells: list[Judged]) -> tuple[list[str], dict[str, list[list[str]]]]:
    """Cells of one model judged by different judges: per response (problem and sample) each
    judge's right/wrong, and its verdict where every judgment has one. Responses some judge did not
    score (a judge error) are left out."""
    models = sorted({judged.cell.model for judged in cells})
    if len(models) > 1 or len({judged.samples for judged in cells}) > 1:
        raise InputError(
            f"cells {', '.join(judged.cell.label for judged in cells)}: judges agree or not on the same "
            "responses: give cells of one model and the same samples"
        )
    if len({judged.cell.judge for judged in cells}) < len(cells):
        raise InputError(f"cells {', '.join(judged.cell.label for judged in cells)}: each cell's judge once")
    keyed = [{(j.id, j.sample): j for j in judged.judgments} for judged in cells]
    for judged, mine in zip(cells[1:], keyed[1:]):
        if set(mine) != set(keyed[0]):
            raise InputError(
                f"cells {cells[0].cell.label} and {judged.cell.label} judged different responses: "
                f"{different_responses(keyed[0], mine, cells[0], judged)}"
            )
    responses = [
        key
        for key in sorted(keyed[0], key=lambda key: (natural_key(key[0]), key[1]))
        if all(mine[key].status == "scored" for mine in keyed)
    ]
    ratings = {
        "right/wrong (score 1)": [
            ["right" if mine[key].score >= RIGHT_FROM else "wrong" for mine in keyed] for key in responses
        ]
    }
    if responses and all(mine[key].verdict is not None for mine in keyed for key in responses):
        ratings["verdict"] = [[mine[key].verdict for mine in keyed] for key in responses]
    return [judged.cell.judge for judged in cells], ratings


def different_responses(first: dict, second: dict, a: Judged, b: Judged) -> str:
    def named(keys) -> str:
        ordered = sorted(keys, key=lambda key: (natural_key(key[0]), key[1]))
        return few([f"{problem} (sample {sample})" for problem, sample in ordered])

    only_a, only_b = set(first) - set(second), set(second) - set(first)
    return "; ".join(
        f"only in {judged.cell.label} ({judged.path}): {named(keys)}"
        for judged, keys in ((a, only_a), (b, only_b))
        if keys
    )


def agreement_table(judges: list[str], ratings: dict[str, list[list[str]]]) -> pd.DataFrame:
    """A row per kind of task for all the judges (Cohen's kappa for two, Fleiss' for more), and
    with three or more a row per pair of them (Cohen's), which shows the judge that disagrees."""
    pairs = [(i, j) for i in range(len(judges)) for j in range(i + 1, len(judges))] if len(judges) > 2 else []
    rows = []
    for asked, items in ratings.items():
        rows.append(agreement_row(asked, " + ".join(judges), items))
        rows += [
            agreement_row(asked, f"{judges[i]} vs {judges[j]}", [[item[i], item[j]] for item in items])
            for i, j in pairs
        ]
    return pd.DataFrame(rows).round({"all agree (%)": 2, "kappa": 3})


def agreement_row(asked: str, judges: str, items: list[list[str]]) -> dict:
    raters = len(items[0]) if items else 0
    if raters == 2:
        kappa, statistic = cohen_kappa([item[0] for item in items], [item[1] for item in items]), "Cohen's kappa"
    else:
        kappa, statistic = fleiss_kappa(category_counts(items)), "Fleiss' kappa"
    return {
        "asked": asked,
        "judges": judges,
        "items": len(items),
        "categories": len({label for item in items for label in item}),
        "all agree (%)": percent(sum(len(set(item)) == 1 for item in items), len(items)),
        "kappa": kappa,
        "statistic": statistic,
    }


def judge_agreement(suite: str, cells: list[Judged]) -> Comparison:
    judges, ratings = ensemble_ratings(cells[0]) if len(cells) == 1 else cross_cell_ratings(cells)
    labels = [judged.cell.label for judged in cells]
    notes = [
        "items: each response every judge scored; a reply that failed, or holds no category, is left out "
        "with its item.",
        "kappa: (observed - chance agreement) / (1 - chance agreement); Cohen's for two judges (chance from each "
        "judge's own label shares), Fleiss' for three or more (chance from the pooled shares); – where every label "
        "is one category.",
    ]
    if len(cells) == 1:
        notes.append(
            "asked: the kind of task and the reply field read. A HiPhO criterion's award is binarised "
            "(some credit, none); PhysElite's process grading is left out (each judge splits the steps "
            "its own way)."
        )
    else:
        notes.append("right/wrong: a response is right when its judge gave it all the problem's points (score 1).")
    return Comparison(
        suite,
        "judges-" + "-vs-".join(judged.cell.slug for judged in cells),
        f"{suite}: judges' agreement, {' vs '.join(labels)}",
        "judges",
        labels,
        {"agreement": agreement_table(judges, ratings)},
        notes,
        [made_by_line(f"cell {n + 1}", judged) for n, judged in enumerate(cells)],
    )


# ---------------------------------------------------------------- writing


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """A table as Markdown and LaTeX print it: each p-value in words beside its test (the shared
    formatters print every number with two decimals, which would make p = 0.0386 read 0.04), and
    no number ranked (the formatters mark the best of a column, which means nothing across the
    rows of a comparison: two measures, two runs, problems)."""
    if "p" in table.columns:
        table = table.assign(test=[f"{test}: p = {p:.3g}" for test, p in zip(table["test"], table["p"])]).drop(
            columns="p"
        )
    return table.astype({column: object for column in table.columns if pd.api.types.is_numeric_dtype(table[column])})


def write_comparison(layout: Layout, comparison: Comparison) -> tuple[Path, str]:
    """Each table as CSV (every number as computed), Markdown and LaTeX, all of them in
    comparison.md, and index.json listing them (the comparisons page reads it); returns the folder
    and comparison.md's text."""
    folder = layout.comparison(comparison.suite, comparison.name)
    index = {
        "suite": comparison.suite,
        "kind": comparison.kind,
        "title": comparison.title,
        "cells": comparison.cells,
        **comparison.settings,
        "all": "comparison.md",
        "notes": comparison.notes,
        "made_by": comparison.made_by,
        "tables": [
            {
                "name": name,
                "title": name,
                "files": {"markdown": f"{name}.md", "csv": f"{name}.csv", "latex": f"{name}.tex"},
            }
            for name in comparison.tables
        ],
    }
    notes = "".join(f"- {note}\n" for note in comparison.notes)
    made = made_by_markdown(comparison.made_by)
    sections = [f"# {comparison.title}\n"]
    with atomic_dir(folder) as staging:
        for name, table in comparison.tables.items():
            shown = to_markdown(readable(table))
            table.to_csv(staging / f"{name}.csv", index=False, lineterminator="\n")
            (staging / f"{name}.md").write_text(shown + made, encoding="utf-8")
            (staging / f"{name}.tex").write_text(
                made_by_latex(comparison.made_by) + to_latex(readable(table)), encoding="utf-8"
            )
            sections.append(f"## {name}\n\n{shown}")
        text = "\n".join(sections) + "\n" + notes + made
        (staging / "comparison.md").write_text(text, encoding="utf-8")
        write_json(staging / "index.json", index)
    return folder, text


# ---------------------------------------------------------------- command line


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m olympiad_eval.cli.compare",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return configure(parser)


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The command line's arguments (this module's own, and `olympiad-eval compare`'s)."""
    commands = parser.add_subparsers(dest="command", required=True, metavar="{runs,judges}")
    runs = commands.add_parser("runs", help="two cells of a suite: flips, score difference, paired tests")
    runs.add_argument("suite")
    runs.add_argument("a", metavar="A", help="the first cell, MODEL/JUDGE[:SAMPLES] (the baseline)")
    runs.add_argument("b", metavar="B", help="the second cell; differences are B - A")
    runs.add_argument(
        "--resamples",
        type=positive,
        default=RESAMPLES,
        help=f"bootstrap resamples and random sign flips (default {RESAMPLES})",
    )
    runs.add_argument("--seed", type=natural, default=SEED, help=f"their generator's seed (default {SEED})")
    judges = commands.add_parser("judges", help="Cohen's or Fleiss' kappa between judges of the same responses")
    judges.add_argument("suite")
    judges.add_argument(
        "cells",
        nargs="+",
        metavar="CELL",
        help="one cell judged by an ensemble, or cells of one model with different judges",
    )
    for command in (runs, judges):
        command.add_argument("--outputs", default=OUTPUTS, help=f"the outputs folder (default {OUTPUTS})")
        command.add_argument("--plan", default="params.yaml", help="the run plan, which gives the suite's benchmark")
    return parser


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of at least 1")
    return int(text)


def natural(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of at least 0")
    return int(text)


def run(args: argparse.Namespace) -> tuple[Path, str]:
    layout = Layout(args.outputs)
    plan = read_plan(args.plan)
    family = family_of_suite(plan, args.suite, args.plan)  # a suite of the plan, or a message naming the file
    read = lambda text: read_cell(layout, family, args.suite, parse_cell(text))  # noqa: E731
    if args.command == "runs":
        comparison = compare_runs(
            args.suite, read(args.a), read(args.b), args.resamples, args.seed, clustering(layout, family, args.suite)
        )
    else:
        comparison = judge_agreement(args.suite, [read(text) for text in args.cells])
    written = write_comparison(layout, comparison)
    write_comparison_index(layout)
    return written


def execute(args: argparse.Namespace) -> int:
    try:
        folder, text = run(args)
    except InputError as error:
        fail(str(error))
    except OSError as error:
        if error.filename is None:
            raise
        fail(f"{error.strerror or error}: {error.filename}")
    print(text, end="")
    print(f"\nwrote {folder}/ (comparison.md; each table as .md, .csv, .tex)")
    return 0


def main(argv: list[str] | None = None) -> None:
    sys.exit(execute(arguments().parse_args(argv)))


if __name__ == "__main__":
    main()
