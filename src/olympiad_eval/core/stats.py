"""The statistics that tables share: the aggregate stage's, a benchmark's own tables', and the
comparison command's (a benchmark module imports no stage module, so they live here); and a cell's
score with its interval as the leaderboard and the report's first screen write it."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from statistics import NormalDist

from olympiad_eval import lazy_import

np = lazy_import("numpy")  # a benchmark module imports this; its stages need numpy only for tables

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_CHUNK = 1_000_000  # picks per chunk


def ratio_bootstrap(
    earned, available, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """The percentile interval of 100 * sum(earned) / sum(available) over units resampled with
    replacement, or NaNs when nothing is available. A unit is a row: a cluster when the caller summed
    each cluster's items into one (`cluster_bootstrap` does), so that items that share a parent are
    drawn together. With 2-D arrays (units x groups: PhysElite's problems x languages) the statistic
    is the mean over the groups of each group's ratio (a group with nothing available in a resample
    leaves that resample out). Seeded, so that tables stay byte-stable. Resamples are drawn in
    chunks (the generator gives the same stream): 1,000 x 11,586 picks at once would take 300 MB."""
    earned, available = np.asarray(earned, dtype=float), np.asarray(available, dtype=float)
    if earned.size == 0 or available.sum() == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    units = len(earned)
    # a group's column at a time: gathering from one contiguous row is several times faster
    columns = [(earned, available)] if earned.ndim == 1 else list(zip(earned.T.copy(), available.T.copy()))
    chunk = max(1, BOOTSTRAP_CHUNK // (units * len(columns)))
    ratios = []
    for start in range(0, resamples, chunk):
        picks = rng.integers(0, units, size=(min(chunk, resamples - start), units))
        each = []
        for got, possible in columns:
            drawn = possible[picks].sum(1)
            each.append(100 * got[picks].sum(1) / np.where(drawn > 0, drawn, np.nan))
        ratios.append(each[0] if len(each) == 1 else np.mean(each, axis=0))
    tail, drawn = (100 - 100 * level) / 2, np.concatenate(ratios)
    # the same percentiles either way; numpy's NaN-aware one is the slower, for resamples with nothing available
    percentile = np.nanpercentile if np.isnan(drawn).any() else np.percentile
    low, high = percentile(drawn, [tail, 100 - tail])
    return float(low), float(high)


def cluster_sums(earned, available, clusters, groups=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each cluster's earned and available summed (its items, samples and, without `groups`, every
    group together), in the sorted order of the cluster labels: (earned, available, labels); with
    `groups` (a label per item) the sums are clusters x groups, in the sorted order of the groups."""
    earned, available = np.asarray(earned, dtype=float), np.asarray(available, dtype=float)
    labels, index = np.unique(_labels(clusters), return_inverse=True)
    if groups is None:
        return np.bincount(index, earned, len(labels)), np.bincount(index, available, len(labels)), labels
    names, column = np.unique(_labels(groups), return_inverse=True)
    shape = (len(labels), len(names))
    summed_earned, summed_available = np.zeros(shape), np.zeros(shape)
    np.add.at(summed_earned, (index, column), earned)
    np.add.at(summed_available, (index, column), available)
    return summed_earned, summed_available, labels


def _labels(values) -> np.ndarray:
    """Labels numpy can sort: numbers as they are, anything else (names held as objects) as text."""
    labels = np.asarray(values)
    return labels if labels.dtype.kind in "iub" else labels.astype(str)


