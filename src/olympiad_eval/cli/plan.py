"""The DVC pipeline files, generated from one template each, with every stage's code dependencies
read from what its script imports (`core.code`).

    olympiad-eval plan              # writes them (or `python -m olympiad_eval.cli.plan`)
    olympiad-eval plan --check      # says which differ from what would be written (exit 1)

`pipelines/templates/family.yaml` becomes the folder `pipelines/<family>/` for each benchmark family of
the plan (`pipelines` in params.yaml), with `<family>` replaced by its name: a `dvc.yaml`, and so a
dvc.lock, per stage of the template (`pipelines/<family>/judge/dvc.yaml`). DVC rewrites a whole lock
after each stage it runs, reading it back with its round-trip YAML parser: that is most of its own
cost per stage, so each lock holds one kind of stage of one family. `pipelines/templates/report.yaml` becomes the
repository's own `dvc.yaml`. In both, a dependency line `- <code: stages/x.py>` becomes the script
and every module of this package it runs: the imports it reaches, through function-level imports
too. Benchmarks are imported by name (`benchmarks.plugin(kind)`), so a script that reaches the
registry runs its family's benchmark too: in a family's pipeline, that benchmark's own package (as
one folder; an outside plugin's module by its file) and what it imports; in the root `dvc.yaml`,
every family's. Never another family's benchmark: editing one benchmark leaves the other families
up to date. A module that a stage runs but does not list would let DVC keep a stale output when the
module is edited.

A family's stages do not list their code file by file: the root's check stage depends on the code
of every family's stage scripts (`- <code of every family's stages>`) and writes, per family and
script, the list of its files with their hashes (`<path code stage=judge>`), on which that
script's stages depend. A stage's entry in dvc.lock then names its code in one line instead of forty,
and the lock that DVC rewrites after every stage is a third of the size; an edit still reruns exactly
the stages whose script runs the edited file."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from olympiad_eval.core import layout
from olympiad_eval.core.code import CODE_LISTS, TEMPLATES, all_code, code_of
from olympiad_eval.core.plan import pipeline_file, read_plan

_CODE = re.compile(r"^(?P<indent>\s*)- <code: (?P<script>\S+)>$", re.M)
_ALL_CODE = re.compile(r"^(?P<indent>\s*)- <code of every family's stages>$", re.M)
# a stage of a family's template (`  judge:`), where its text begins
_STAGE = re.compile(r"^  (?P<name>\w+):", re.M)
# the repository from a family's stage folder (`pipeline_file`'s): its `wdir`, and where params.yaml is
_ROOT_FROM_STAGE = "/".join([".."] * (len(Path(pipeline_file("family", "stage")).parts) - 1))
# `<path judgments suite=${item.suite} ...>`: an output path (see `output_path`)
_PATH = re.compile(r"<path (?P<name>[a-z_]+)(?P<fields>(?: \w+=[^\s>]+)*)>")


def code_lists(stage: str, root: Path) -> list[str]:
    """A stage's code list in each family of the plan: what the root report, which runs every
    family's benchmark, depends on for its code."""
    families = read_plan(root / "params.yaml")["families"]
    return [f"{layout.OUTPUTS}/{layout.spelled('code', family=family, stage=stage)}" for family in families]


def every_family_s_code(root: Path) -> list[str]:
    """What the check stage, which lists every family's code, depends on beyond its own code (which
    its `<code: stages/check.py>` line lists): the rest of every family's code, each file once."""
    families = read_plan(root / "params.yaml")["families"]
    own = set(code_of("stages/check.py", root))
    return sorted({path for family in families for path in all_code(root, family)} - own)


def output_path(marker: re.Match, family: str | None) -> str:
    """A `<path NAME field=value ...>` marker as the path `layout` spells, under the outputs folder;
    in a family's pipeline the family's name fills the field `family`."""
    fields = dict(pair.split("=", 1) for pair in marker["fields"].split())
    if family is not None and "family" in layout.fields_of(marker["name"]):
        fields.setdefault("family", family)
    try:
        return f"{layout.OUTPUTS}/{layout.spelled(marker['name'], **fields)}".rstrip("/")
    except KeyError as error:
        raise ValueError(f"{marker[0]}: {error.args[0]}") from None


