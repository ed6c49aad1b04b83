"""HiPhO: physics olympiad papers scored in points by official marking schemes.

Release layout (github SciYu/HiPhO): `data/<EXAM>.json`, a list whose element 0 is
`{"information": ...}` (the exam's constants sheet, or "None."), then the problems; figures
under `data/image_question/`. Official score per problem: max(answer-level, step-level) in
points; step-level needs an LLM judge of the marking criteria, so the rule judge scores the
answer level only.
"""

from olympiad_eval.benchmarks.base import Benchmark
from olympiad_eval.benchmarks.hipho import config, judging, loading, prompts, report, scoring, tables


class HiPhO(Benchmark):
    name = "hipho"
    Suite = config.Suite
    # Bump a version with any change that can alter a verdict or a score (see `benchmarks.suites`).
    protocol_versions = {"official": 3, "evalscope": 3}
    score_parts = ("answer_points", "step_points")  # answer and step level, in points (where the protocol has them)
    cluster_unit = "exam problem"  # a problem's parts share its setup: resampled together (`tables.cluster_of`)
    modules = (config, judging, loading, prompts, report, scoring, tables)


BENCHMARK = HiPhO()
