"""What every agreement bench shares: it proves agreement or fails. A bench that compares nothing
(its release, the third-party tool or the run files absent) exits non-zero unless told
`--allow-skip`, and every bench prints its agreement as its last line."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

SKIPPED = 3  # the exit status of a bench that compared nothing (1: it compared, and disagreed)


def allow_skip(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-skip",
        action="store_true",
        help="exit 0 where there is nothing to compare (release, tool or run files absent); else it fails",
    )


def skipped(reason: str, allowed: bool) -> NoReturn:
    """Nothing compared: say why, then the agreement line, and exit non-zero unless allowed."""
    print(f"skipped: {reason}")
    print("agreement: none (nothing compared)")
    sys.exit(0 if allowed else SKIPPED)


def agreement(agreed: int, compared: int, what: str) -> str:
    """The last line of a bench: `agreement: 3038 of 3040 rows (99.93%)`; nothing compared is a skip."""
    return f"agreement: {agreed} of {compared} {what} ({100 * agreed / compared:.2f}%)"
