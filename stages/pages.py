"""DVC stage `pages@<suite>-<model>`: one cell's pages of the report, into
outputs/report/cells/<family>/<suite>/<model>/ (its index, a page per problem with the response and
what each of the plan's judges made of it and was asked, its columns of the suite's side-by-side
pages), and each problem's status in the cell into outputs/statuses/<family>/<suite>/<model>.json,
which the root report reads (its counts per cell, its "models disagree" filter) instead of every page.
The model's settings the pages show are those of its record for the suite (`stages.configs`)."""

import hydra

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import read_plan
from olympiad_eval.report import write_cell_pages
from olympiad_eval.stages.configs import recorded_model
from olympiad_eval.stages.runner import clear_errors, log, run


@hydra.main(version_base=None, config_path="../conf", config_name="pages")
@clear_errors
def main(cfg) -> None:
    suite, model, layout = cfg.cell.suite, cfg.cell.model, Layout(cfg.paths.outputs)
    settings = recorded_model(layout.model_record(suite, model))
    folder = write_cell_pages(read_plan(cfg.paths.plan), layout, suite, model, settings, cfg.paths.plan)
    log.info("%s x %s: wrote %s", suite, model, folder)


if __name__ == "__main__":
    run(main)
