"""DVC stage: one benchmark's tables (outputs/tables/<benchmark>/) and metrics (outputs/metrics/<benchmark>.json)."""

from pathlib import Path

import hydra
import yaml

from olympiad_eval.stage import chosen, clear_errors, log
from olympiad_eval.tables import aggregate


@hydra.main(version_base=None, config_path="../conf", config_name="aggregate")
@clear_errors
def main(cfg) -> None:
    benchmark = chosen("benchmark")
    plan = yaml.safe_load(Path(cfg.paths.plan).read_text(encoding="utf-8"))
    outputs = Path(cfg.paths.outputs)
    tables = aggregate(benchmark, cfg.benchmark, plan, outputs, outputs / "tables" / benchmark,
                       outputs / "metrics" / f"{benchmark}.json", outputs / "plots" / benchmark)
    log.info("%s: wrote %s", benchmark, ", ".join(tables))


if __name__ == "__main__":
    main()