def cluster_bootstrap(
    earned,
    available,
    clusters,
    groups=None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """The percentile cluster bootstrap: items (answers: a question of a problem, in a language, a
    sample) that share a cluster (`clusters`, a label per item: their problem, or HiPhO's exam
    problem) are resampled together, whole clusters with replacement, and the interval is of
    100 * sum(earned) / sum(available) (with `groups`, the mean over groups of each one's ratio; see
    `ratio_bootstrap`). Resampling items as if independent when they share a parent (a setup, a
    problem answered in two languages, several samples) makes the interval too narrow: the items'
    errors are correlated (Miller 2024, "Adding Error Bars to Evals", section 2.2)."""
    summed_earned, summed_available, _ = cluster_sums(earned, available, clusters, groups)
    return ratio_bootstrap(summed_earned, summed_available, resamples, seed, level)


def ratio_standard_error(earned, available) -> float:
    """The clustered (linearised, delta-method) standard error, in percent, of the ratio
    r = sum(earned) / sum(available) over n clusters (each argument summed per cluster):

        SE(r) = 100 * sqrt(n / (n - 1) * sum_c (earned_c - r * available_c)^2) / sum_c available_c

    With one item per cluster and one point each this is the familiar s / sqrt(n); it is the
    cluster-robust standard error of a mean (inspect_ai's `stderr(cluster=...)`), here of a ratio.
    NaN with fewer than two clusters or nothing available."""
    earned, available = np.asarray(earned, dtype=float), np.asarray(available, dtype=float)
    n, total = earned.size, available.sum()
    if n < 2 or total == 0:
        return float("nan")
    residuals = earned - earned.sum() / total * available
    return float(100 * math.sqrt(n / (n - 1) * float((residuals**2).sum())) / total)


def normal_quantile(probability: float) -> float:
    return NormalDist().inv_cdf(probability)


# The power analysis of a comparison: the smallest difference a two-sided test at this level
# detects with this probability.
ALPHA, POWER = 0.05, 0.80


def minimum_detectable_effect(gained, available, alpha: float = ALPHA, power: float = POWER) -> float:
    """The minimum detectable effect (in percentage points) of a paired comparison at `power` in a
    two-sided test at level `alpha` (Miller 2024, section 5):

        MDE = (z_{1 - alpha/2} + z_{power}) * SE(B - A)   (2.80 * SE at alpha 0.05, power 0.80)

    where SE(B - A) is `ratio_standard_error` of the paired differences summed per cluster (`gained`:
    B's points minus A's in each cluster, `available`: its points): the clustered variance of the
    paired differences, so that correlated items count for less than independent ones. A difference
    of this size would be found significant 80% of the time; a smaller one is likely missed."""
    return (normal_quantile(1 - alpha / 2) + normal_quantile(power)) * ratio_standard_error(gained, available)


# What the leaderboard and the report's first screen say of the scores they write (`score_text`).
SCORES_NOTE, PARTIAL_NOTE = "scores in %, [95% interval]", "* a partial suite or coverage below 100%"


def headline_parts(headline: dict) -> tuple[str, str]:
    """(`66.7`, with `*` where the suite is partial or the coverage short of 100%; its interval
    `[28.6, 100.0]`, or "" where there is none): a cell's score as the leaderboard and the report's
    first screen write it."""
    flagged = headline.get("partial") not in (None, "-") or headline.get("coverage", 1.0) < 1.0
    interval = (
        f"[{headline['ci_low']:.1f}, {headline['ci_high']:.1f}]"
        if headline.get("ci_low") is not None and headline.get("ci_high") is not None
        else ""
    )
    return f"{headline['score']:.1f}{'*' if flagged else ''}", interval


def score_text(headline: dict) -> str:
    """`66.7 [28.6, 100.0]`, with `*` where the suite is partial or the coverage short of 100%."""
    return " ".join(part for part in headline_parts(headline) if part)


def resampled_text(clusters: int, unit: str, answers: int) -> str:
    """What an interval resampled: `65 exam problems, 235 answers`."""
    return f"{clusters:,} {_counted(unit, clusters)}, {answers:,} {_counted('answer', answers)}"


def _counted(noun: str, count: int) -> str:
    return noun if count == 1 else f"{noun}s"


# Below this many clusters a cluster bootstrap (as any cluster-robust interval) is known to come out
# too narrow (Cameron, Gelbach and Miller 2008): the tables' notes say so.
FEW_CLUSTERS = 30


# McNemar's exact binomial test below this many discordant pairs, the chi-square approximation
# (with Edwards' continuity correction) from it on: the usual textbook threshold, below which the
# chi-square's p-value is too far from the exact one.
MCNEMAR_EXACT_BELOW = 25


# A sign-flip test enumerates every flip of up to this many non-zero differences (2^20, about a
# million sums, in chunks); past it, it draws random flips.
SIGN_FLIP_EXACT_UP_TO = 20


_FLIPS_PER_CHUNK = 1 << 16


_PICKS_PER_CHUNK = 1_000_000  # random sign flips held at once: 10,000 x 11,586 would take 900 MB


# Sums of floats (points such as 0.4 + 0.2) that are equal on paper may differ in the last bits:
# a resampled statistic this close to the observed one counts as reaching it.
TIE = 1e-9


def mcnemar(right_to_wrong: int, wrong_to_right: int) -> tuple[float, str]:
    """McNemar's test on the discordant pairs of a paired right/wrong table (b, c): the p-value and
    the method. Exact: twice the binomial(b + c, 1/2) tail at min(b, c), at most 1."""
    b, c = right_to_wrong, wrong_to_right
    discordant = b + c
    if discordant == 0:
        return 1.0, "McNemar, no discordant pairs"
    if discordant < MCNEMAR_EXACT_BELOW:
        tail = sum(math.comb(discordant, k) for k in range(min(b, c) + 1))
        return min(1.0, 2 * tail / 2**discordant), "McNemar, exact binomial"
    statistic = (abs(b - c) - 1) ** 2 / discordant
    # The chi-square with one degree of freedom is a squared standard normal: P(X > x) = erfc(sqrt(x / 2)).
    return math.erfc(math.sqrt(statistic / 2)), "McNemar, chi-square with continuity correction"


def sign_flip_test(differences: Sequence[float], resamples: int, seed: int) -> tuple[float, str]:
    """A paired permutation test of sum(differences) = 0: under the null hypothesis each pair's
    difference is as likely to have the other sign. The p-value is the share of sign flips whose
    |sum| reaches the observed one: over every flip when there are few non-zero differences, else
    over `resamples` random flips (counting the observed one, so never 0)."""
    values = np.asarray(differences, dtype=float)
    # A pair whose difference is float noise (a mean of samples' points) is a tie, as 0 is.
    nonzero = values[np.abs(values) > TIE * max(1.0, float(np.abs(values).max(initial=0)))]
    if nonzero.size == 0:
        return 1.0, "sign-flip permutation, no differences"
    observed = abs(nonzero.sum()) * (1 - TIE)
    if nonzero.size <= SIGN_FLIP_EXACT_UP_TO:
        flips = 1 << nonzero.size
        reached = sum(
            int((np.abs(_flipped_sums(nonzero, start, min(flips, start + _FLIPS_PER_CHUNK))) >= observed).sum())
            for start in range(0, flips, _FLIPS_PER_CHUNK)
        )
        return reached / flips, f"sign-flip permutation, exact (all {flips} flips)"
    rng = np.random.default_rng(seed)
    reached = 0
    chunk = max(1, _PICKS_PER_CHUNK // nonzero.size)
    for start in range(0, resamples, chunk):
        signs = rng.choice(np.array([-1.0, 1.0]), size=(min(chunk, resamples - start), nonzero.size))
        reached += int((np.abs(signs @ nonzero) >= observed).sum())
    return (reached + 1) / (resamples + 1), f"sign-flip permutation, {resamples} random flips, seed {seed}"


def _flipped_sums(values: np.ndarray, start: int, stop: int) -> np.ndarray:
    """The sums of `values` under the sign flips numbered start..stop-1 (bit i of a number flips value i)."""
    numbers = np.arange(start, stop, dtype=np.int64)[:, None]
    signs = 1 - 2 * ((numbers >> np.arange(values.size, dtype=np.int64)) & 1)
    return signs @ values


def paired_bootstrap(
    gained: Sequence[float], available: Sequence[float], resamples: int, seed: int, level: float = 0.95
) -> tuple[float, float]:
    """The percentile interval of 100 * sum(gained) / sum(available) over units resampled with
    replacement, each keeping both of its runs (so the pairing is kept). `gained` is B's points minus
    A's per unit, `available` the points there were (1 each for a share of problems right); a unit
    is a cluster (`cli.compare` sums each cluster's problems: the paired cluster bootstrap)."""
    return ratio_bootstrap(gained, available, resamples, seed, level)


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float:
    """Cohen's kappa of two raters' labels of the same items: (observed - chance agreement) /
    (1 - chance agreement), chance from each rater's own label shares. NaN when chance agreement is
    1 (both gave one and the same label to everything: agreement that says nothing)."""
    if len(first) != len(second):
        raise ValueError(f"two raters must label the same items: {len(first)} labels against {len(second)}")
    if not first:
        return math.nan
    items = len(first)
    observed = sum(a == b for a, b in zip(first, second)) / items
    shares_first, shares_second = Counter(first), Counter(second)
    chance = sum(shares_first[label] * shares_second[label] for label in shares_first) / items**2
    return math.nan if math.isclose(chance, 1) else (observed - chance) / (1 - chance)


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa from an items x categories table of how many raters put each item in each
    category; every item rated by the same number (at least 2) of raters. NaN when every rating
    falls in one category."""
    table = np.asarray(counts, dtype=float)
    if table.size == 0:
        return math.nan
    raters = table.sum(1)
    if raters.min() != raters.max() or raters[0] < 2:
        raise ValueError(
            "Fleiss' kappa needs every item rated by the same number (at least 2) of raters, "
            f"got {sorted(set(raters.astype(int).tolist()))}"
        )
    n = raters[0]
    per_item = ((table**2).sum(1) - n) / (n * (n - 1))
    shares = table.sum(0) / table.sum()
    chance = float((shares**2).sum())
    return math.nan if math.isclose(chance, 1) else (float(per_item.mean()) - chance) / (1 - chance)


def category_counts(ratings: Sequence[Sequence[str]]) -> list[list[int]]:
    """Each item's raters' labels (one list per item) as the counts table `fleiss_kappa` reads."""
    categories = sorted({label for labels in ratings for label in labels})
    return [[Counter(labels)[category] for category in categories] for labels in ratings]
