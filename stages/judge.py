"""One part of a cell, alone: one suite x model cell graded by one judge, as the evaluate stage
grades it (`stages/evaluate.py`, the DVC stage, makes every part of a model's cells in one process),
into outputs/cells/<benchmark>/<model>/<suite>/judges/<judge>/ (judgments, coverage, the judges'
requests, tokens and cost, and what its LLM judges were sent and replied) with its stamp. For a
Hydra sweep or a cell by hand: the evaluate stage then finds the part up to date.

A judge endpoint that cannot serve at all (its probe) stops it with one line and exit status 2,
writing nothing; requests that fail are judge errors, and it fails on coverage (exit 1)."""

from olympiad_eval.scoring.pool import start_fork_server

if __name__ == "__main__":
    start_fork_server()  # every cell checks rules: the check workers' server starts beside Hydra's own start

from pathlib import Path

import hydra

from olympiad_eval.core.config import check_fraction
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import family_of_suite, read_plan
from olympiad_eval.stages.evaluate import part_code
from olympiad_eval.stages.judge import check_judge, judge_cell
from olympiad_eval.stages.runner import chosen, clear_errors, fail, log, run

ROOT = Path(__file__).resolve().parents[1]


@hydra.main(version_base=None, config_path="../conf", config_name="judge")
@clear_errors
def main(cfg) -> None:
    suite, model, judge_name = cfg.cell.suite, cfg.cell.model, chosen("judge")
    check_judge(cfg.judge, judge_name)
    check_fraction(cfg, "min_coverage", "conf/judge.yaml or an override")
    plan = read_plan(cfg.paths.plan)
    family = family_of_suite(plan, suite, cfg.paths.plan)
    layout = Layout(cfg.paths.outputs)
    code = part_code(layout, ROOT, family, "judge")
    made = judge_cell(
        layout,
        plan["suites"][suite],
        suite,
        model,
        judge_name,
        cfg.judge,
        code,
        cfg.paths.request_cache,
        cfg.min_coverage,
    )
    log.info("%s: %s", made.name, made.summary or "up to date")
    if made.failure:
        fail(made.failure, status=1)


if __name__ == "__main__":
    run(main)