def fill(template: str, root: Path, family: str | None = None) -> str:
    """A template with its code lines and output paths expanded (and `<family>` named)."""
    text = _CODE.sub(
        lambda m: "\n".join(f"{m['indent']}- {path}" for path in code_of(m["script"], root, family)), template
    )
    # in the root dvc.yaml: a script's code list in every family (`outputs/code/<family>/<stage>.txt`)
    text = CODE_LISTS.sub(lambda m: "\n".join(f"{m['indent']}- {path}" for path in code_lists(m["stage"], root)), text)
    text = _ALL_CODE.sub(lambda m: "\n".join(f"{m['indent']}- {path}" for path in every_family_s_code(root)), text)
    text = _PATH.sub(lambda m: output_path(m, family), text)
    return text if family is None else text.replace("<family>", family)


def family_pipeline(template: str, root: Path, family: str) -> dict[str, str]:
    """A family's pipeline files, by stage: its template filled, then cut into a dvc.yaml per stage of
    it (`pipelines/<family>/<stage>/dvc.yaml`), each with the template's head. Each has its own lock,
    which DVC rewrites whole after each stage it runs: a judge stage then rewrites the judge stages'
    entries alone, not the family's every entry."""
    filled = fill(template, root, family).replace("<root>", _ROOT_FROM_STAGE)
    head, _, body = filled.partition("\nstages:\n")
    starts = [match.start() for match in _STAGE.finditer(body)] + [len(body)]
    pipelines = {}
    for start, end in zip(starts, starts[1:]):
        stage = _STAGE.match(body, start)["name"]
        pipelines[stage] = f"{head}\nstages:\n{body[start:end].rstrip()}\n".replace("<stage>", stage)
    return pipelines


def pipeline_files(root: Path) -> dict[Path, str]:
    """Every pipeline file the plan needs, by path, with the text it should have."""
    templates = root / TEMPLATES
    family = (templates / "family.yaml").read_text(encoding="utf-8")
    files = {root / "dvc.yaml": fill((templates / "report.yaml").read_text(encoding="utf-8"), root)}
    for name in read_plan(root / "params.yaml")["families"]:
        for stage, text in family_pipeline(family, root, name).items():
            files[root / pipeline_file(name, stage)] = text
    return files


def _differs(path: Path, text: str) -> bool:
    return not path.is_file() or path.read_text(encoding="utf-8") != text


def stale(root: Path) -> list[str]:
    """What differs from the generated plan: each file that would change, and each family's
    pipeline whose family the plan no longer has."""
    files = pipeline_files(root)
    changed = [path for path, text in files.items() if _differs(path, text)]
    folders = {path.parent.parent for path in files if path.parent != root}  # each family's
    dropped = [path for path in sorted((root / "pipelines").rglob("dvc.yaml")) if path not in files]
    return [f"{path.relative_to(root)} differs from the generated one" for path in changed] + [
        f"{path.relative_to(root)} {_not_generated(path, folders)}" for path in dropped
    ]


def _not_generated(path: Path, folders: set[Path]) -> str:
    """Why a pipeline file that the plan does not generate is there, and what to do."""
    if not any(path.is_relative_to(folder) for folder in folders):
        return "is a pipeline of a family that params.yaml no longer has: remove its folder"
    return (
        "is no pipeline file of the template (one dvc.yaml per stage, pipelines/<family>/<stage>/dvc.yaml): "
        "remove it and its dvc.lock"
    )


def configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The command line's arguments (this module's own, and `olympiad-eval plan`'s)."""
    parser.add_argument(
        "--check", action="store_true", help="write nothing: say which files differ from the generated ones (exit 1)"
    )
    return parser


def execute(args: argparse.Namespace) -> int:
    root = Path.cwd()
    if args.check:
        problems = stale(root)
        for problem in problems:
            print(f"{problem}: run `olympiad-eval plan`", file=sys.stderr)
        return 1 if problems else 0
    for path, text in pipeline_files(root).items():
        if _differs(path, text):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(root)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m olympiad_eval.cli.plan", description=__doc__.split("\n\n")[0])
    return execute(configure(parser).parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
