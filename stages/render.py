"""DVC stage: render one suite's prompts into outputs/suites/<family>/<suite>/, and, for a suite of the
plan, its side-by-side pages of the report into outputs/report/side/<suite>/ (each problem's own text
and figures, into which the report's viewer loads each model's column from that model's cells)."""

import hydra

from olympiad_eval.benchmarks import plugin
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import check_pairing, read_plan
from olympiad_eval.report import write_side
from olympiad_eval.stages.render import render
from olympiad_eval.stages.runner import chosen, clear_errors, log, run


@hydra.main(version_base=None, config_path="../conf", config_name="render")
@clear_errors
def main(cfg) -> None:
    suite, benchmark = chosen("suite"), cfg.cell.benchmark
    plan = read_plan(cfg.paths.plan)
    family = plugin(cfg.suite.kind).name
    check_pairing(plan, suite, family, benchmark, cfg.paths.plan)
    layout = Layout(cfg.paths.outputs)
    prompts = render(suite, cfg.suite, benchmark, layout.problem_records(benchmark), layout.suite(family, suite))
    log.info("%s: %d prompts", suite, len(prompts))
    if suite in plan["suites"]:  # a suite rendered by hand, outside the plan, has no report
        log.info("side by side: wrote %s", write_side(plan, layout, suite, cfg.paths.plan))


if __name__ == "__main__":
    run(main)
