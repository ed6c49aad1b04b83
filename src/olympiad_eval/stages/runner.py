"""What every stage script in `stages/` shares: its cell's names, the plan, and errors that end in
one clear line (each stage's own config checks live with its module: `generate.check_model`,
`judge.check_judge`, `core.config`). The one module of the package that knows Hydra; it lives in the package
(not beside the scripts) so that launchers which pickle a stage (submitit, ray) can import it."""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import inspect
import logging
import os
import sys
from pathlib import Path

from hydra._internal.hydra import Hydra
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import ValueType
from hydra.errors import HydraException
from hydra.types import RunMode

from olympiad_eval.core import config  # noqa: F401 (registers the configs' resolvers)
from olympiad_eval.core.plan import check_config_name
from olympiad_eval.core.records import WRITE_ERRORS, InputError

log = logging.getLogger("olympiad_eval")


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
    deep inside the stage. And Hydra composes the config once, not twice (`mode_from_command_line`)."""
    root = Path(inspect.unwrap(main).__code__.co_filename).resolve().parents[1]  # stages/<stage>.py is in the root
    try:
        check_run_from(root)
        check_config_names(root / "conf", sys.argv[1:])
    except InputError as error:
        fail(str(error))
    gc.freeze()
    with mode_from_command_line():
        main()
    if _finished != [True]:
        return
    atexit._run_exitfuncs()  # what the exit would run first: a loader's temporary folder, logging's flush
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@contextlib.contextmanager
def mode_from_command_line():
    """Hydra's main composes the whole config a first time only to read `hydra.mode` from it
    (`Hydra.get_mode`), then again to run: about 0.1 s of a render stage's 0.95 s. No config of
    conf/ sets `hydra.mode` (tests/test_stage.py checks it), so the mode is what the command line
    says, as Hydra takes it when no config sets one: a sweep with `-m`, else one run. Hydra's
    answer `None` means exactly that."""
    real = Hydra.get_mode
    Hydra.get_mode = lambda self, config_name, overrides: None
    try:
        yield
    finally:
        Hydra.get_mode = real


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
    is a name (`layout.NAME`: it becomes a path) and a file of its group in conf/; if not, the
    closest name and all the group's names are shown."""
    for group, name in _chosen_names(overrides):
        check_config_name(conf, group, name, f"{group}={name}, from params.yaml or the command line")


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


# ---------------------------------------------------------------- the plan


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
