"""What every stage script shares: its cell's names, and errors that end in one clear line."""

from __future__ import annotations

import functools
import logging
import sys

from hydra.core.hydra_config import HydraConfig

from olympiad_eval.records import InputError

log = logging.getLogger("olympiad_eval")

# Errors a user can act on (bad input or config, a file that cannot be read or written) end the
# stage with their message and exit status 2; anything else is a bug and keeps its traceback.
USER_ERRORS = (InputError, FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)


def chosen(group: str) -> str:
    """The config name picked for a group (`model=gpt4o` gives "gpt4o")."""
    return HydraConfig.get().runtime.choices[group]


def clear_errors(stage):
    @functools.wraps(stage)
    def run(cfg):
        try:
            return stage(cfg)
        except USER_ERRORS as error:
            print(f"error: {error}", file=sys.stderr)
            sys.exit(2)

    return run
