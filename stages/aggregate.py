"""DVC stage: one benchmark's tables (outputs/tables/<benchmark>/, with their index.json) and metrics
(outputs/metrics/<benchmark>.json)."""

import hydra

from olympiad_eval.benchmarks import plugin
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import check_family, family_of_benchmark, read_plan
from olympiad_eval.stages.aggregate import aggregate
from olympiad_eval.stages.runner import chosen, clear_errors, log, run, suite_configs


@hydra.main(version_base=None, config_path="../conf", config_name="aggregate")
@clear_errors
def main(cfg) -> None:
    benchmark = chosen("benchmark")
    plan = read_plan(cfg.paths.plan)
    family_of_benchmark(plan, benchmark, cfg.paths.plan)  # where its cells are; refused when it has none
    check_family(plan, benchmark, plugin(cfg.benchmark.kind).name, cfg.paths.plan)
    tables = aggregate(benchmark, cfg.benchmark, plan, Layout(cfg.paths.outputs), suites=suite_configs(plan, benchmark))
    log.info("%s: wrote %s", benchmark, ", ".join(tables))


if __name__ == "__main__":
    run(main)
