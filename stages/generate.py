"""DVC stage: one model's responses to one suite, into outputs/generations/<suite>/<model>.jsonl.

Exits non-zero while too many requests still fail, so that DVC never caches a broken output;
the rerun sends only the failed requests (the others are in the request cache).
"""

import sys
from pathlib import Path

import hydra
from common import chosen, clear_errors, log

from olympiad_eval.generate import generate


@hydra.main(version_base=None, config_path="../conf", config_name="generate")
@clear_errors
def main(cfg) -> None:
    suite, model = cfg.cell.suite, chosen("model")
    outputs = Path(cfg.paths.outputs)
    outcome = generate(suite, model, cfg.model, outputs / "suites" / suite / "prompts.jsonl",
                       outputs / "generations" / suite / f"{model}.jsonl", cfg.paths.request_cache,
                       outputs / "usage" / suite / f"{model}.json")
    log.info("%s x %s: %s", suite, model, outcome.summary())
    if outcome.errors > cfg.max_failed_fraction * outcome.total:
        print(f"error: {outcome.errors} of {outcome.total} requests failed (tolerated: "
              f"{cfg.max_failed_fraction:.0%}); rerun to retry them", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
