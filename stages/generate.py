"""DVC stage `generate@<suite>-<model>`: one model's responses to one suite, into
outputs/cells/<family>/<suite>/<model>/generation/ (generations, usage, each sample's reply facts).
Also the job of a Hydra sweep over models or suites (`-m model=a,b`, on a launcher such as
submitit): every reply is kept in the request cache, so `dvc repro` afterwards sends nothing again.
With `judge_ahead`, the plan's LLM judges are asked as the replies come (`stages/ahead.py`).

Exits 1 while too many requests still fail (they are recorded as errors; the rerun sends only those,
the others come from the request cache). An endpoint that cannot serve at all (down, unresolvable,
refusing the key, not listing the model: its probe) stops it before any request, with one line and
exit status 2, writing nothing.
"""

from pathlib import Path

import hydra

from olympiad_eval.core.config import check_fraction
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import family_of_suite, read_plan
from olympiad_eval.stages.configs import check_recorded, compose_judges, model_record, provider_inputs
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
    recorded = model_record(cfg, provider_inputs(cfg.model, suite), ROOT)
    differs = check_recorded(layout.model_record(suite, model), recorded, f"{suite} x {model}")
    if differs:
        log.warning("%s", differs)
    cell = (layout, family, suite, model, cfg.model, cfg.paths.request_cache, cfg.max_failed_fraction)
    judges = {}
    if cfg.judge_ahead:
        from olympiad_eval.stages.ahead import generate_judging_ahead, llm_judges

        judges = llm_judges({name: composed.judge for name, composed in compose_judges(plan["judges"]).items()})
    outcome, failure = generate_judging_ahead(*cell, judges) if judges else generate_cell(*cell)
    log.info("%s x %s: %s", suite, model, outcome.summary())
    if failure:
        fail(failure, status=1)


if __name__ == "__main__":
    run(main)
