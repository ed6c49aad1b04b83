"""DVC stage: fetch one benchmark release into outputs/problems/<benchmark>/."""

import hydra

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import check_release_folder, read_plan
from olympiad_eval.stages.fetch import fetch
from olympiad_eval.stages.runner import chosen, clear_errors, log, run


@hydra.main(version_base=None, config_path="../conf", config_name="fetch")
@clear_errors
def main(cfg) -> None:
    benchmark = chosen("benchmark")
    plan = read_plan(cfg.paths.plan)  # the first stage DVC runs: a plan that the last stages refuse stops the run here
    check_release_folder(plan, benchmark, cfg.benchmark.source, cfg.paths.plan)
    problems = fetch(benchmark, cfg.benchmark, Layout(cfg.paths.outputs).problems(benchmark))
    log.info("%s: %d problems, %d figures", benchmark, len(problems), sum(len(p.figures) for p in problems))


if __name__ == "__main__":
    run(main)
