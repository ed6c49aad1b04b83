"""What every stage script in `stages/` shares: its cell's names, the plan, and errors that end in
one clear line (each stage's own config checks live with its module: `generate.check_model`,
`judging.check_judge`, `checks`). The one module of the package that knows Hydra; it lives in the package
(not beside the scripts) so that launchers which pickle a stage (submitit, ray) can import it."""

from __future__ import annotations

import atexit
import difflib
import functools
import gc
import inspect
import logging
import os
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import platformdirs
import yaml
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import ValueType
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import OmegaConf

from olympiad_eval.core.records import WRITE_ERRORS, InputError

log = logging.getLogger("olympiad_eval")


def user_cache(name: str) -> str:
    """`name` in this user's cache folder for olympiad-eval: `$XDG_CACHE_HOME/olympiad-eval` (or
    `~/.cache/olympiad-eval`) on Linux, `~/Library/Caches/olympiad-eval` on macOS,
    `%LOCALAPPDATA%\\olympiad-eval\\Cache` on Windows. One folder for every workspace of the user on
    the machine (clones, git worktrees, and the copies that `dvc exp run --queue` or `--temp` runs in),
    so that no sweep pays twice for a reply. conf/common.yaml names it `${olympiad_eval.user_cache:...}`."""
    return str(Path(platformdirs.user_cache_dir("olympiad-eval", appauthor=False)) / name)


# Registered on import: every stage script imports this module before Hydra composes its config,
# and so does every process a launcher starts for a sweep's job.
OmegaConf.register_new_resolver("olympiad_eval.user_cache", user_cache, replace=True)

# Where the request cache was before it moved to the user's cache folder, relative to the workspace.
OLD_REQUEST_CACHE = Path(".cache") / "requests.sqlite"


def request_cache(path: str) -> str:
    """The request cache (`paths.request_cache`); a warning while the workspace still holds one at
    the old default, whose replies this run would otherwise pay for again without a word."""
    if OLD_REQUEST_CACHE.is_file() and OLD_REQUEST_CACHE.resolve() != Path(path).resolve():
        log.warning(
            "%s holds replies of earlier runs, but the request cache is now %s: move the file there if "
            "none is there yet (`mv %s* %s`, while no stage runs), or keep using it (`export "
            'OLYMPIAD_EVAL_REQUEST_CACHE=%s`); the README\'s "Where the request cache is" says how to merge two',
            OLD_REQUEST_CACHE,
            path,
            OLD_REQUEST_CACHE,
            Path(path).parent,
            OLD_REQUEST_CACHE.resolve(),
        )
    return path


def chosen(group: str) -> str:
    """The config name picked for a group (`model=gpt4o` gives "gpt4o")."""
    return HydraConfig.get().runtime.choices[group]


_finished: list[bool] = []  # per job this process ran: whether it was a single run (not a sweep's job)


def clear_errors(stage):
    """Errors a user can act on (bad input or config, a file that cannot be read or written, a full
    disk) end the stage with their message and exit status 2; anything else is a bug and keeps its
    traceback."""

    @functools.wraps(stage)
    def run(cfg):
        try:
            result = stage(cfg)
            _finished.append(HydraConfig.get().mode == RunMode.RUN)
            return result
        except InputError as error:
            fail(str(error))
        except OSError as error:
            if (
                error.filename is None and error.errno in WRITE_ERRORS
            ):  # outputs name their file; this net catches the rest
                fail(f"{error.strerror or error} while this stage was writing: free some space, then rerun")
            if error.filename is None:  # not about a file: a bug, or a failure the stage should have caught
                raise
            fail(f"{error.strerror or error}: {error.filename}" + (f" -> {error.filename2}" if error.filename2 else ""))

    return run


def run(main) -> None:
    """Run a stage's Hydra main and, after a single run, end the process as soon as it returns. By
    then every output is written, closed and renamed into place; what the interpreter would do next
    is free every object of every module (0.2-0.4 s with openai, sympy or pandas loaded), which only
    delays the next stage. The exit handlers still run first (`atexit`: they remove a loader's
    temporary folder and flush the log); only the freeing is skipped. A sweep exits as usual, so
    that its launcher shuts down the workers it keeps (joblib's would otherwise outlive it), and so
    does a stage that fails (`sys.exit`).

    What the imports made lives as long as the process, so it is frozen first: the garbage
    collector then stops scanning it again each time Hydra or the requests create objects.

    Before Hydra composes anything, the stage checks where it runs and the config names its
    command line chooses: Hydra's own messages for these are a screen long, or come later from
    deep inside the stage."""
    root = Path(inspect.unwrap(main).__code__.co_filename).resolve().parents[1]  # stages/<stage>.py is in the root
    try:
        check_run_from(root)
        check_config_names(root / "conf", sys.argv[1:])
    except InputError as error:
        fail(str(error))
    gc.freeze()
    main()
    if _finished != [True]:
        return
    atexit._run_exitfuncs()  # what the exit would run first: a loader's temporary folder, logging's flush
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def check_run_from(root: Path) -> None:
    """A stage runs from the repository's root, as DVC runs it (`wdir`): params.yaml, conf/, the
    bundled releases and outputs/ are named relative to it, so run from anywhere else it would read
    another plan, or none, and write its outputs there."""
    here = Path.cwd().resolve()
    if here != root:
        raise InputError(
            f"run the stages from the repository's root, {root} (`cd {root}`), not from {here}: "
            "they read params.yaml, conf/ and the releases, and write outputs/, relative to it"
        )


