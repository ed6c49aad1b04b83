"""Render: turn a suite's problems into the prompts sent to models.

A suite is a benchmark + language + prompt variant. Output, per suite: `problems.jsonl` (the
problems the suite selects: what judges grade against), `prompts.jsonl` (what is sent) and
`suite.json` (which benchmark the suite belongs to, the protocol settings its judge scores
by: the suite's `scoring`, and where the suite takes part of its benchmark, its `selection`).
"""

from __future__ import annotations

import difflib
import hashlib
import re
from pathlib import Path

from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin, typed_suite
from olympiad_eval.benchmarks.base import Benchmark, Filter
from olympiad_eval.benchmarks.suites import suite_where
from olympiad_eval.core.layout import SUITE_INFO
from olympiad_eval.core.records import (
    InputError,
    Problem,
    Prompt,
    Selection,
    SuiteInfo,
    atomic_dir,
    content_hash,
    natural_key,
    read_jsonl,
    without_paths,
    write_jsonl,
    write_suite_info,
)
from olympiad_eval.core.templates import fill, unknown_placeholders

_FIGURE_MARKER = re.compile(r"\[figure(\d+)\]|<image(\d+)>")


def place_figures(text: str, figures: list | dict, at_markers: bool) -> list[dict]:
    """Text and image parts: each figure right after its first marker (`[figure2]`, `<image2>`),
    the figures no marker names after the text. `figures` is a list, whose N-th figure is number N,
    or a dict from each figure's own number (where its benchmark knows it) to the figure."""
    image = lambda figure: {"type": "image", "sha256": figure.sha256, "path": figure.path, "mime": figure.mime}  # noqa: E731
    numbered = dict(figures) if isinstance(figures, dict) else dict(enumerate(figures, start=1))
    parts: list[dict] = []
    placed: set[int] = set()
    start = 0
    for marker in _FIGURE_MARKER.finditer(text) if at_markers else ():
        number = int(marker.group(1) or marker.group(2))
        if number in numbered and number not in placed:
            parts.append({"type": "text", "text": text[start : marker.end()]})
            parts.append(image(numbered[number]))
            placed.add(number)
            start = marker.end()
    if text[start:].strip() or not parts:
        parts.append({"type": "text", "text": text[start:]})
    parts += [image(figure) for number, figure in numbered.items() if number not in placed]
    return parts


# ---------------------------------------------------------------- taking part of a benchmark


def suite_filters(suite) -> list[Filter]:
    """The options of a typed suite that take part of its benchmark by what a problem is, in the
    order they apply: the generic ones, then its benchmark's own (its `filters`)."""
    return [
        Filter("subsets", suite.subsets, lambda problem: (problem.subset,)),
        Filter("ids", suite.ids, lambda problem: (problem.id,)),
        *plugin(suite.kind).filters(suite),
    ]


def in_language(problems: list[Problem], suite) -> list[Problem]:
    """The problems of the suite's language (null or `all`: every problem, in its own language)."""
    return [p for p in problems if suite.language in (None, "all", p.language)]


def select(problems: list[Problem], suite, name: str = "suite") -> list[Problem]:
    """The problems a typed suite asks, in their records' order (by id): those of its language,
    those that every filter it sets keeps (`suite_filters`), then at most `limit` of them
    (`limited`). A filter's value that keeps no problem of the suite's language, or filters that
    together keep none, end in an `InputError` naming the suite's file and the option."""
    pool = in_language(problems, suite)
    if not pool:
        return []  # render names the language that selects nothing
    chosen, given = pool, []
    for option in suite_filters(suite):
        if option.wanted:
            chosen = _kept(chosen, pool, option, name)
            given.append(option.key)
    if not chosen:
        raise InputError(f"{suite_where(name)}: {', '.join(given)}: each selects problems, but together none")
    return limited(chosen, suite.limit, suite.sample_seed)


def _kept(chosen: list[Problem], pool: list[Problem], option: Filter, name: str) -> list[Problem]:
    """The chosen problems that have one of the option's values; each value must be one that some
    problem of the suite's language has (a misspelt exam or a level the release lacks is refused)."""
    wanted = list(option.wanted)
    have = {value for problem in pool for value in option.values_of(problem)}
    missing = [value for value in wanted if value not in have]
    if missing:
        raise InputError(
            f"{suite_where(name)}: {option.key}: {', '.join(repr(v) for v in missing[:5])} "
            f"{'selects' if len(missing) == 1 else 'select'} no problem of the suite "
            f"({_nearest(missing[0], have, option.key)})"
        )
    keep = set(wanted)
    return [problem for problem in chosen if keep.intersection(option.values_of(problem))]


