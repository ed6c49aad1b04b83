"""DVC stage: the static HTML report (outputs/report/). With a cell (`model=M cell.suite=S`, a stage
per suite x model in each family's pipeline) it writes that cell's pages and its columns of the
side-by-side pages; without, the root: the index of the whole plan, the flips, what lists the plan's
models for the side-by-side pages and the cells' indexes, and the shared assets. Each suite's
side-by-side pages are their own stage (`stages/side.py`)."""

import hydra
from omegaconf import OmegaConf

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import read_plan
from olympiad_eval.report import write_cell, write_report
from olympiad_eval.stages.runner import chosen, clear_errors, log, run


@hydra.main(version_base=None, config_path="../conf", config_name="report")
@clear_errors
def main(cfg) -> None:
    plan = read_plan(cfg.paths.plan)
    layout = Layout(cfg.paths.outputs)
    if cfg.cell.suite is None:
        write_report(plan, layout)
        log.info("report: wrote %s", layout.report_index())
        return
    model = chosen("model")
    folder = write_cell(
        plan, layout, cfg.cell.suite, model, OmegaConf.to_container(cfg.model, resolve=True), cfg.paths.plan
    )
    log.info("report: wrote %s", folder)


if __name__ == "__main__":
    run(main)
