"""DVC stage: one model on every suite of one benchmark (`evaluate@<benchmark>-<model>`), into
outputs/cells/<benchmark>/<model>/ (each suite's generations and each judge's judgments, with their
usage, coverage and conversations), outputs/report/cells/<benchmark>/<model>/ (each cell's pages)
and outputs/stamps/<benchmark>/<model>/ (what made each part: a part whose inputs did not change is
not made again).

A cell that fails (too many failed requests, too few responses judged) is recorded, not stamped, and
the stage exits 1 after the other suites, naming each; an endpoint that cannot serve at all stops
it with one line and exit status 2.
"""

from olympiad_eval.scoring.pool import start_fork_server

if __name__ == "__main__":
    start_fork_server()  # every cell checks rules: the check workers' server starts beside Hydra's own start

from pathlib import Path

import hydra

from olympiad_eval.core.config import check_fraction
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import check_config_name, read_plan
from olympiad_eval.core.records import InputError
from olympiad_eval.stages.configs import compose_judges, record
from olympiad_eval.stages.evaluate import evaluate
from olympiad_eval.stages.generate import check_model
from olympiad_eval.stages.judge import check_judge
from olympiad_eval.stages.runner import chosen, clear_errors, fail, log, run

ROOT = Path(__file__).resolve().parents[1]


@hydra.main(version_base=None, config_path="../conf", config_name="evaluate")
@clear_errors
def main(cfg) -> None:
    benchmark, model = cfg.cell.benchmark, chosen("model")
    check_model(cfg.model, model)
    check_fraction(cfg, "max_failed_fraction", "conf/evaluate.yaml or an override")
    check_fraction(cfg, "min_coverage", "conf/evaluate.yaml or an override")
    plan = read_plan(cfg.paths.plan)
    if benchmark not in plan["benchmarks"]:
        raise InputError(
            f"{cfg.paths.plan}: benchmark '{benchmark}' (cell.benchmark) is not in the plan: its benchmarks are "
            f"{', '.join(plan['benchmarks'])}"
        )
    if model not in plan["models"]:
        raise InputError(f"{cfg.paths.plan}: model '{model}' is not among the plan's models: add it under `models`")
    for name in plan["judges"]:
        check_config_name(ROOT / "conf", "judge", name, f"judge={name}, from {cfg.paths.plan}")
    judges = compose_judges(plan["judges"])
    for name, judge in judges.items():
        check_judge(judge, name)
    layout = Layout(cfg.paths.outputs)
    tracked = layout.model_config(model)
    if not tracked.is_file() or tracked.read_text(encoding="utf-8") != record(cfg, judges):
        log.warning(
            "%s x %s: the config composed here differs from %s, which DVC tracks for this stage (written by "
            "`dvc repro check`): an override on the command line, or a config edited since; DVC does not know "
            "what made these outputs",
            benchmark,
            model,
            tracked,
        )
    outcome = evaluate(plan, layout, benchmark, model, cfg, judges, ROOT)
    log.info("%s x %s: %s", benchmark, model, outcome.summary())
    if outcome.failures:
        fail("; ".join(outcome.failures), status=1)


if __name__ == "__main__":
    run(main)
