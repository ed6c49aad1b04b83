"""Benchmarks: one package each (`benchmarks/<kind>/`: its loading, prompts, scoring, tables and
report), each exposing a `Benchmark` (see `base`) as `BENCHMARK`.

The config of a benchmark or suite names it by its `kind`, which `plugin(kind)` resolves: a package
of this one (`hipho`), or any importable module by its dotted path (`mypackage.mybench`). The kit
benchmarks share sits beside them: `base` (the contract and its records), `suites` (typed suite
configs, provenance), `release` (reading a release's fields and figures) and `judging` (the fence
around a judged response).
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from omegaconf import DictConfig

from olympiad_eval.benchmarks.base import Benchmark
from olympiad_eval.benchmarks.suites import check_suite, suite_where
from olympiad_eval.core.config import typed_config
from olympiad_eval.core.records import InputError

_KIND = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def plugin(kind: str) -> Benchmark:
    """The benchmark a config's `kind` names: `hipho` is this package's `hipho`, a dotted name
    (`mypackage.mybench`) any importable module; either way its `BENCHMARK`."""
    name = str(kind)
    path = name if "." in name else f"{__name__}.{name}"
    if not _KIND.fullmatch(name):
        raise InputError(f"unknown benchmark kind {kind!r}; known kinds: {', '.join(known_kinds())}")
    try:
        module = importlib.import_module(path)
    except ModuleNotFoundError as error:
        if error.name is None or not path.startswith(error.name):
            raise  # the plugin exists but imports something missing: its own traceback says what
        raise InputError(f"unknown benchmark kind '{name}'; known kinds: {', '.join(known_kinds())}") from None
    bench = getattr(module, "BENCHMARK", None)
    if not isinstance(bench, Benchmark):
        raise InputError(
            f"benchmark kind '{name}' ({path}) is not a benchmark: it has no `BENCHMARK`, an instance of a "
            "subclass of olympiad_eval.benchmarks.base.Benchmark"
        )
    return bench


def known_kinds() -> list[str]:
    """The benchmarks of this package (the kit's modules beside them are not)."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if info.ispkg)


def typed_suite(name: str, suite) -> DictConfig:
    """The composed suite checked against its benchmark's `Suite` schema, with the schema's
    defaults filled in, as plain values. A key the schema lacks, a value not among an option's
    choices or of the wrong type, or a setting left unset ends in an `InputError` that names the
    suite's file and the key."""
    where = suite_where(name)
    if suite is None or suite.get("kind") is None:
        raise InputError(f"{where}: `kind` (its benchmark's kind) must be set")
    bench = plugin(suite.kind)
    typed = typed_config(bench.Suite, suite, where)
    check_suite(typed, bench, where)
    return typed
