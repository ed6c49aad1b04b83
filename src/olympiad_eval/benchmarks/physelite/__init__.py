"""PhysElite: bilingual (zh/en) olympiad physics, every problem answered in both languages.

Two release layouts, chosen by the benchmark config's `layout`: `long`, one row per problem x
language (the Hub release as a third-party loader reads it), and `wide`, one row per problem with
per-language columns (`problem_text_cn`, `problem_text_en`, ...: the paper's appendix C.2). The
column names are not settled, so the mapping from our fields to the release's columns lives in the
config (`fields`; in the wide layout `{language}` in a column name stands for each language's
suffix, `languages`; in the long layout `languages` lists the codes a row may have). A problem may
have one or more subjects (a list): it counts under each.
The official answer score comes from LLM judges; the rule judge compares the "FINAL ANSWER:"
line with the reference answer within the numeric tolerance (5% by default). An empty reference
answer is valid: the LLM judges then take the result from the reference solution (paper, F.3);
the rule judge cannot decide such a problem and says so. An empty answer with no solution is refused.

Every table is per setting (the suites' `setting`: schematic only, with process diagrams, with a
hint), never pooled across settings; within a setting, the zh and en suites are averaged as the
paper does (F.1). A variant suite names its `baseline` suite, and the paper's Table 4 compares the
two on the same problems.
"""

from olympiad_eval.benchmarks.base import Benchmark
from olympiad_eval.benchmarks.physelite import config, judging, loading, prompts, report, scoring, tables


class PhysElite(Benchmark):
    name = "physelite"
    Suite = config.Suite
    # Bump a version with any change that can alter a verdict or a score (see `benchmarks.suites`).
    protocol_versions = {"official": 5}  # one protocol: the paper's
    score_parts = ("process",)  # the mean of the judges' process scores, 0-1
    modules = (config, judging, loading, prompts, report, scoring, tables)


BENCHMARK = PhysElite()
