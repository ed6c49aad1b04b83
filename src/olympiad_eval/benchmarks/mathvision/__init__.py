"""MATH-Vision: competition maths with figures, multiple choice and free form, scored by rules.

Release layout (github mathllm/MATH-V): `data/<split>.jsonl` (test: 3,040, testmini: 304) and
`images/<id>.jpg`. Accuracy is reported overall, per level (1-5) and per subject.
"""

from olympiad_eval.benchmarks.base import Benchmark
from olympiad_eval.benchmarks.mathvision import config, loading, prompts, report, scoring, tables


class MathVision(Benchmark):
    name = "mathvision"
    Suite = config.Suite
    # Bump a version with any change that can alter a verdict or a score (see `benchmarks.suites`).
    protocol_versions = {"official": 3, "evalscope": 4}
    protocol_extras = {"evalscope": ("math_verify", "evalscope")}
    # scored by rules alone: no judge tasks, and the rules' score is the score (the defaults)
    modules = (config, loading, prompts, report, scoring, tables)


BENCHMARK = MathVision()
