"""DVC stage: one model's responses to one suite, into outputs/generations/<family>/<suite>/<model>.jsonl
(and its usage metrics into outputs/usage/<family>/<suite>/<model>.json).

Exits non-zero while too many requests still fail, so that DVC never caches a broken output;
the rerun sends only the failed requests (the others are in the request cache). An endpoint that
cannot serve at all (down, unresolvable, refusing the key, not listing the model: its probe) stops
the stage before any request, with one line and exit status 2, writing nothing.
"""

import hydra

from olympiad_eval.core.config import check_fraction
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import family_of_suite, read_plan, stage_address
from olympiad_eval.core.records import Generation, InputError, read_jsonl
from olympiad_eval.stages.generate import check_model, generate
from olympiad_eval.stages.runner import chosen, clear_errors, fail, log, most_common, run


@hydra.main(version_base=None, config_path="../conf", config_name="generate")
@clear_errors
def main(cfg) -> None:
    suite, model = cfg.cell.suite, chosen("model")
    check_model(cfg.model, model)
    check_fraction(cfg, "max_failed_fraction", "conf/generate.yaml or an override")
    family = family_of_suite(read_plan(cfg.paths.plan), suite, cfg.paths.plan)
    layout = Layout(cfg.paths.outputs)
    prompts = layout.prompts(suite)
    if not prompts.is_file():
        raise InputError(
            f"suite '{suite}' (cell.suite) has no prompts at {prompts}: has it been rendered "
            f"(dvc repro {stage_address(family, 'render', suite)})?"
        )
    out = layout.generations(family, suite, model)
    outcome = generate(
        suite,
        model,
        cfg.model,
        prompts,
        out,
        cfg.paths.request_cache,
        layout.usage(family, suite, model),
        layout.sample_replies(family, suite, model),
    )
    log.info("%s x %s: %s", suite, model, outcome.summary())
    if outcome.errors > cfg.max_failed_fraction * outcome.total:
        endpoint = f" at {cfg.model.base_url}" if cfg.model.get("base_url") else ""
        reasons = most_common(g.error for g in read_jsonl(out, Generation) if g.error is not None)
        fail(
            f"{outcome.errors} of {outcome.total} requests failed (model '{model}'{endpoint}; tolerated: "
            f"{cfg.max_failed_fraction:.0%}): {reasons}; they are recorded as errors, never as "
            "answers: rerun to retry them",
            status=1,
        )


if __name__ == "__main__":
    run(main)
