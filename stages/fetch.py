"""DVC stage: fetch one benchmark release into outputs/problems/<benchmark>/."""

import hydra

from olympiad_eval.fetch import fetch
from olympiad_eval.layout import Layout
from olympiad_eval.stage import chosen, clear_errors, log, read_plan, run


@hydra.main(version_base=None, config_path="../conf", config_name="fetch")
@clear_errors
def main(cfg) -> None:
    benchmark = chosen("benchmark")
    read_plan(cfg.paths.plan)  # the first stage DVC runs: a plan that the last stages refuse stops the run here
    problems = fetch(benchmark, cfg.benchmark, Layout(cfg.paths.outputs).problems(benchmark))
    log.info("%s: %d problems, %d figures", benchmark, len(problems), sum(len(p.figures) for p in problems))


if __name__ == "__main__":
    run(main)
