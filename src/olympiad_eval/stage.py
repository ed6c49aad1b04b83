"""What every stage script in `stages/` shares: its cell's names, config checks, and errors that
end in one clear line. The one module of the package that knows Hydra; it lives in the package
(not beside the scripts) so that launchers which pickle a stage (submitit, ray) can import it."""

from __future__ import annotations

import functools
import logging
import sys
from collections import Counter
from collections.abc import Iterable

from hydra.core.hydra_config import HydraConfig
from omegaconf import OmegaConf

from olympiad_eval.llm import api_key
from olympiad_eval.records import InputError

log = logging.getLogger("olympiad_eval")


def chosen(group: str) -> str:
    """The config name picked for a group (`model=gpt4o` gives "gpt4o")."""
    return HydraConfig.get().runtime.choices[group]


def clear_errors(stage):
    """Errors a user can act on (bad input or config, a file that cannot be read or written) end
    the stage with their message and exit status 2; anything else is a bug and keeps its traceback."""

    @functools.wraps(stage)
    def run(cfg):
        try:
            return stage(cfg)
        except InputError as error:
            fail(str(error))
        except OSError as error:
            if error.filename is None:  # not about a file: a bug, or a failure the stage should have caught
                raise
            fail(f"{error.strerror or error}: {error.filename}" + (f" -> {error.filename2}" if error.filename2 else ""))

    return run


def fail(message: str, status: int = 2):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(status)


def most_common(reasons: Iterable[str], shown: int = 3) -> str:
    """The most frequent reasons (of failed requests or judgments), with their counts."""
    return "; ".join(f"{reason} ({count}x)" for reason, count in Counter(reasons).most_common(shown))


# ---------------------------------------------------------------- config checks
# Hydra takes `model.concurrency=abc` as the string "abc"; checked here, it stops the stage with
# the config and key before any work, instead of as a traceback deep in a client or a worker.

def number(cfg, key: str, where: str, *, integer: bool = False, minimum: float | None = None,
           above: float | None = None, maximum: float | None = None) -> None:
    """`cfg[key]`, where set (null or absent: the code's default), must be a number in range."""
    value = cfg.get(key)
    if value is None:
        return
    kinds = int if integer else (int, float)
    wrong_type = isinstance(value, bool) or not isinstance(value, kinds)
    if wrong_type or (minimum is not None and value < minimum) or (above is not None and value <= above) \
            or (maximum is not None and value > maximum):
        bounds = " and ".join(f"{sign} {limit:g}" for sign, limit in ((">=", minimum), (">", above), ("<=", maximum))
                              if limit is not None)
        wanted = ("an integer" if integer else "a number") + (f" {bounds}" if bounds else "")
        raise InputError(f"{where}: {key} must be {wanted}, got {value!r}")


def check_endpoint(cfg, where: str) -> None:
    """An OpenAI-compatible endpoint's settings, and its API key present in the environment."""
    base_url = cfg.get("base_url")
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise InputError(f"{where}: base_url must be an http(s) URL, got {base_url!r}")
    if not isinstance(cfg.get("model"), str) or not cfg.get("model"):
        raise InputError(f"{where}: model (the endpoint's model id) must be set, got {cfg.get('model')!r}")
    number(cfg, "concurrency", where, integer=True, minimum=1)
    number(cfg, "max_retries", where, integer=True, minimum=0)
    number(cfg, "timeout", where, above=0)
    number(cfg, "rpm", where, above=0)
    number(cfg, "max_image_bytes", where, integer=True, minimum=1)
    try:
        api_key(cfg.get("api_key_env"))
    except InputError as error:
        raise InputError(f"{where}: {error}") from None


def check_model(cfg, name: str) -> None:
    where = f"model '{name}' (conf/model/{name}.yaml or an override)"
    number(cfg, "samples", where, integer=True, minimum=1)
    if cfg.get("provider") == "openai":
        check_endpoint(cfg, where)


def check_judge(cfg, name: str) -> None:
    where = f"judge '{name}' (conf/judge/{name}.yaml or an override)"
    rel_tol = cfg.get("rel_tol")
    if rel_tol is not None and not OmegaConf.is_dict(rel_tol):
        raise InputError(f"{where}: rel_tol must map benchmark kinds to tolerances (hipho: 0.0, ...), got {rel_tol!r}")
    for kind in rel_tol or {}:
        number(rel_tol, kind, f"{where}: rel_tol", minimum=0)
    number(cfg, "workers", where, integer=True, minimum=1)
    number(cfg, "check_timeout", where, above=0)
    number(cfg, "max_reasks", where, integer=True, minimum=0)
    if cfg.get("kind") != "llm":
        return
    judges = cfg.get("judges")
    if not OmegaConf.is_dict(judges) or not judges:
        raise InputError(f"{where}: an llm judge needs at least one entry under `judges` (name: endpoint), got {judges!r}")
    for judge_name, endpoint in judges.items():
        if not OmegaConf.is_dict(endpoint):
            raise InputError(f"{where}: judges.{judge_name} must be an endpoint (base_url, model, ...), got {endpoint!r}")
        check_endpoint(endpoint, f"{where}: judges.{judge_name}")


def check_fraction(cfg, key: str, where: str) -> None:
    number(cfg, key, where, minimum=0, maximum=1)
