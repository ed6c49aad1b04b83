"""DVC stage: grade one suite x model cell with one judge, into
outputs/judgments/<family>/<suite>/<model>/<judge>.jsonl (its coverage into outputs/coverage/..., its
judges' requests, tokens and cost into outputs/usage/<family>/<suite>/<model>/<judge>.json, and what
its LLM judges were sent and replied into outputs/conversations/..., for the report).

A judge endpoint that cannot serve at all (its probe) stops the stage with one line and exit status 2,
writing nothing; requests that fail are judge errors, and the stage fails on coverage (exit 1)."""

from olympiad_eval.scoring.pool import start_fork_server

if __name__ == "__main__":
    start_fork_server()  # every cell checks rules: the check workers' server starts beside Hydra's own start

import hydra

from olympiad_eval.core.config import check_fraction
from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import family_of_suite, read_plan, stage_address
from olympiad_eval.core.records import InputError, Judgment, read_jsonl, write_json
from olympiad_eval.stages.judge import check_judge, judge
from olympiad_eval.stages.runner import chosen, clear_errors, fail, log, most_common, run


@hydra.main(version_base=None, config_path="../conf", config_name="judge")
@clear_errors
def main(cfg) -> None:
    suite, model, judge_name = cfg.cell.suite, cfg.cell.model, chosen("judge")
    check_judge(cfg.judge, judge_name)
    check_fraction(cfg, "min_coverage", "conf/judge.yaml or an override")
    family = family_of_suite(read_plan(cfg.paths.plan), suite, cfg.paths.plan)
    layout = Layout(cfg.paths.outputs)
    generations = layout.generations(family, suite, model)
    if not generations.is_file():
        raise InputError(
            f"no generations of model '{model}' (cell.model) for suite '{suite}' (cell.suite) at "
            f"{generations}: run its stage first (dvc repro {stage_address(family, 'generate', f'{suite}-{model}')})"
        )
    out = layout.judgments(family, suite, model, judge_name)
    outcome = judge(
        layout.suite(suite),
        generations,
        judge_name,
        cfg.judge,
        out,
        cfg.paths.request_cache,
        layout.conversations(family, suite, model, judge_name),
    )
    log.info("%s x %s x %s: %s", suite, model, judge_name, outcome.summary())
    write_json(layout.coverage(family, suite, model, judge_name), outcome.metrics())
    write_json(layout.judge_usage(family, suite, model, judge_name), outcome.usage)
    judged = outcome.total - outcome.generation_errors
    if judged and outcome.scored / judged < cfg.min_coverage:
        reasons = most_common(j.detail[:300] for j in read_jsonl(out, Judgment) if j.status == "judge_error")
        fail(
            f"only {outcome.scored} of {judged} responses were judged (required: {cfg.min_coverage:.0%}): "
            f"{reasons}; rerun to retry the failed judgments",
            status=1,
        )


if __name__ == "__main__":
    run(main)
