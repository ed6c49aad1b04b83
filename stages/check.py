"""DVC stage: the run plan checked before any other stage runs (every fetch depends on its line);
the records of what the cells' stages read, for them to depend on (`stages.configs`: each model's
config for each suite as the generate stage composes it, with the files its provider reads; each
judge's config as the judge stage composes it); and what each family's stages run, a code list per
family and stage script (`core.code`), which those stages depend on instead of on each file.

`dvc exp run -S 'models=[gtp-4o]'` changes the plan's params, so this stage runs first and stops
the run with the stages' own message (did you mean 'gpt-4o'?) within a second or two, before DVC
starts any other stage; so does a release folder missing (in the copy that `dvc exp run --queue`
runs in, a git-ignored release that the run did not copy in with `-C`), where DVC would say only
`[Errno 2]`. The plan is checked before Hydra starts. Its line never changes (the same whatever the
plan), so a plan that passes reruns no stage after it but those whose own params or configs changed."""

import sys
from pathlib import Path

from olympiad_eval.core.layout import Layout
from olympiad_eval.core.plan import check_plan
from olympiad_eval.core.records import InputError, atomic_file

PLAN, CONF = "params.yaml", "conf"
CHECKED = "the plan's names are configs of conf/, its release folders are there (stages/check.py)\n"


def main() -> int:
    try:
        plan = check_plan(PLAN, CONF)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from olympiad_eval.core.code import write_code_lists
    from olympiad_eval.stages.configs import write_records  # Hydra: only once the plan's names are known good

    layout = Layout()
    write_records(plan, Path(CONF), layout, Path.cwd())
    for family in plan["families"]:
        write_code_lists(Path.cwd(), family, layout.root)
    stamp = layout.plan_check()
    stamp.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(stamp) as out:
        out.write(CHECKED)
    print(f"{Path(PLAN)}: every name is a config of {CONF}/, every release folder is there")
    return 0


if __name__ == "__main__":
    sys.exit(main())
