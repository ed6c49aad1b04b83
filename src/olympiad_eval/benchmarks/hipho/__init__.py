"""HiPhO: physics olympiad papers scored in points by official marking schemes.

Release layout (github SciYu/HiPhO): `data/<EXAM>.json`, a list whose element 0 is
`{"information": ...}` (the exam's constants sheet, or "None."), then the problems; figures
under `data/image_question/`. The paper's score per problem: max(answer-level, step-level) in
points; step-level needs an LLM judge of the marking criteria, so the rule judge scores the
answer level only. Three protocols (`Scoring`): `olympiad_eval` (this project's, the default),
`vlmevalkit` (the authors' VLMEvalKit code, `vlmevalkit.py`) and `evalscope` (`evalscope.py`).
"""

from olympiad_eval.benchmarks.base import Benchmark
from olympiad_eval.benchmarks.hipho import config, judging, loading, prompts, report, scoring, tables


class HiPhO(Benchmark):
    name = "hipho"
    Suite = config.Suite
    # Bump a version with any change that can alter a verdict or a score (see `benchmarks.suites`).
    # `official` became `olympiad_eval` at v4 (it is this project's protocol, not the authors' code).
    protocol_versions = {"olympiad_eval": 5, "vlmevalkit": 1, "evalscope": 3}
    protocol_extras = {"vlmevalkit": ("pylatexenc", "vlmevalkit"), "evalscope": ("math_verify", "evalscope")}
    score_parts = ("answer_points", "step_points")  # answer and step level, in points (where the protocol has them)
    cluster_unit = "exam problem"  # a problem's parts share its setup: resampled together (`tables.cluster_of`)
    modules = (config, judging, loading, prompts, report, scoring, tables)


BENCHMARK = HiPhO()