def _nearest(value, have: set, key: str) -> str:
    """The values the suite's problems have that look like a missing one, else the first of them."""
    names = sorted(map(str, have), key=natural_key)
    close = difflib.get_close_matches(str(value), names, n=3)
    if close:
        return f"closest: {', '.join(close)}"
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return f"its {key}: {shown}"


def limited(problems: list[Problem], limit: int | None, seed: int | None) -> list[Problem]:
    """At most `limit` problems, counted by id (one problem in two languages counts once): the
    first in id order (as problems.jsonl lists them), or with a `seed` those whose hash of seed and
    id ranks first. The draw is the same on every machine and Python version; a larger limit with
    the same seed keeps a smaller one's problems, so a sample can grow without paying again."""
    ids = list(dict.fromkeys(problem.id for problem in problems))
    if limit is None or limit >= len(ids):
        return problems
    ranked = ids if seed is None else sorted(ids, key=lambda pid: hashlib.sha256(f"{seed}/{pid}".encode()).digest())
    kept = set(ranked[:limit])
    return [problem for problem in problems if problem.id in kept]


def selection_options(suite) -> dict:
    """The options by which a typed suite takes part of its benchmark, as it gives them; empty for
    a suite that asks every problem of its language."""
    options = {option.key: list(option.wanted) for option in suite_filters(suite) if option.wanted}
    if suite.limit is not None:  # a seed draws only where there is a limit
        options.update({key: suite[key] for key in ("limit", "sample_seed") if suite[key] is not None})
    return options


def selection(problems: list[Problem], chosen: list[Problem], suite) -> Selection | None:
    """What a suite's selection options took (`select` gave `chosen` of `problems`); None for a
    suite that sets none."""
    options = selection_options(suite)
    if not options:
        return None
    count = lambda some: len({problem.id for problem in some})  # noqa: E731
    return Selection(options=options, selected=count(chosen), of=count(in_language(problems, suite)))


# ---------------------------------------------------------------- prompts


def prompt_for(problem: Problem, suite_name: str, suite, bench: Benchmark) -> Prompt:
    """One problem's prompt; `suite` is typed (`typed_suite`), `bench` its benchmark."""
    key, fields = bench.template_fields(problem, suite)
    templates = dict(suite.templates)
    if key not in templates:
        raise InputError(
            f"suite '{suite_name}': no template '{key}' (problem {problem.id}); templates: {sorted(templates)}"
        )
    unknown = unknown_placeholders(str(templates[key].text), fields)
    if unknown:
        raise InputError(
            f"suite '{suite_name}': template '{key}' ({templates[key].get('name', key)}) names "
            f"{', '.join('{' + name + '}' for name in unknown)}, which no field fills (problem {problem.id}); "
            f"the fields of a {suite.kind} problem: {', '.join('{' + name + '}' for name in sorted(fields))}"
        )
    text = fill(str(templates[key].text), fields)
    placement = suite.figure_placement
    content = place_figures(text, bench.figures(problem, suite), at_markers=placement == "markers")
    if placement == "before_text":
        content = [part for part in content if part["type"] == "image"] + [
            part for part in content if part["type"] == "text"
        ]
    messages = []
    if suite.system_prompt:
        messages.append({"role": "system", "content": suite.system_prompt})
    messages.append({"role": "user", "content": content})
    return Prompt(
        id=problem.id,
        suite=suite_name,
        language=problem.language,
        messages=tuple(messages),
        prompt_hash=content_hash(without_paths(messages)),
        reference=bench.reference(problem, suite),
    )


def render(suite_name: str, suite, benchmark: str, problems_path: str | Path, out_dir: str | Path) -> list[Prompt]:
    suite = typed_suite(suite_name, suite)
    released = read_jsonl(problems_path, Problem)
    problems = select(released, suite, suite_name)
    if not problems:
        raise InputError(
            f"suite '{suite_name}': no problem of {problems_path} matches language={suite.get('language')}"
        )
    bench = plugin(suite.kind)
    prompts = [prompt_for(problem, suite_name, suite, bench) for problem in problems]
    info = SuiteInfo(
        suite=suite_name,
        benchmark=benchmark,
        kind=suite.kind,
        language=suite.get("language"),
        templates={key: template.get("name", key) for key, template in dict(suite.templates).items()},
        scoring=OmegaConf.to_container(suite.scoring),  # how the judge scores this suite's responses
        selection=selection(released, problems, suite),
    )
    with atomic_dir(out_dir) as staging:
        write_jsonl(staging / "problems.jsonl", problems)
        write_jsonl(staging / "prompts.jsonl", prompts)
        write_suite_info(staging / SUITE_INFO, info)
    return prompts
