"""OlympiadBench (ACL 2024, OpenBMB): olympiad and Gaokao (CEE) maths and physics, zh and en.

Two release layouts, chosen by the benchmark config's `layout`:
- `first_release`: `data/<CLASSIFICATION>.json` (`English_Olympiad_Physics`, `Gaokao_Maths`, ...),
  text only, each record with its `label` (open-ended or theorem proving), `source` and
  `support_auto_scoring`;
- `current`: `data/<TYPE>_<MODALITY>_<subject>_<lang>_<SOURCE>.json` (`OE_MM_physics_en_COMP.json`:
  open-ended or theorem proving, multimodal or text only, maths or physics, en or zh, competition or
  CEE), with `context` and figures in `images/img_<N>.jpg`, named in the text by `<img_N>` markers.

A problem whose text refers to a figure the release does not hold (every one of the first release's
"如图" / "as shown in the figure" and its Markdown links to images it does not hold; a marker whose
image is absent) is kept, marked, counted in a
log line, and left out of the suites that take only `figure_status: [complete]` (all of ours):
never sent without its figure unless a suite asks for it. Problems the official protocol does not
score automatically (theorem proving, `support_auto_scoring: false`) are left out the same way
(`scoring_modes: [auto]`); the suite's selection, and so every table, says how many of each.

Prompts are the official ones (`inference/code/evaluators/evaluator.py`): the instruction per answer
type, unit and multiple-answer wording, in the problem's language, then the problem. Scoring is the
official automatic scorer, reproduced in `olympiadbench.official`; `rules` scores the same extracted
answer by our physics rules (`mathcheck.equivalent`) instead.

A problem's own metadata is in `Problem.attributes`; its `subset` is the current release's file
stem (`OE_TO_maths_en_COMP`, for both layouts) and its `subject` the release's subfield, which is
what judgments carry to the tables.
"""

from olympiad_eval.benchmarks.base import Benchmark
from olympiad_eval.benchmarks.olympiadbench import config, loading, official, prompts, scoring, tables


class OlympiadBench(Benchmark):
    name = "olympiadbench"
    Suite = config.Suite
    # Bump a version with any change that can alter a verdict or a score (see `benchmarks.suites`).
    protocol_versions = {"official": 2, "rules": 2}
    environments = (official.ENVIRONMENT,)  # the official scorer's sympy 1.12 and antlr 4.11
    # scored by rules alone: no judge tasks, and the rules' score is the score (the defaults)
    modules = (config, loading, prompts, scoring, tables)


BENCHMARK = OlympiadBench()
