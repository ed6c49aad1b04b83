"""DVC stage: the root of the static HTML report (outputs/report/): the index of the whole plan, the
flips, what lists the plan's models for the side-by-side pages and the cells' indexes, and the shared
assets. Each cell's pages are written by its pages stage (`stages/pages.py`), each suite's
side-by-side pages by its render stage (`stages/render.py`)."""

import hydra

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import read_plan
from olympiad_eval.report import write_report
from olympiad_eval.stages.runner import clear_errors, log, run


@hydra.main(version_base=None, config_path="../conf", config_name="report")
@clear_errors
def main(cfg) -> None:
    layout = Layout(cfg.paths.outputs)
    write_report(read_plan(cfg.paths.plan), layout)
    log.info("report: wrote %s", layout.report_index())


if __name__ == "__main__":
    run(main)
