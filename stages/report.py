"""DVC stage: the static HTML report of the plan (outputs/report/)."""

import hydra

from olympiad_eval.layout import Layout
from olympiad_eval.report import write_report
from olympiad_eval.stage import clear_errors, log, read_plan, run


@hydra.main(version_base=None, config_path="../conf", config_name="report")
@clear_errors
def main(cfg) -> None:
    plan = read_plan(cfg.paths.plan)
    layout = Layout(cfg.paths.outputs)
    write_report(plan, layout)
    log.info("report: wrote %s", layout.report() / "index.html")


if __name__ == "__main__":
    run(main)
