"""DVC stage: grade one suite x model cell with one judge, into outputs/judgments/<suite>/<model>/<judge>.jsonl."""

import sys
from pathlib import Path

import hydra
from common import chosen, clear_errors, log

from olympiad_eval.judging import judge
from olympiad_eval.records import write_json


@hydra.main(version_base=None, config_path="../conf", config_name="judge")
@clear_errors
def main(cfg) -> None:
    suite, model, judge_name = cfg.cell.suite, cfg.cell.model, chosen("judge")
    outputs = Path(cfg.paths.outputs)
    outcome = judge(outputs / "suites" / suite, outputs / "generations" / suite / f"{model}.jsonl", judge_name,
                    cfg.judge, outputs / "judgments" / suite / model / f"{judge_name}.jsonl", cfg.paths.request_cache)
    log.info("%s x %s x %s: %s", suite, model, judge_name, outcome.summary())
    write_json(outputs / "coverage" / suite / model / f"{judge_name}.json", outcome.metrics())
    judged = outcome.total - outcome.generation_errors
    if judged and outcome.scored / judged < cfg.min_coverage:
        print(f"error: only {outcome.scored} of {judged} responses were judged (required: "
              f"{cfg.min_coverage:.0%}); rerun to retry the failed judgments", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
