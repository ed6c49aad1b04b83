"""The run plan (params.yaml): which benchmarks, suites, models and judges `dvc repro` evaluates, read
and checked as one, and the checks a stage makes of its cell against it."""

from __future__ import annotations

import difflib
from pathlib import Path

import yaml

from olympiad_eval.core.layout import NAME_RULE, check_name, is_name
from olympiad_eval.core.records import InputError


class _PlanLoader(yaml.SafeLoader):
    """YAML that refuses a key given twice in one mapping (PyYAML would keep the last silently,
    where DVC refuses the file): a suite named twice is a mistake, never an override."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise _GivenTwice(f"line {key_node.start_mark.line + 1}: '{key}' is given twice in one mapping")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _GivenTwice(Exception):
    pass


def read_plan(path: str | Path) -> dict:
    """The run plan (params.yaml) with its pipelines joined: `benchmarks` (every benchmark's name),
    `releases` (benchmark: the folder its release is read from), `suites` (suite: its benchmark),
    `models`, `judges`, `family` (benchmark: the pipeline it is in) and `families` (every pipeline,
    an empty one too). A name given twice is refused: DVC's fan-out would silently drop the second
    (one cell per name); so is a name that is no plain file name (`layout.NAME`): each becomes a path."""
    try:
        plan = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_PlanLoader)  # a SafeLoader
    except _GivenTwice as error:
        raise InputError(f"{path}: {error}; each name once") from None
    except yaml.YAMLError as error:
        raise InputError(f"{path}: not valid YAML ({error})") from None
    if not isinstance(plan, dict):
        raise InputError(f"{path}: the plan must be a mapping (models, judges, pipelines)")
    for key in ("models", "judges"):
        if not isinstance(plan.get(key), list) or not all(isinstance(name, str) for name in plan[key]):
            hint = f" (a list even of one: [{plan[key]}])" if isinstance(plan.get(key), str) else ""
            raise InputError(f"{path}: {key} must be a list of names{hint}, got {plan.get(key)!r}")
        _refuse_twice(plan[key], f"{path}: {key}")
        for name in plan[key]:
            check_name(key[:-1], name, f"{path}: {key}")
    if not isinstance(plan.get("pipelines"), dict):
        raise InputError(f"{path}: pipelines must map each benchmark family to its benchmarks and suites")
    for family in plan["pipelines"]:
        check_name("family", family, f"{path}: pipelines")
    joined = {
        "benchmarks": [],
        "releases": {},
        "suites": {},
        "models": plan["models"],
        "judges": plan["judges"],
        "family": {},
        "families": list(plan["pipelines"]),
    }
    for family, part in plan["pipelines"].items():
        _join_pipeline(joined, family, part, path)
    return joined


def _join_pipeline(joined: dict, family: str, part, path: str | Path) -> None:
    """One family's block of the plan, added to the joined plan (`read_plan`)."""
    where = f"{path}: pipelines.{family}"
    if (
        not isinstance(part, dict)
        or not isinstance(part.get("benchmarks"), dict)
        or not isinstance(part.get("suites"), dict)
    ):
        raise InputError(
            f"{where} must have a mapping `benchmarks` (benchmark: the folder its release is read "
            "from, e.g. sample_hipho: data/sample/hipho) and a mapping `suites` (suite: its benchmark)"
        )
    for benchmark, folder in part["benchmarks"].items():
        check_name("benchmark", benchmark, f"{where}.benchmarks")
        if benchmark in joined["family"]:
            raise InputError(f"{where}: benchmark '{benchmark}' is also in pipelines.{joined['family'][benchmark]}")
        if not isinstance(folder, str) or not folder.strip():
            raise InputError(
                f"{where}.benchmarks.{benchmark} must be the folder its release is read from (the "
                f"source.path of conf/benchmark/{benchmark}.yaml, or that file for a release on the "
                f"Hub), got {folder!r}"
            )
        joined["family"][benchmark] = family
        joined["benchmarks"].append(benchmark)
        joined["releases"][benchmark] = folder
    for suite, benchmark in part["suites"].items():
        check_name("suite", suite, f"{where}.suites")
        if benchmark not in part["benchmarks"]:
            raise InputError(
                f"{where}.suites.{suite}: benchmark '{benchmark}' is not in pipelines.{family}.benchmarks"
                f"{_closest(str(benchmark), list(part['benchmarks']))}"
            )
        if suite in joined["suites"]:
            raise InputError(f"{where}.suites: suite '{suite}' is in another pipeline too")
        joined["suites"][suite] = benchmark


def _closest(name: str, names: list[str]) -> str:
    """`; did you mean 'x'? (it has: ...)` for a misspelt name among `names`."""
    if not names:
        return " (it has none)"
    close = difflib.get_close_matches(name, names, n=1)
    return (f"; did you mean '{close[0]}'?" if close else "") + f" (it has: {', '.join(names)})"


def check_pairing(plan: dict, suite: str, name: str, benchmark: str, path: str | Path) -> None:
    """The render stage reads the benchmark the plan pairs with its suite (`cell.benchmark`); one
    of another kind has other fields, and rendering it would fail deep inside, or not at all. A
    suite outside the plan (rendered by hand, or in a sweep) has only its kind to keep to. `name`:
    the suite's benchmark's name (`Benchmark.name`, its family's)."""
    paired = plan["suites"].get(suite)
    if paired is not None and paired != benchmark:
        raise InputError(
            f"{path}: pipelines.{plan['family'][paired]}.suites.{suite} pairs suite '{suite}' with "
            f"benchmark '{paired}', not '{benchmark}' (cell.benchmark={benchmark})"
        )
    family = plan["family"].get(benchmark)
    if family is not None and family != name:
        key = (
            f"pipelines.{family}.suites.{suite}" if paired is not None else f"pipelines.{family}.benchmarks.{benchmark}"
        )
        raise InputError(
            f"{path}: {key}: suite '{suite}' (conf/suite/{suite}.yaml) asks {name} problems, and benchmark "
            f"'{benchmark}' is a {family} release: pair the suite with a {name} benchmark, under "
            f"pipelines.{name}"
        )


def _refuse_twice(names: list, where: str) -> None:
    twice = sorted({str(name) for name in names if names.count(name) > 1})
    if twice:
        raise InputError(f"{where}: {', '.join(repr(name) for name in twice)} named twice; each name once")


def check_family(plan: dict, benchmark: str, name: str, path: str | Path) -> None:
    """A benchmark belongs in the pipeline of its family (`name`: its `Benchmark.name`), where its
    stages and their dvc.lock are."""
    family = plan["family"].get(benchmark)
    if family is not None and family != name:
        raise InputError(
            f"{path}: pipelines.{family} lists '{benchmark}', a {name} benchmark "
            f"(conf/benchmark/{benchmark}.yaml): move it under pipelines.{name}"
        )


def check_release_folder(plan: dict, benchmark: str, source, path: str | Path) -> None:
    """A local release is read from the folder the plan names for its benchmark, or from inside it:
    that folder is all its fetch stage depends on, so a release read from elsewhere could change
    without DVC rerunning the fetch. A benchmark outside the plan (fetched by hand or in a sweep)
    has no folder to keep to; nor has a release on the Hub."""
    folder = plan["releases"].get(benchmark)
    if folder is None or source.get("type") != "local" or not source.get("path"):
        return
    if not Path(source.path).resolve().is_relative_to(Path(folder).resolve()):
        raise InputError(
            f"{path}: pipelines.{plan['family'][benchmark]}.benchmarks.{benchmark} is '{folder}', but "
            f"conf/benchmark/{benchmark}.yaml (or an override) reads the release from source.path "
            f"'{source.path}', outside it: DVC would not rerun the fetch when that release changes; "
            "name the folder the release is read from"
        )


# ---------------------------------------------------------------- the plan's names are configs

# Each list of names in the plan, and the config group (conf/<group>/) each name is a file of.
PLAN_GROUPS = {"models": "model", "judges": "judge", "benchmarks": "benchmark", "suites": "suite"}


def check_config_name(conf: Path, group: str, name: str, origin: str) -> None:
    """A config name chosen for a group (`origin`: where it was chosen) is a name (`layout.NAME`:
    it becomes a path) and a file of its group in conf/; if not, the closest name and all the
    group's names are shown. A group that is no folder of conf/ is none of the plan's: left alone."""
    folder = conf / group
    if not folder.is_dir():
        return
    if not is_name(name):  # `model=../../x`: a config outside conf/, outputs outside outputs/
        raise InputError(
            f"{group} '{name}' ({origin}) is not a name of a config of conf/{group}/: a {group}'s name "
            f"becomes a path of its outputs, so it is one plain file name ({NAME_RULE})"
        )
    if not (folder / f"{name}.yaml").is_file():
        choices = sorted(path.relative_to(folder).with_suffix("").as_posix() for path in folder.rglob("*.yaml"))
        close = difflib.get_close_matches(name, choices, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise InputError(
            f"{group} '{name}' ({origin}): there is no conf/{group}/{name}.yaml. {hint}"
            f"The {group} configs: {', '.join(choices)}"
        )


def check_plan(path: str | Path, conf: str | Path) -> dict:
    """The run plan read (`read_plan`) and each of its names checked to be a config of its group,
    with the message a stage gives for it (`check_config_name`): the first thing `dvc repro` runs
    (stages/check.py), so that a misspelt name stops the run at once, before any other stage."""
    plan = read_plan(path)
    for key, group in PLAN_GROUPS.items():
        for name in plan[key]:
            check_config_name(Path(conf), group, name, f"{group}={name}, from {path} or the command line")
    check_releases(plan, path)
    return plan


# Where `dvc exp run --temp` and `--queue` run an experiment: a copy of what git has, under the workspace.
EXPERIMENT_COPY = (".dvc", "tmp", "exps")
# DVC checks out every output of the plan into an experiment's copy before it runs any stage, this
# check included, and warns for each one whose stage has not run yet; no setting of DVC's quiets
# those lines alone, and nothing of the project runs before them: the message says what they are.
DVC_CHECKOUT_NOTE = (
    ". The 'No file hash info found ... It won't be created' warnings above it are DVC's: it checks out the "
    "outputs of every stage into the copy before any stage runs, and the stages not run yet have none (harmless)"
)


def in_experiment_copy(folder: Path) -> bool:
    parts = folder.resolve().parts
    return any(parts[i : i + 3] == EXPERIMENT_COPY for i in range(len(parts)))


def check_releases(plan: dict, path: str | Path, here: Path | None = None) -> None:
    """Each release folder the plan names is there (run from the repository's root, `here`). DVC
    would stop at its fetch with a bare `[Errno 2]`; in the copy that `dvc exp run --temp`/`--queue`
    runs in, a release that git ignores (data/releases/, as the README places them) is missing
    unless the run copies it in: `-C <folder>`, DVC's own option for ignored paths."""
    here = Path.cwd() if here is None else here
    for benchmark, folder in plan["releases"].items():
        if (here / folder).exists():
            continue
        where = f"{path}: pipelines.{plan['family'][benchmark]}.benchmarks.{benchmark}"
        if in_experiment_copy(here):
            raise InputError(
                f"{where}: the release folder '{folder}' is not in this experiment's copy of the workspace: "
                f"`dvc exp run --queue`/`--temp` runs in a copy of what git has, and git ignores it; run the "
                f"experiment with `-C {folder}` (DVC copies the folder in), or in the workspace (no --queue/--temp)"
                f"{DVC_CHECKOUT_NOTE}"
            )
        raise InputError(
            f"{where}: there is no release folder '{folder}': get the release where "
            f"conf/benchmark/{benchmark}.yaml says (source.path), or name the folder it is in"
        )


# ---------------------------------------------------------------- a cell's family


def pipeline_file(family: str, stage: str) -> str:
    """The pipeline file holding a family's stages of one kind (`olympiad-eval plan` writes a
    dvc.yaml per stage of the family's template, each with its own dvc.lock)."""
    return f"pipelines/{family}/{stage}/dvc.yaml"


def stage_address(family: str, stage: str, cell: str) -> str:
    """What `dvc repro` takes to run one cell of a family: `pipelines/hipho/render/dvc.yaml:render@hipho`."""
    return f"{pipeline_file(family, stage)}:{stage}@{cell}"


def family_of_benchmark(plan: dict, benchmark: str, plan_path: str | Path) -> str:
    """The family whose pipeline holds a benchmark (`plan` as `read_plan` joins it)."""
    missing = (
        f"{plan_path}: benchmark '{benchmark}' is in no pipeline of the plan: add it under pipelines.<its kind>"
        ".benchmarks (benchmark: the folder its release is read from)"
    )
    return _listed(plan["family"], benchmark, missing)


def family_of_suite(plan: dict, suite: str, plan_path: str | Path) -> str:
    """The family whose folders hold a suite's cells: its benchmark's."""
    missing = (
        f"{plan_path}: suite '{suite}' is in no pipeline of the plan: add it under pipelines.<its benchmark's "
        "kind>.suites (suite: its benchmark)"
    )
    benchmark = _listed(plan["suites"], suite, missing)
    return family_of_benchmark(plan, benchmark, plan_path)


def family_of(plan: dict, suite: str) -> str:
    """The family of one of the plan's suites (`read_plan` pairs each with a benchmark of a family)."""
    return plan["family"][plan["suites"][suite]]


def _listed(mapping: dict, key: str, missing: str):
    if key not in mapping:
        raise InputError(missing)
    return mapping[key]
