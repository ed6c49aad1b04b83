"""Prompt templates: the `{name}` placeholders that the suites' and the judges' templates fill,
told apart from the braces of their own LaTeX (`\\boxed{answer}`)."""

from __future__ import annotations

import re

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
# What a `{name}` that is the template's own LaTeX follows: a command (`\boxed{answer}`), an outer
# brace (`{{A}}`) or a super/subscript (`x^{n}`).
_LATEX_ARGUMENT = re.compile(r"(?:\\[A-Za-z]+\*?|[{^_])\s*$")


def fill(template: str, fields: dict[str, str]) -> str:
    """Replace the `{name}` placeholders of known fields; other braces (`\\boxed{answer}`) stay."""

    def replace(match: re.Match) -> str:
        return str(fields[match.group(1)]) if match.group(1) in fields else match.group(0)

    return _PLACEHOLDER.sub(replace, template)


def unknown_placeholders(template: str, fields: dict[str, str]) -> list[str]:
    """The `{name}`s that no field fills and that are not LaTeX: a typo (`{questoin}`) would
    otherwise reach the model as literal text."""
    return sorted(
        {
            match.group(1)
            for match in _PLACEHOLDER.finditer(template)
            if match.group(1) not in fields
            and not _LATEX_ARGUMENT.search(template[max(0, match.start() - 40) : match.start()])
        }
    )
