"""Config values checked before any work, each ending in one line that names the config and key.
Shared by the stage support (`stage`) and the providers, which check their own settings
(`providers.Provider.check`): a module below both, so that neither imports the other for it.

Hydra takes `model.concurrency=abc` as the string "abc"; checked here, it stops the stage with
the config and key before any work, instead of as a traceback deep in a client or a worker."""

from __future__ import annotations

import difflib
import math
from pathlib import Path

import platformdirs
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from olympiad_eval.core.records import InputError


def number(
    cfg,
    key: str,
    where: str,
    *,
    integer: bool = False,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
) -> None:
    """`cfg[key]`, where set (null or absent: the code's default), must be a finite number in range."""
    value = cfg.get(key)
    if value is None:
        return
    kinds = int if integer else (int, float)
    wrong_type = (
        isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value)
    )  # NaN passes any bound
    if (
        wrong_type
        or (minimum is not None and value < minimum)
        or (above is not None and value <= above)
        or (maximum is not None and value > maximum)
    ):
        bounds = " and ".join(
            f"{sign} {limit:g}" for sign, limit in ((">=", minimum), (">", above), ("<=", maximum)) if limit is not None
        )
        wanted = ("an integer" if integer else "a number") + (f" {bounds}" if bounds else "")
        raise InputError(f"{where}: {key} must be {wanted}, got {value!r}")


# The request settings of the OpenAI chat completions API that a model's `generation` (or a judge's
# `settings`) may give; `extra_body` (sent as it is, for the parameters an endpoint adds: top_k,
# min_p, chat_template_kwargs, ...), `extra_headers` and `extra_query` are the client's own.
REQUEST_SETTINGS = (
    "audio",
    "frequency_penalty",
    "logit_bias",
    "logprobs",
    "max_completion_tokens",
    "max_tokens",
    "metadata",
    "modalities",
    "parallel_tool_calls",
    "prediction",
    "presence_penalty",
    "prompt_cache_key",
    "reasoning_effort",
    "response_format",
    "safety_identifier",
    "seed",
    "service_tier",
    "stop",
    "store",
    "temperature",
    "tool_choice",
    "tools",
    "top_logprobs",
    "top_p",
    "user",
    "verbosity",
    "web_search_options",
    "extra_body",
    "extra_headers",
    "extra_query",
)
# Settings of the API that a request here must not take, and why.
NOT_REQUEST_SETTINGS = {
    "model": "the model id is the config's own `model`",
    "messages": "the messages are the suite's prompts",
    "stream": "replies are read whole, never streamed",
    "stream_options": "replies are read whole, never streamed",
    "n": "one choice of each reply is read: ask for repeated samples with `samples`",
}
# Settings that are no request setting but a config's own, given in the request settings by mistake.
_MISPLACED = ("timeout", "max_retries", "concurrency", "samples", "rpm")


def request_settings(cfg, key: str, where: str) -> None:
    """`cfg[key]`, where set: the settings sent with each request, a mapping of the chat API's
    settings (`REQUEST_SETTINGS`; a misspelt one is named with the closest, never sent); its
    `seed`, which each sample offsets, an integer. Parameters an endpoint adds go under
    `extra_body`, a mapping sent as it is."""
    settings = cfg.get(key)
    if settings is None:
        return
    if not OmegaConf.is_dict(settings):
        raise InputError(
            f"{where}: {key} must be a mapping of request settings (temperature: 0, max_tokens: 4096, ...), "
            f"got {settings!r}"
        )
    for name in settings:
        if name in NOT_REQUEST_SETTINGS:
            raise InputError(f"{where}: {key}.{name} is not sent: {NOT_REQUEST_SETTINGS[name]}")
        if name not in REQUEST_SETTINGS:
            hint = (
                f"; it is a setting of the config itself ({name}: ... beside {key})"
                if name in _MISPLACED
                else did_you_mean(str(name), REQUEST_SETTINGS)
            )
            raise InputError(
                f"{where}: {key}.{name} is not a request setting of the chat API{hint}; a parameter that "
                f"your endpoint adds goes under {key}.extra_body (sent as it is)"
            )
    for name in ("extra_body", "extra_headers", "extra_query"):
        if settings.get(name) is not None and not OmegaConf.is_dict(settings.get(name)):
            raise InputError(f"{where}: {key}.{name} must be a mapping, got {settings.get(name)!r}")
    number(settings, "seed", f"{where}: {key}", integer=True)


