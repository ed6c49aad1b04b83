"""DVC stage `judge@<suite>-<model>-<judge>`: one suite x model cell graded by one judge, into
outputs/cells/<family>/<suite>/<model>/judges/<judge>/ (judgments, coverage, the judges' requests,
tokens and cost, and what its LLM judges were sent and replied). Also the job of a Hydra sweep over
judges or cells.

A judge endpoint that cannot serve at all (its probe) stops it with one line and exit status 2,
writing nothing; requests that fail are judge errors, and it fails on coverage (exit 1)."""

from olympiad_eval.scoring.pool import start_fork_server

if __name__ == "__main__":
    start_fork_server()  # every cell checks rules: the check workers' server starts beside Hydra's own start

import hydra

from olympiad_eval.core.config import check_fraction
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import family_of_suite, read_plan
from olympiad_eval.stages.configs import check_recorded, judge_record
from olympiad_eval.stages.judge import check_judge, judge_cell
from olympiad_eval.stages.runner import chosen, clear_errors, fail, log, run


@hydra.main(version_base=None, config_path="../conf", config_name="judge")
@clear_errors
def main(cfg) -> None:
    suite, model, judge_name = cfg.cell.suite, cfg.cell.model, chosen("judge")
    check_judge(cfg.judge, judge_name)
    check_fraction(cfg, "min_coverage", "conf/judge.yaml or an override")
    plan = read_plan(cfg.paths.plan)
    family = family_of_suite(plan, suite, cfg.paths.plan)
    layout = Layout(cfg.paths.outputs)
    differs = check_recorded(layout.judge_record(judge_name), judge_record(cfg), f"judge {judge_name}")
    if differs:
        log.warning("%s", differs)
    outcome, failure = judge_cell(
        layout, family, suite, model, judge_name, cfg.judge, cfg.paths.request_cache, cfg.min_coverage
    )
    log.info("%s x %s x %s: %s", suite, model, judge_name, outcome.summary())
    if failure:
        fail(failure, status=1)


if __name__ == "__main__":
    run(main)
