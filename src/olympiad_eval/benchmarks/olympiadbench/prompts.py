"""OlympiadBench's prompts: the official instruction per answer type, in its language, and the reference answer."""

from __future__ import annotations

from pathlib import Path

from olympiad_eval.benchmarks.olympiadbench.loading import MARKER
from olympiad_eval.benchmarks.olympiadbench.scoring import gold_text
from olympiad_eval.core.records import InputError, Problem
from olympiad_eval.core.templates import fill


def template_key(problem: Problem) -> str:
    kind = "theorem_proving" if problem.attributes["type"] == "TP" else "open_ended"
    return f"{kind}_{problem.language}"


def template_fields(problem: Problem, suite) -> tuple[str, dict]:
    """The official instruction (`Evaluator.make_prompt`), filled from the template's own wording
    (answer types, multiple answers, units: `conf/prompt/olympiadbench_*.yaml`), and the problem:
    physics problems with their context first, maths problems without it, as the official code
    does. `<img_N>` markers become `<imageK>` (K: the figure's place in `figures`), where render
    puts each figure."""
    key = template_key(problem)
    template = dict(suite.templates).get(key)
    if template is None:
        return key, {}  # render names the missing template
    fields = {"subject": template["subjects"][problem.attributes["subject"]], "question": _content(problem)}
    if problem.attributes["type"] == "OE":
        fields.update(_answer_wording(problem, template))
    return key, fields


def _content(problem: Problem) -> str:
    text = problem.question
    if problem.attributes["subject"] == "physics" and problem.context:
        text = problem.context + "\n" + problem.question
    numbers = {Path(figure.name).stem: index for index, figure in enumerate(problem.figures, start=1)}
    return MARKER.sub(lambda m: f"<image{numbers[f'img_{m[1]}']}>" if f"img_{m[1]}" in numbers else m[0], text)


def _answer_wording(problem: Problem, template) -> dict:
    """`answer_type_text`, `answer_format` and `unit_text`, as `make_prompt` composes them."""
    multiple = bool(problem.attributes["is_multiple_answer"])
    answer_format = template["multiple_answer_format" if multiple else "answer_format"]
    unit_text = ""
    if problem.answers[0].unit:
        answer_format += template["unit_format"]
        unit_text = template["unit_text"]
    try:
        types = answer_type_text(problem.attributes["answer_type"], multiple, template)
    except ValueError as error:  # the official code stops there too (`exit`)
        raise InputError(f"{problem.origin}: record {problem.id}: field 'answer_type': {error}") from None
    return {"answer_type_text": types, "answer_format": answer_format, "unit_text": unit_text}


def answer_type_text(answer_type: str, multiple: bool, template) -> str:
    """`get_answer_type_text` of the official code: nothing for tuples and free-form answers (the
    word 'tuple' misleads, it says); else the single type, or the multiple answers' types."""
    if "Need_human_evaluate" in answer_type or "Tuple" in answer_type:
        return ""
    if not multiple:
        return fill(template["one_answer"], {"type": _type_name(answer_type, template)})
    names = [_type_name(part, template) for part in answer_type.split(",")]
    if len(set(names)) == 1:
        return fill(template["multiple_answers_same_type"], {"type": names[0]})
    return fill(template["multiple_answers_in_order"], {"types": template["types_joiner"].join(names)})


def _type_name(answer_type: str, template) -> str:
    """The first of the official types found in the text (so `Expression,Numerical` of a problem
    with one answer reads as numerical, as the official loop does)."""
    for name, wording in template["answer_types"].items():
        if name in answer_type:
            return wording
    raise ValueError(f"'{answer_type}' is none of {', '.join(template['answer_types'])}: the prompt cannot name it")


def figures(problem: Problem, suite) -> list:
    return list(problem.figures)


def reference(problem: Problem, suite) -> str:
    """The gold answer ended as the prompt asks: "So the final answer is \\boxed{...}(unit)." (or
    its Chinese); for a proof, the official solution."""
    if problem.attributes["type"] == "TP" or not problem.answers[0].value.strip():
        return problem.solution
    unit = f"({problem.answers[0].unit})" if problem.answers[0].unit else ""
    if problem.language == "zh":
        return f"所以最终答案是\\boxed{{{gold_text(problem)}}}{unit}。"
    return f"So the final answer is \\boxed{{{gold_text(problem)}}}{unit}."
