"""The statistics that tables share: the aggregate stage's, a benchmark's own tables', and the
comparison command's (a benchmark module imports no stage module, so they live here)."""

from __future__ import annotations

from olympiad_eval import lazy_import

np = lazy_import("numpy")  # a benchmark module imports this; its stages need numpy only for tables

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_CHUNK = 1_000_000  # picks per chunk


def ratio_bootstrap(
    earned, available, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """The percentile interval of 100 * sum(earned) / sum(available) over items resampled with
    replacement (problems; a comparison's paired differences keep both runs of each), or NaNs when
    nothing is available. Seeded, so that tables stay byte-stable. Resamples are drawn in chunks
    (the generator gives the same stream): 1,000 x 11,586 picks at once would take 300 MB."""
    earned, available = np.asarray(earned, dtype=float), np.asarray(available, dtype=float)
    if earned.size == 0 or available.sum() == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    chunk = max(1, BOOTSTRAP_CHUNK // earned.size)
    ratios = []
    for start in range(0, resamples, chunk):
        picks = rng.integers(0, earned.size, size=(min(chunk, resamples - start), earned.size))
        possible = available[picks].sum(1)
        ratios.append(100 * earned[picks].sum(1) / np.where(possible > 0, possible, np.nan))
    tail = (100 - 100 * level) / 2
    low, high = np.nanpercentile(np.concatenate(ratios), [tail, 100 - tail])
    return float(low), float(high)
