"""Render: turn a suite's problems into the prompts sent to models.

A suite is a benchmark + language + prompt variant. Output, per suite: `problems.jsonl` (the
problems the suite selects: what judges grade against), `prompts.jsonl` (what is sent) and
`suite.json` (which benchmark the suite belongs to, and the protocol settings its judge scores
by: the suite's `scoring`).
"""

from __future__ import annotations

import re
from pathlib import Path

from omegaconf import OmegaConf

from olympiad_eval.benchmarks import plugin, typed_suite
from olympiad_eval.records import (
    InputError, Problem, Prompt, atomic_dir, content_hash, read_jsonl, without_paths, write_json, write_jsonl,
)
from olympiad_eval.templates import fill, unknown_placeholders

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
            parts.append({"type": "text", "text": text[start:marker.end()]})
            parts.append(image(numbered[number]))
            placed.add(number)
            start = marker.end()
    if text[start:].strip() or not parts:
        parts.append({"type": "text", "text": text[start:]})
    parts += [image(figure) for number, figure in numbered.items() if number not in placed]
    return parts


def select(problems: list[Problem], suite) -> list[Problem]:
    language = suite.get("language")
    chosen = [p for p in problems if language in (None, "all", p.language)]
    subsets = suite.get("subsets")
    return [p for p in chosen if not subsets or p.subset in subsets]


def prompt_for(problem: Problem, suite_name: str, suite) -> Prompt:
    """One problem's prompt; `suite` is typed (`typed_suite`)."""
    bench = plugin(suite.kind)
    key, fields = bench.template_fields(problem, suite)
    templates = dict(suite.templates)
    if key not in templates:
        raise InputError(f"suite '{suite_name}': no template '{key}' (problem {problem.id}); templates: {sorted(templates)}")
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
        content = [part for part in content if part["type"] == "image"] + [part for part in content if part["type"] == "text"]
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
    problems = select(read_jsonl(problems_path, Problem), suite)
    if not problems:
        raise InputError(f"suite '{suite_name}': no problem of {problems_path} matches language={suite.get('language')}")
    prompts = [prompt_for(problem, suite_name, suite) for problem in problems]
    with atomic_dir(out_dir) as staging:
        write_jsonl(staging / "problems.jsonl", problems)
        write_jsonl(staging / "prompts.jsonl", prompts)
        write_json(staging / "suite.json", {
            "suite": suite_name, "benchmark": benchmark, "kind": suite.kind, "language": suite.get("language"),
            "templates": {key: template.get("name", key) for key, template in dict(suite.templates).items()},
            "scoring": OmegaConf.to_container(suite.scoring),  # how the judge scores this suite's responses
        })
    return prompts
