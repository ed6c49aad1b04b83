"""Config values checked before any work, each ending in one line that names the config and key.
Shared by the stage support (`stage`) and the providers, which check their own settings
(`providers.Provider.check`): a module below both, so that neither imports the other for it.

Hydra takes `model.concurrency=abc` as the string "abc"; checked here, it stops the stage with
the config and key before any work, instead of as a traceback deep in a client or a worker."""

from __future__ import annotations

import math

from olympiad_eval.records import InputError


def number(cfg, key: str, where: str, *, integer: bool = False, minimum: float | None = None,
           above: float | None = None, maximum: float | None = None) -> None:
    """`cfg[key]`, where set (null or absent: the code's default), must be a finite number in range."""
    value = cfg.get(key)
    if value is None:
        return
    kinds = int if integer else (int, float)
    wrong_type = isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value)  # NaN passes any bound
    if wrong_type or (minimum is not None and value < minimum) or (above is not None and value <= above) \
            or (maximum is not None and value > maximum):
        bounds = " and ".join(f"{sign} {limit:g}" for sign, limit in ((">=", minimum), (">", above), ("<=", maximum))
                              if limit is not None)
        wanted = ("an integer" if integer else "a number") + (f" {bounds}" if bounds else "")
        raise InputError(f"{where}: {key} must be {wanted}, got {value!r}")
