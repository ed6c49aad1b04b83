"""One part of a cell, alone: one model's responses to one suite, as the evaluate stage makes them
(`stages/evaluate.py`, the DVC stage, makes every part of a model's cells in one process), into
outputs/cells/<benchmark>/<model>/<suite>/ with its stamp. For a Hydra sweep over models or suites
(`-m model=a,b`, on a launcher such as submitit), or a cell by hand: the evaluate stage then finds
the part up to date.

Exits 1 while too many requests still fail (they are recorded as errors and not stamped; the rerun
sends only those, the others come from the request cache). An endpoint that cannot serve at all
(down, unresolvable, refusing the key, not listing the model: its probe) stops it before any
request, with one line and exit status 2, writing nothing.
"""

from pathlib import Path

import hydra

from olympiad_eval.core.config import check_fraction
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import family_of_suite, read_plan
from olympiad_eval.stages.evaluate import part_code
from olympiad_eval.stages.generate import check_model, generate_cell
from olympiad_eval.stages.runner import chosen, clear_errors, fail, log, run

ROOT = Path(__file__).resolve().parents[1]


@hydra.main(version_base=None, config_path="../conf", config_name="generate")
@clear_errors
def main(cfg) -> None:
    suite, model = cfg.cell.suite, chosen("model")
    check_model(cfg.model, model)
    check_fraction(cfg, "max_failed_fraction", "conf/generate.yaml or an override")
    plan = read_plan(cfg.paths.plan)
    family = family_of_suite(plan, suite, cfg.paths.plan)
    layout = Layout(cfg.paths.outputs)
    code = part_code(layout, ROOT, family, "generate")
    made = generate_cell(
        layout, plan["suites"][suite], suite, model, cfg.model, code, cfg.paths.request_cache, cfg.max_failed_fraction
    )
    log.info("%s: %s", made.name, made.summary or "up to date")
    if made.failure:
        fail(made.failure, status=1)


if __name__ == "__main__":
    run(main)