def did_you_mean(name: str, names, shown=None) -> str:
    """`; did you mean 'x'?` where one of `names` is close to `name`, else nothing; `shown`: how
    each of `names` is written in the message (`generation.temperature` for `temperature`)."""
    names = list(names)
    bare = [str(n).rpartition(".")[2] for n in names] if shown is not None else names
    close = difflib.get_close_matches(name, bare, n=1, cutoff=0.6)
    return f"; did you mean '{list(shown or names)[bare.index(close[0])]}'?" if close else ""


def known_keys(cfg, known, where: str, what: str, extra: str = "", nested: dict | None = None) -> None:
    """Every key of the mapping `cfg` is one of `known`: a misspelt key (`max_retry`) is refused,
    named with the closest, instead of being silently ignored. `what` says whose keys they are;
    `nested` the keys of a mapping under one of them (`generation`: the request settings), for a
    key written a level too high (`temprature` beside `generation`)."""
    below = [f"{parent}.{key}" for parent, keys in (nested or {}).items() for key in keys]
    for name in cfg:
        if name not in known:
            hint = did_you_mean(str(name), known) or did_you_mean(str(name), below, below)
            raise InputError(
                f"{where}: '{name}' is not a setting of {what}{hint} (its settings: {', '.join(known)}){extra}"
            )


PRICES = ("input", "output")


def check_prices(cfg, where: str) -> None:
    """`prices`, where set: USD per million input and output tokens (checked before a request is
    sent: the cost is added up after the replies, when a bad price would end the stage unpaid for)."""
    prices = cfg.get("prices")
    if prices is None:
        return
    if not OmegaConf.is_dict(prices):
        raise InputError(
            f"{where}: prices must map input and output to USD per million tokens (input: 2.5, "
            f"output: 10.0), got {prices!r}"
        )
    for key in prices:
        if key not in PRICES:
            raise InputError(f"{where}: prices: '{key}' is not one of {', '.join(PRICES)}")
        if prices[key] is None:
            raise InputError(f"{where}: prices: {key} must be a number >= 0, got None")
        number(prices, key, f"{where}: prices", minimum=0)


def check_costs(cfg, where: str) -> None:
    """What a model's or judge endpoint's cost is reckoned from: its `prices`, and the length of a
    reply that the cost plan assumes (`assumed_output_tokens`)."""
    check_prices(cfg, where)
    number(cfg, "assumed_output_tokens", where, integer=True, minimum=0)


def check_fraction(cfg, key: str, where: str) -> None:
    number(cfg, key, where, minimum=0, maximum=1)


def typed_config(schema: type, cfg, where: str):
    """`cfg` checked against the dataclass `schema` (Hydra's structured configs), the schema's
    defaults filled in, as plain values: a key the schema lacks, a value outside an enum's choices
    or of the wrong type, or a setting left unset ends in one line naming `where` and the key."""
    typed = OmegaConf.structured(schema)
    for key in cfg:  # key by key: a value that cannot merge at all (`hint: true`) is named by its key
        try:
            typed = OmegaConf.merge(typed, {key: cfg[key]})
        except OmegaConfBaseException as error:
            said = str(error.msg).splitlines()[0].removeprefix("Merge error: ")
            raise InputError(f"{where}: {error.full_key or key}: {said}") from None
    missing = sorted(OmegaConf.missing_keys(typed))
    if missing:
        raise InputError(f"{where}: {', '.join(missing)} must be set (it has no default)")
    return OmegaConf.create(OmegaConf.to_container(typed, enum_to_str=True))


# ---------------------------------------------------------------- the configs' resolvers


def user_cache(name: str) -> str:
    """`name` in this user's cache folder for olympiad-eval: `$XDG_CACHE_HOME/olympiad-eval` (or
    `~/.cache/olympiad-eval`) on Linux, `~/Library/Caches/olympiad-eval` on macOS,
    `%LOCALAPPDATA%\\olympiad-eval\\Cache` on Windows. One folder for every workspace of the user on
    the machine (clones, git worktrees, and the copies that `dvc exp run --queue` or `--temp` runs in),
    so that no sweep pays twice for a reply. conf/common.yaml names it `${olympiad_eval.user_cache:...}`."""
    return str(Path(platformdirs.user_cache_dir("olympiad-eval", appauthor=False)) / name)


# Registered on import: every stage script (through `stages.runner`), every process a launcher starts
# for a sweep's job, and every module that composes a config import this module before Hydra composes one.
OmegaConf.register_new_resolver("olympiad_eval.user_cache", user_cache, replace=True)
