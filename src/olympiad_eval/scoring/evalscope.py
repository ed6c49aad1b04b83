"""What the evalscope protocols share (HiPhO's and MATH-Vision's, each reproducing evalscope 1.14.1's
own scoring): the response as evalscope grades it, and Math-Verify's strict comparison with
evalscope's settings. Math-Verify is the `evalscope` extra's; only these protocols import it."""

from __future__ import annotations

import re

_THINK = re.compile(r'<think(?:\s+signature="([^"]*)")?(?:\s+redacted="(true)")?\s*>(.*?)</think>', re.S)


def completion(response: str) -> str:
    """The response as evalscope grades it: its first `<think>...</think>` block cut out (the reasoning
    part its assistant message moves aside), the rest stripped; unchanged without a closed think block."""
    match = _THINK.search(response)
    return (response[: match.start()] + response[match.end() :]).strip() if match else response


def verify(gold, prediction) -> bool:
    """Math-Verify's strict comparison of two parsed answers with evalscope's settings (parser.py `_verify`)."""
    from math_verify import verify as math_verify

    return math_verify(
        [gold],
        [prediction],
        strict=True,
        float_rounding=6,
        numeric_precision=15,
        allow_set_relation_comp=False,
        timeout_seconds=None,
        raise_on_error=True,
    )
