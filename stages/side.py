"""DVC stage: a suite's side-by-side pages of the report (outputs/report/side/<suite>/), one per
problem: its own text and figures, into which the report's viewer loads each model's column from
that model's cell (`stages/report.py`). They read the suite alone, so adding a model reruns no
such stage."""

import hydra

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import read_plan
from olympiad_eval.report import write_side
from olympiad_eval.stages.runner import clear_errors, log, run


@hydra.main(version_base=None, config_path="../conf", config_name="side")
@clear_errors
def main(cfg) -> None:
    layout = Layout(cfg.paths.outputs)
    folder = write_side(read_plan(cfg.paths.plan), layout, cfg.cell.suite, cfg.paths.plan)
    log.info("side by side: wrote %s", folder)


if __name__ == "__main__":
    run(main)