def check_config_names(conf: Path, overrides: list[str]) -> None:
    """Each config name that an override chooses (`model=gpt4o`; each of a sweep's `model=a,b`)
    is a file of its group in conf/; if not, the closest name and all the group's names are shown."""
    for group, name in _chosen_names(overrides):
        folder = conf / group
        if folder.is_dir() and not (folder / f"{name}.yaml").is_file():
            choices = sorted(path.relative_to(folder).with_suffix("").as_posix() for path in folder.rglob("*.yaml"))
            close = difflib.get_close_matches(name, choices, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise InputError(
                f"{group} '{name}' ({group}={name}, from params.yaml or the command line): there is no "
                f"conf/{group}/{name}.yaml. {hint}The {group} configs: {', '.join(choices)}"
            )


def _chosen_names(overrides: list[str]) -> list[tuple[str, str]]:
    """(group, name) for each name an override chooses; an option (`-m`) or a key of a config
    (`model.timeout=5`) chooses none, and whatever Hydra cannot parse is left for Hydra to report."""
    parser, chosen_names = OverridesParser.create(), []
    for text in overrides:
        if text.startswith("-") or "=" not in text:
            continue
        try:
            [override] = parser.parse_overrides([text])
        except HydraException:
            continue
        if override.is_delete():
            continue
        if override.is_sweep_override():
            simple = override.value_type == ValueType.SIMPLE_CHOICE_SWEEP  # not a glob or a range
            names = list(override.sweep_string_iterator()) if simple else []
        else:
            names = [override.value()]
        chosen_names += [(override.key_or_group, name) for name in names if isinstance(name, str)]
    return chosen_names


def fail(message: str, status: int = 2):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(status)


def most_common(reasons: Iterable[str], shown: int = 3) -> str:
    """The most frequent reasons (of failed requests or judgments), with their counts."""
    return "; ".join(f"{reason} ({count}x)" for reason, count in Counter(reasons).most_common(shown))


# ---------------------------------------------------------------- the plan


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
    (one cell per name)."""
    try:
        plan = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_PlanLoader)  # noqa: S506 (a SafeLoader)
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
    if not isinstance(plan.get("pipelines"), dict):
        raise InputError(f"{path}: pipelines must map each benchmark family to its benchmarks and suites")
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


def check_pairing(plan: dict, suite: str, kind: str, benchmark: str, path: str | Path) -> None:
    """The render stage reads the benchmark the plan pairs with its suite (`cell.benchmark`); one
    of another kind has other fields, and rendering it would fail deep inside, or not at all. A
    suite outside the plan (rendered by hand, or in a sweep) has only its kind to keep to."""
    paired = plan["suites"].get(suite)
    if paired is not None and paired != benchmark:
        raise InputError(
            f"{path}: pipelines.{plan['family'][paired]}.suites.{suite} pairs suite '{suite}' with "
            f"benchmark '{paired}', not '{benchmark}' (cell.benchmark={benchmark})"
        )
    family = plan["family"].get(benchmark)
    if family is not None and family != kind:
        key = (
            f"pipelines.{family}.suites.{suite}" if paired is not None else f"pipelines.{family}.benchmarks.{benchmark}"
        )
        raise InputError(
            f"{path}: {key}: suite '{suite}' (conf/suite/{suite}.yaml) asks {kind} problems, and benchmark "
            f"'{benchmark}' is a {family} release: pair the suite with a {kind} benchmark, under "
            f"pipelines.{kind}"
        )


def _refuse_twice(names: list, where: str) -> None:
    twice = sorted({str(name) for name in names if names.count(name) > 1})
    if twice:
        raise InputError(f"{where}: {', '.join(repr(name) for name in twice)} named twice; each name once")


def suite_configs(plan: dict, benchmark: str) -> dict:
    """The config of each of the plan's suites of `benchmark`, composed as its render stage composes
    it (a benchmark's tables read them: which suites are one setting, which is a variant of which).
    Called from inside a stage, where Hydra is initialised."""
    from hydra import compose

    return {
        suite: compose(config_name="render", overrides=[f"suite={suite}", f"cell.benchmark={benchmark}"]).suite
        for suite, owner in plan["suites"].items()
        if owner == benchmark
    }


def check_family(plan: dict, benchmark: str, kind: str, path: str | Path) -> None:
    """A benchmark belongs in the pipeline of its kind, where its stages and their dvc.lock are."""
    family = plan["family"].get(benchmark)
    if family is not None and family != kind:
        raise InputError(
            f"{path}: pipelines.{family} lists '{benchmark}', a {kind} benchmark "
            f"(conf/benchmark/{benchmark}.yaml): move it under pipelines.{kind}"
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
