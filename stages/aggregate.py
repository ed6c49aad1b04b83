"""DVC stage: one benchmark's tables (outputs/tables/<benchmark>/) and metrics (outputs/metrics/<benchmark>.json)."""

from pathlib import Path

import hydra

from olympiad_eval.stage import check_family, chosen, clear_errors, log, read_plan, run, suite_configs
from olympiad_eval.tables import aggregate


@hydra.main(version_base=None, config_path="../conf", config_name="aggregate")
@clear_errors
def main(cfg) -> None:
    benchmark = chosen("benchmark")
    plan = read_plan(cfg.paths.plan)
    check_family(plan, benchmark, cfg.benchmark.kind, cfg.paths.plan)
    outputs = Path(cfg.paths.outputs)
    tables = aggregate(benchmark, cfg.benchmark, plan, outputs, outputs / "tables" / benchmark,
                       outputs / "metrics" / f"{benchmark}.json", outputs / "plots" / benchmark,
                       suites=suite_configs(plan, benchmark))
    log.info("%s: wrote %s", benchmark, ", ".join(tables))


if __name__ == "__main__":
    run(main)
