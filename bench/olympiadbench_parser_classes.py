"""Adversarial answer/gold pairs for OlympiadBench's official scorer, in named classes, one per reading
of sympy 1.12's LaTeX parser that decides verdicts (`sympy/parsing/latex/LaTeX.g4` and
`_parse_latex_antlr.py`, antlr 4.11 runtime), each written from what the parser does: a unicode minus,
logarithm bases, a subscript after a superscript, a letter applied to parentheses, grouped digits, e
and E as letters, `x` between numbers, unbraced exponents and fraction arguments, dots, differentials,
primes, unknown commands, subscript names, where the parser stops, float pi, colons and ampersands.
`bench/olympiadbench_official_agreement.py` scores them by the official code and by ours, class by
class.

Deterministic: every class draws from the release's auto-scorable golds in file order with a
seeded `random.Random`, at most `per_class` pairs each (synthetic pairs, where the release has too few
golds of a kind, have ids `synthetic-N`). A pair is read as `inference/judge.py` reads a response:
`extract_answer` of "So the final answer is \\boxed{...}." (or the Chinese phrase).
"""

from __future__ import annotations

import json
import random
import re

from olympiad_eval.benchmarks.olympiadbench import official
from olympiad_eval.scoring.answers import boxes

PHRASES = {"en": "So the final answer is ", "zh": "所以最终答案是"}  # the official prompts' closing phrases


def language(problem: dict) -> str:
    return "zh" if problem["classification"].startswith(("Chinese", "Gaokao")) else "en"


def boxed(text: str, lang: str = "en") -> str:
    return f"{PHRASES[lang]}\\boxed{{{text}}}" + ("。" if lang == "zh" else ".")


def bare(gold: str) -> str:
    return gold.replace("$", "").strip()


def make_pair(kind: str, problem: dict, answer_text: str, gold: str | None = None) -> dict:
    """A model-style response with `answer_text` boxed, read back as inference/judge.py reads it."""
    lang = language(problem)
    answer = official.extract_answer(boxed(answer_text, lang), lang)
    tolerance = official.precision(problem["error"], problem["final_answer"], problem["answer_type"])
    gold = gold if gold is not None else official.gold_answer(problem["final_answer"])
    return {"set": kind, "id": problem["id"], "answer": answer, "gold": gold, "precision": tolerance}


SYNTHETIC = {
    "id": "synthetic",
    "error": None,
    "final_answer": [""],
    "answer_type": "Expression",
    "classification": "synthetic",
}


def synthetic(kind: str, gold: str, answer: str, precision: float = 1e-8, index: int = 0) -> dict:
    return {
        "set": kind,
        "id": f"synthetic-{index}",
        "answer": official.extract_answer(boxed(answer)),
        "gold": gold,
        "precision": precision,
    }


# ------------------------------------------------------------------------------------------ classes
# Each class: (description, function(problems, rng) -> list[pair]). The description says the reading
# of sympy 1.12's parser the class probes.

CLASSES: dict[str, tuple[str, object]] = {}


def klass(name: str, reading: str):
    def register(function):
        CLASSES[name] = (reading, function)
        return function

    return register


EXPONENT = re.compile(r"\^\{")  # a brace group after `^`, read by the project's one brace matcher


def golds_matching(problems, pattern, limit=None):
    regex = re.compile(pattern)
    found = [(p, bare(official.gold_answer(p["final_answer"]))) for p in problems]
    return [(p, g) for p, g in found if regex.search(g)][:limit]


def sample(rng, items, n):
    items = list(items)
    return items if len(items) <= n else [items[i] for i in sorted(rng.sample(range(len(items)), n))]


@klass("unicode-minus", "the lexer has no token for U+2212 (−): the text has no value (and float() refuses it)")
def _unicode_minus(problems, rng, n):
    chosen = sample(rng, golds_matching(problems, r"-"), n)
    return [make_pair("unicode-minus", p, g.replace("-", "\u2212")) for p, g in chosen]


UNICODE = [  # (LaTeX in a gold, its Unicode form a model may write)
    (r"\pi", "π"),
    (r"\times", "×"),
    (r"\cdot", "·"),
    (r"\alpha", "α"),
    (r"\theta", "θ"),
    (r"\omega", "ω"),
    (r"\mu", "μ"),
    (r"\lambda", "λ"),
    (r"\rho", "ρ"),
    (r"\infty", "∞"),
    (r"\leq", "≤"),
    (r"\geq", "≥"),
    (r"\sqrt", "√"),
    ("^{2}", "²"),
    ("^{3}", "³"),
    (r"\Delta", "Δ"),
    (r"\varepsilon", "ε"),
    (r"\sigma", "σ"),
    (r"\circ", "°"),
    (r"\pm", "±"),
]


@klass(
    "unicode-symbols",
    "every non-ASCII character (π × · α ∞ ≤ √ ² ° NBSP thin space ...) is refused by the lexer once it is reached",
)
def _unicode_symbols(problems, rng, n):
    pairs = []
    for latex, char in UNICODE:
        chosen = sample(
            rng, golds_matching(problems, re.escape(latex) + (r"(?![A-Za-z])" if latex[-1].isalpha() else "")), 4
        )
        pairs += [make_pair("unicode-symbols", p, g.replace(latex + " ", char).replace(latex, char)) for p, g in chosen]
    spaced = sample(rng, golds_matching(problems, r"\S \S"), 12)
    for index, (p, g) in enumerate(spaced):  # a non-breaking or thin space where the gold has a space
        pairs.append(make_pair("unicode-symbols", p, g.replace(" ", "\u00a0" if index % 2 else "\u2009", 1)))
    numbers = sample(rng, golds_matching(problems, r"^\d+(\.\d+)?$"), 6)
    for p, g in numbers:  # full-width digits, a degree sign after a number
        pairs.append(make_pair("unicode-symbols", p, g + "°"))
        pairs.append(make_pair("unicode-symbols", p, g.translate({ord(c): ord(c) + 0xFEE0 for c in "0123456789"})))
    return pairs[: n * 2]


@klass("log-bases", r"`\log x` is the natural log (base E), `\lg x` base 10, `\log_b x` / `\ln_b x` base b")
def _log_bases(problems, rng, n):
    pairs = []
    for p, g in golds_matching(problems, r"\\ln(?![a-z])"):
        pairs.append(make_pair("log-bases", p, g.replace("\\ln", "\\log")))
        pairs.append(make_pair("log-bases", p, g.replace("\\ln", "\\lg")))
    for p, g in golds_matching(problems, r"\\log(?![a-z])(?!\s*_)"):
        pairs.append(make_pair("log-bases", p, re.sub(r"\\log(?![a-z])(?!\s*_)", r"\\ln", g)))
        pairs.append(make_pair("log-bases", p, re.sub(r"\\log(?![a-z])(?!\s*_)", r"\\log_{10}", g)))
    for p, g in golds_matching(problems, r"\\log\s*_\s*\{?2\}?"):
        pairs.append(make_pair("log-bases", p, re.sub(r"\\log\s*_\s*\{?2\}?", r"\\lg_{2}", g)))
    cases = [
        ("2", r"\log 100"),
        ("2", r"\lg 100"),
        ("2", r"\log_{10} 100"),
        ("4.60517", r"\log 100"),
        ("3", r"\log_2 8"),
        ("3", r"\log_{2}{8}"),
        (r"\ln 2", r"\log 2"),
        (r"\log_{2} 3", r"\frac{\ln 3}{\ln 2}"),
        ("0.30103", r"\lg 2"),
        ("0.30103", r"\log 2"),
        ("0.69315", r"\log 2"),
        ("1", r"\log e"),
        ("1", r"\ln e"),
        (r"x\ln 2", r"x\log(2)"),
        (r"\log_{3} x", r"\frac{\log x}{\log 3}"),
        ("2", r"\ln_{10} 100"),
    ]
    for index, (gold, answer) in enumerate(cases):
        pairs.append(synthetic("log-bases", gold, answer, 1e-4 if "." in gold else 1e-8, index))
    return pairs[: n * 2]


_SYMBOL = r"(?:[A-Za-z]|\\[A-Za-z]+)"
_SCRIPT = r"(?:\{[^{}]*\}|[A-Za-z0-9])"


@klass(
    "sup-sub-order",
    "`x^{b}_{a}`: a subscript after a superscript is parsed and dropped (x**b); `x_{a}^{b}` is x_{a}**b",
)
def _sup_sub_order(problems, rng, n):
    pairs = []
    sub_sup = re.compile(rf"({_SYMBOL})_({_SCRIPT})\^({_SCRIPT})")
    sup_sub = re.compile(rf"({_SYMBOL})\^({_SCRIPT})_({_SCRIPT})")
    for p, g in sample(rng, golds_matching(problems, sub_sup.pattern), n // 2):
        pairs.append(make_pair("sup-sub-order", p, sub_sup.sub(r"\1^\3_\2", g, count=1)))
    for p, g in sample(rng, golds_matching(problems, sup_sub.pattern), n // 2):
        pairs.append(make_pair("sup-sub-order", p, sup_sub.sub(r"\1_\3^\2", g, count=1)))
    return pairs


@klass(
    "function-call",
    "a letter, any `\\command` that is not a known function (Greek, \\ell, \\pi, \\infty, \\Delta), with an optional subscript "
    "and primes, directly before `(` is an applied function f(args) (`mg(h)` is m*g(h), `2\\pi(R+r)` 2*pi(R+r)); after a number, `)`, `}` or a power it multiplies",
)
def _function_call(problems, rng, n):
    pairs = []
    call = re.compile(rf"(?<![A-Za-z\\])({_SYMBOL}(?:_{_SCRIPT})?'*)(\s*)\((?!\s*\))")
    functions = re.compile(
        r"\\(?:sin|cos|tan|cot|sec|csc|ln|log|lg|exp|arcsin|arccos|arctan|sinh|cosh|tanh|sqrt|frac|left|right|lim|sum|prod|int)$"
    )
    usable = [
        (p, g)
        for p, g in golds_matching(problems, call.pattern)
        if any(not functions.match(m.group(1)) for m in call.finditer(g))
    ]
    for p, g in sample(rng, usable, n // 2):
        match = next(m for m in call.finditer(g) if not functions.match(m.group(1)))
        pairs.append(make_pair("function-call", p, g[: match.end(1)] + " \\cdot " + g[match.end(1) :]))
    # the other way: a product written with \cdot or * before a parenthesis, given without it
    dotted = re.compile(rf"({_SYMBOL}(?:_{_SCRIPT})?)\s*(?:\\cdot|\*)\s*\(")
    for p, g in golds_matching(problems, dotted.pattern)[:10]:
        pairs.append(make_pair("function-call", p, dotted.sub(r"\1(", g, count=1)))
    # the same product with its parenthesis written after the letter, from golds that multiply a
    # letter by a parenthesis after a number (`2(x+1)` becomes `(x+1)2`-free `x(...)` forms)
    numbered = re.compile(r"(\d)\s*\(([^()]*)\)\s*([A-Za-z])(?![A-Za-z])")
    for p, g in sample(rng, golds_matching(problems, numbered.pattern), n // 4):
        pairs.append(make_pair("function-call", p, numbered.sub(r"\1\3(\2)", g, count=1)))
    # powers, functions with unbraced arguments and subscripted Greek letters before parentheses
    cases = [
        (r"x^{2} y", r"x^2(y)"),
        (r"\cos(\theta (1+x))", r"\cos\theta(1+x)"),
        (r"\cos\theta \cdot (1+x)", r"\cos\theta(1+x)"),
        (r"\alpha_{1} t", r"\alpha_1(t)"),
        (r"2 \pi R+2\pi r", r"2\pi(R+r)"),
        (r"2 \pi (R+r)", r"2\pi\cdot(R+r)"),
        (r"m g h+m g", r"mg(h+1)"),
        (r"k M+k m", r"k(M+m)"),
        (r"\ell a+\ell b", r"\ell(a+b)"),
        (r"v' t", r"v'(t)"),
        (r"\frac{g}{2}(t+1)", r"\frac{g(t+1)}{2}"),
        (r"E_{0} (1+x)", r"E_0(1+x)"),
        (r"\Delta (x+1)", r"\Delta x+\Delta"),
    ]
    for index, (gold, answer) in enumerate(cases):
        pairs.append(synthetic("function-call", gold, answer, index=index))
    return pairs


SEPARATORS = [" ", "\\,", "{,}", "\\;", "\\!", "~", "\\ ", "\\:", "\\quad ", ","]


def group_digits(number: str, separator: str) -> str:
    whole, _, fraction = number.partition(".")
    sign = "-" if whole.startswith("-") else ""
    whole = whole.lstrip("-")
    groups = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    return sign + separator.join(groups) + ("." + fraction if fraction else "")


@klass(
    "digit-grouping",
    "a number is DIGIT+ tokens with whitespace and \\, \\: \\; \\! \\quad skipped between them: `20 000` is 20000, `1 2` is 12;"
    " `{,}` makes a group that fails; `,` outside brackets is the judge's answer separator",
)
def _digit_grouping(problems, rng, n):
    pairs = []
    numbers = golds_matching(problems, r"^-?\d{4,}(\.\d+)?$")
    for p, g in sample(rng, numbers, max(1, n // len(SEPARATORS))):
        for separator in SEPARATORS:
            pairs.append(make_pair("digit-grouping", p, group_digits(g, separator)))
    for p, g in golds_matching(problems, r"\d \d"):  # golds that group digits themselves: the plain form
        pairs.append(make_pair("digit-grouping", p, re.sub(r"(?<=\d) (?=\d)", "", g)))
    for p, g in sample(rng, golds_matching(problems, r"^\d\.\d+ ?\\times ?10\^\{-?\d+\}$"), 6):
        mantissa, rest = re.match(r"^(\d\.\d+) ?(\\times.*)$", g).groups()
        pairs.append(make_pair("digit-grouping", p, mantissa.replace(".", ". ") + " " + rest))
    return pairs


@klass(
    "e-letters",
    "e and E are plain symbols (LETTER) in any position, also next to other letters (`qE`, `eB`, `2e B`, `Ee`), in exponents (`e^{x}`) and in `1e5` (1*e*5); only \\exp is Euler's function",
)
def _e_letters(problems, rng, n):
    pairs = []
    with_e = golds_matching(problems, r"(?<![A-Za-z\\])[eE](?![A-Za-z])")
    for p, g in sample(rng, with_e, n // 2):
        match = re.search(r"(?<![A-Za-z\\])([eE])(?![A-Za-z])", g)
        before, letter, after = g[: match.start()], match.group(1), g[match.end() :]
        if before.endswith(" ") or after.startswith(" "):  # the spacing around it removed
            pairs.append(make_pair("e-letters", p, before.rstrip() + letter + after.lstrip()))
        else:  # a space put beside it
            pairs.append(make_pair("e-letters", p, before + " " + letter + " " + after))
        exponent = boxes(after, EXPONENT)
        if exponent and exponent[0].start == 0 and exponent[0].closed:
            group = exponent[0]
            pairs.append(make_pair("e-letters", p, before + "\\exp(" + group.inside + ")" + after[group.end :]))
    adjacent = re.compile(r"([A-Za-z])\s*([eE])(?![A-Za-z^_])|(?<![A-Za-z\\])([eE])\s*([A-Za-z])")
    for p, g in sample(rng, golds_matching(problems, adjacent.pattern), n // 2):  # factors swapped around e/E
        pairs.append(
            make_pair(
                "e-letters",
                p,
                adjacent.sub(
                    lambda m: (m.group(2) + m.group(1)) if m.group(1) else (m.group(4) + m.group(3)), g, count=1
                ),
            )
        )
    cases = [
        ("q E", "qE"),
        ("q E", "Eq"),
        ("2 e B", "2e B"),
        ("2 e B", "2Be"),
        ("e B", "eB"),
        ("E e", "Ee"),
        (r"\frac{qE}{m}", r"\frac{E q}{m}"),
        ("e^{2}", "7.389"),
        ("100000", "1e5"),
        ("100000", "1 \\times 10^{5}"),
        ("E_{k}", "E_k"),
        ("m_{e}c^{2}", "m_e c^2"),
        ("e E", "eE"),
        ("2 e", "2e"),
        ("3eV", "3 e V"),
    ]
    for index, (gold, answer) in enumerate(cases):
        pairs.append(synthetic("e-letters", gold, answer, index=index))
    return pairs


@klass(
    "x-as-times",
    "a postfix that is the letter `x` between two postfixes without symbols is skipped: `3 x 10^{8}` is 3*10**8, `2x3` is 2*3",
)
def _x_as_times(problems, rng, n):
    pairs = []
    for p, g in sample(rng, golds_matching(problems, r"\\times\s*10\^"), n // 2):
        pairs.append(make_pair("x-as-times", p, re.sub(r"\s*\\times\s*", " x ", g, count=1)))
        pairs.append(make_pair("x-as-times", p, re.sub(r"\s*\\times\s*", "x", g, count=1)))
    cases = [
        ("6", "2x3"),
        ("6", "2 x 3"),
        ("2x", "2x"),
        ("6x", "2x3x"),
        ("3 \\times 10^{8}", "3x10^{8}"),
        ("24", "2x3x4"),
    ]
    for index, (gold, answer) in enumerate(cases):
        pairs.append(synthetic("x-as-times", gold, answer, index=index))
    return pairs


@klass(
    "unbraced-exponent",
    "after `^` only an atom or `{expr}` continues the power: `10^-3` and `2^(x+1)` stop the parser after the base"
    " (10, 2); `x^12` is x**12 (a number is all its digits), `x^2n` is x**2*n, `x^\\frac{1}{2}` is x**(1/2)",
)
def _unbraced_exponent(problems, rng, n):
    pairs = []
    for p, g in sample(rng, golds_matching(problems, r"\^\{-\d+\}"), n // 3):
        pairs.append(make_pair("unbraced-exponent", p, re.sub(r"\^\{(-\d+)\}", r"^\1", g, count=1)))
    for p, g in sample(rng, golds_matching(problems, r"\^\{\d\d+\}"), n // 6):
        pairs.append(make_pair("unbraced-exponent", p, re.sub(r"\^\{(\d\d+)\}", r"^\1", g, count=1)))
    for p, g in sample(rng, golds_matching(problems, r"\^\{\d+ ?[a-z]\}"), n // 6):
        pairs.append(make_pair("unbraced-exponent", p, re.sub(r"\^\{(\d+ ?[a-z])\}", r"^\1", g, count=1)))
    for p, g in sample(rng, golds_matching(problems, r"\^\{[^{}]*[-+][^{}]*\}"), n // 3):
        pairs.append(make_pair("unbraced-exponent", p, re.sub(r"\^\{([^{}]*[-+][^{}]*)\}", r"^(\1)", g, count=1)))
    cases = [
        ("0.001", "10^-3"),
        ("10^{-3}", "10^-3"),
        ("2^{x+1}", "2^(x+1)"),
        ("4096", "2^12"),
        ("x^{12}", "x^12"),
        ("x^{\\frac{1}{2}}", "x^\\frac{1}{2}"),
        ("e^{-x}", "e^-x"),
        ("2^{2 n}", "2^2n"),
    ]
    for index, (gold, answer) in enumerate(cases):
        pairs.append(synthetic("unbraced-exponent", gold, answer, 1e-8, index))
    return pairs


@klass(
    "frac-digits",
    "each argument of \\frac is a single DIGIT or `{expr}`: `\\frac12` is 1/2, `\\frac123` is (1/2)*3, `\\frac{12}5` 12/5, `\\frac1x` fails",
)
def _frac_digits(problems, rng, n):
    pairs = []
    fraction = re.compile(r"\\frac\{(\d+)\}\{(\d+)\}")
    for p, g in sample(rng, golds_matching(problems, fraction.pattern), n // 2):
        match = fraction.search(g)
        upper, lower = match.groups()
        rewrite = f"\\frac{upper}{lower}" if len(upper) == 1 else f"\\frac{{{upper}}}{lower}"
        pairs.append(make_pair("frac-digits", p, g[: match.start()] + rewrite + g[match.end() :]))
        if len(upper) == 1 and len(lower) == 1:
            pairs.append(make_pair("frac-digits", p, g[: match.start()] + f"\\frac {upper} {lower}" + g[match.end() :]))
    letters = re.compile(r"\\frac\{(\d)\}\{([a-zA-Z])\}")
    for p, g in sample(rng, golds_matching(problems, letters.pattern), n // 4):
        pairs.append(make_pair("frac-digits", p, letters.sub(r"\\frac\1\2", g, count=1)))
    cases = [
        ("\\frac{1}{2} \\cdot 3", "\\frac123"),
        ("\\frac{12}{5}", "\\frac{12}5"),
        ("\\frac{12}{5}", "\\frac125"),
        ("\\frac{1}{x}", "\\frac1x"),
        ("\\frac{3}{2}", "\\dfrac32"),
        ("\\frac{3}{2}", "\\tfrac 3 2"),
    ]
    for index, (gold, answer) in enumerate(cases):
        pairs.append(synthetic("frac-digits", gold, answer, index=index))
    return pairs


@klass(
    "decimal-dots",
    "`.` is only a number's decimal point: `3 . 14` is 3.14 (whitespace skipped), `.5` and `3.` (a dot after a number, not at the text's end) fail",
)
def _decimal_dots(problems, rng, n):
    pairs = []
    for p, g in sample(rng, golds_matching(problems, r"^\d+\.\d+$"), n // 3):
        pairs.append(make_pair("decimal-dots", p, g.replace(".", " . ")))
        if g.startswith("0."):
            pairs.append(make_pair("decimal-dots", p, g[1:]))
    for p, g in sample(rng, golds_matching(problems, r"[a-zA-Z}]"), n // 4):
        pairs.append(make_pair("decimal-dots", p, re.sub(r"(?<![\d.])(\d+)(?![\d.])", r"\1.0", g, count=1)))
    for p, g in sample(rng, golds_matching(problems, r"^\d+$"), n // 4):
        pairs.append(make_pair("decimal-dots", p, g + ". \\text{m}"))
    return pairs


@klass(
    "differential-d",
    "`d` followed by a letter or a \\command (whitespace between allowed) is one DIFFERENTIAL token, the symbol d<name>: `dt`, `d t`, `d\\theta` (dtheta), `d\\cdot x` (dcdot*x); `td` is t*d",
)
def _differential_d(problems, rng, n):
    pairs = []
    d_factor = re.compile(r"(?<![A-Za-z\\])d(?![A-Za-z])")
    chosen = sample(rng, golds_matching(problems, d_factor.pattern), n)
    for p, g in chosen:
        match = d_factor.search(g)
        after = g[match.end() :]
        if re.match(r"\s*[A-Za-z\\]", after):  # `d x` as written: the d moved after its neighbour
            neighbour = re.match(r"\s*([A-Za-z]|\\[A-Za-z]+)", after)
            pairs.append(
                make_pair(
                    "differential-d", p, g[: match.start()] + neighbour.group(1) + " d" + after[neighbour.end() :]
                )
            )
        else:
            pairs.append(make_pair("differential-d", p, g[: match.start()] + "d \\cdot 1" + after))
    letters = golds_matching(problems, r"(?<![A-Za-z\\])([a-ce-zA-Z]) ([a-ce-zA-Z])(?![A-Za-z])")
    for p, g in sample(rng, letters, n // 2):  # a product of letters, with a d put in front of one
        pairs.append(
            make_pair(
                "differential-d", p, re.sub(r"(?<![A-Za-z\\])([a-ce-zA-Z]) ([a-ce-zA-Z])(?![A-Za-z])", r"\1 \2", g)
            )
        )
    cases = [
        ("t d", "dt"),
        ("t d", "d t"),
        ("2 d t", "2dt"),
        ("d \\theta", "d\\theta"),
        ("\\theta d", "d\\theta"),
        ("d x", "d \\cdot x"),
        ("d \\sqrt{x}", "\\sqrt{x} d"),
        ("\\frac{m g d}{2}", "\\frac{d m g}{2}"),
        ("a d", "ad"),
        ("m g d", "mgd"),
    ]
    for index, (gold, answer) in enumerate(cases):
        pairs.append(synthetic("differential-d", gold, answer, index=index))
    return pairs


@klass(
    "primes",
    "primes are part of a symbol's name (x' is not x; `^\\prime` and `^{\\prime}` become ' in preprocessing); `f'(x)` is an applied function f'",
)
def _primes(problems, rng, n):
    pairs = []
    for p, g in golds_matching(problems, r"'|\\prime"):
        pairs.append(make_pair("primes", p, g.replace("^{\\prime}", "").replace("^\\prime", "").replace("'", "")))
        pairs.append(make_pair("primes", p, g.replace("^{\\prime}", "'")))
    cases = [
        ("x'", "x"),
        ("v'", "v^{\\prime}"),
        ("v' t", "v'(t)"),
        ("2 v'", "v' + v'"),
        ("x''", "x'"),
        ("f'(x)", "f'(x)"),
    ]
    for index, (gold, answer) in enumerate(cases):
        pairs.append(synthetic("primes", gold, answer, index=index))
    return pairs


@klass(
    "unknown-commands",
    "a command outside the grammar is a plain symbol named by its letters: \\coth x is coth*x, \\sech, \\csch, \\sgn, \\max(a,b) (a function call), "
    "\\arg, \\tg, \\text{m} (text*m), \\overline{z} is conjugate(z), \\binom unevaluated; a known command glued to letters (\\sinx, \\cdotx) is one symbol",
)
def _unknown_commands(problems, rng, n):
    pairs = []
    for p, g in sample(rng, golds_matching(problems, r"\\(?:sin|cos|tan) [a-zA-Z]"), n // 3):
        pairs.append(make_pair("unknown-commands", p, re.sub(r"\\(sin|cos|tan) ([a-zA-Z])", r"\\\1\2", g, count=1)))
    for p, g in sample(rng, golds_matching(problems, r"\\cdot [a-zA-Z]"), n // 4):
        pairs.append(make_pair("unknown-commands", p, re.sub(r"\\cdot ([a-zA-Z])", r"\\cdot\1", g, count=1)))
    for p, g in golds_matching(problems, r"\\overline\{"):
        pairs.append(make_pair("unknown-commands", p, g.replace("\\overline", "\\bar")))
    cases = [
        ("\\frac{1}{\\tanh x}", "\\coth x"),
        ("\\frac{1}{\\cosh x}", "\\sech x"),
        ("\\frac{1}{\\sinh x}", "\\csch x"),
        ("1", "\\sgn 2"),
        ("3", "\\max(2,3)"),
        ("2", "\\min(2,3)"),
        ("\\tan x", "\\tg x"),
        ("\\arctan x", "\\arctg x"),
        ("10", "\\binom{5}{2}"),
        ("z", "\\overline{\\overline{z}}"),
        ("\\sin x", "\\sinx"),
        ("2 x", "2\\cdotx"),
        ("\\operatorname{sgn}(x)", "\\operatorname{sgn} x"),
        ("\\text{m}", "m"),
        ("\\coth(x)", "\\coth x"),
    ]
    for index, (gold, answer) in enumerate(cases):
        pairs.append(synthetic("unknown-commands", gold, answer, index=index))
    return pairs


@klass(
    "subscript-names",
    "a subscripted name is the letter + '_{' + str(parsed subscript) + '}': x_0 = x_{0}, x_{ab} = x_{ba} (a*b), x_{n+1} = x_{1+n},"
    " x_{\\text{max}} is x_{text*(m*(a*x))}; x_1_2 stops after x_{1}; x_{01} fails (sympify of '01')",
)
def _subscript_names(problems, rng, n):
    pairs = []
    for p, g in golds_matching(problems, r"_\{[a-zA-Z]{2,}\}"):
        pairs.append(
            make_pair(
                "subscript-names",
                p,
                re.sub(r"_\{([a-zA-Z])([a-zA-Z]+)\}", lambda m: "_{" + m.group(2) + m.group(1) + "}", g, count=1),
            )
        )
    for p, g in sample(rng, golds_matching(problems, r"_\{[a-z] ?[-+] ?\d\}"), n // 4):
        pairs.append(
            make_pair(
                "subscript-names",
                p,
                re.sub(
                    r"_\{([a-z]) ?([-+]) ?(\d)\}",
                    lambda m: "_{" + ("" if m.group(2) == "+" else "-") + m.group(3) + "+" + m.group(1) + "}",
                    g,
                    count=1,
                ),
            )
        )
    for p, g in sample(rng, golds_matching(problems, r"_\{\d\}"), n // 4):
        pairs.append(make_pair("subscript-names", p, re.sub(r"_\{(\d)\}", r"_\1", g)))
        pairs.append(make_pair("subscript-names", p, re.sub(r"_\{(\d)\}", r"_{0\1}", g, count=1)))
    for p, g in golds_matching(problems, r"_\{\\(?:mathrm|text) ?\{[^{}]*\}\}")[: n // 4]:
        pairs.append(
            make_pair(
                "subscript-names",
                p,
                re.sub(r"_\{\\(?:mathrm|text) ?\{([^{}]*)\}\}", lambda m: "_{" + m.group(1).strip() + "}", g),
            )
        )
        pairs.append(
            make_pair(
                "subscript-names",
                p,
                re.sub(r"_\{\\(?:mathrm|text) ?\{([^{}]*)\}\}", lambda m: "_{\\text{" + m.group(1).strip() + "}}", g),
            )
        )
    cases = [
        ("x_{ab}", "x_{ba}"),
        ("x_{n+1}", "x_{1+n}"),
        ("x_{1}", "x_1"),
        ("x_{1}", "x_{01}"),
        ("x_{12}", "x_1_2"),
        ("x_{\\max}", "x_{max}"),
        ("x_{\\text{max}}", "x_{max}"),
        ("v_{0}t", "v_0 t"),
        ("x_{1 2}", "x_{12}"),
    ]
    for index, (gold, answer) in enumerate(cases):
        pairs.append(synthetic("subscript-names", gold, answer, index=index))
    return pairs


@klass(
    "parser-stops",
    "the grammar has no end-of-input anchor: the parser reads the leading expression and stops before a token that cannot continue it"
    " (`x \\cdot`, `a+`, `x)`, `x \\\\ y`), unless the lexer or the parser's lookahead meets an error first; `\\{a\\}` is the group a",
)
def _parser_stops(problems, rng, n):
    pairs = []
    tails = [" \\cdot", " -", " \\times", " /", " \\\\", " )", " ]", "}", " \\quad \\text{(m)}", " &"]
    chosen = sample(rng, golds_matching(problems, r"^[^,=]+$"), max(1, n // len(tails)))
    for _index, (p, g) in enumerate(chosen):
        for tail in tails:
            pairs.append(make_pair("parser-stops", p, g + tail))
    for p, g in sample(rng, golds_matching(problems, r"^[^,=\\{}]+$"), n // 4):
        pairs.append(make_pair("parser-stops", p, "\\{" + g + "\\}"))
    return pairs


@klass(
    "pi-float",
    "pi is Symbol('pi'), replaced by math.pi after parsing; expressions are built unevaluated, so a symbolic difference "
    "whose float coefficient does not cancel exactly (-3.6e-15*R**3*p_0) cannot be compared with 1e-3: False",
)
def _pi_float(problems, rng, n):
    import math

    pairs = []
    symbolic = golds_matching(problems, r"\\pi(?![a-z])")
    for p, g in sample(
        rng, [(p, g) for p, g in symbolic if re.search(r"(?<!\\)[a-zA-Z]", g.replace("\\pi", ""))], n // 2
    ):
        pairs.append(make_pair("pi-float", p, re.sub(r"\\pi(?![a-z])", "(3.141592653589793)", g)))
    for p, g in sample(rng, [(p, g) for p, g in symbolic if "=" not in g and "," not in g], n // 4):
        pairs.append(make_pair("pi-float", p, re.sub(r"\\pi(?![a-z])", "(3.14159)", g)))
    cases = [
        (r"\frac{4}{3} \pi R^{3} p_{0}", f"{4 / 3 * math.pi!r} R^{{3}} p_{{0}}"),
        (r"\frac{4}{3} \pi R^{3} p_{0}", f"{4 * math.pi / 3!r} R^{{3}} p_{{0}}"),
        (r"\frac{\pi}{6} d^{3}", f"{math.pi / 6!r} d^{{3}}"),
        (r"2 \pi r", f"{2 * math.pi!r} r"),
        (r"\frac{3 \pi}{4} m v^{2}", f"{3 * math.pi / 4!r} m v^{{2}}"),
        (r"\frac{\pi R^{2}}{3}", f"{math.pi / 3!r} R^{{2}}"),
        (r"4 \pi \varepsilon_{0} R", f"{4 * math.pi!r} \\varepsilon_{{0}} R"),
        (r"\frac{\pi}{4} D^{2} h", f"{math.pi / 4!r} D^{{2}} h"),
        (r"\frac{5 \pi}{18}", f"{5 * math.pi / 18!r}"),
        (r"\frac{2}{3} \pi G \rho R^{2}", f"{2 * math.pi / 3!r} G \\rho R^{{2}}"),
    ]
    for index, (gold, answer) in enumerate(cases):
        pairs.append(synthetic("pi-float", gold, answer, index=index))
        pairs.append(synthetic("pi-float", answer, gold, index=100 + index))
    return pairs


@klass("colon-and-ampersand", "`:` is division in a product (`3:4` is 3/4); `&=` and `=&` are `=`; a lone `&` fails")
def _colon(problems, rng, n):
    pairs = []
    for p, g in sample(rng, golds_matching(problems, r"^\\frac\{\d+\}\{\d+\}$"), n // 2):
        upper, lower = re.match(r"^\\frac\{(\d+)\}\{(\d+)\}$", g).groups()
        pairs.append(make_pair("colon-and-ampersand", p, f"{upper}:{lower}"))
    for p, g in sample(rng, golds_matching(problems, r"^[^=,]+=[^=,]+$"), n // 2):
        pairs.append(make_pair("colon-and-ampersand", p, g.replace("=", "&=")))
    return pairs


def build(problems: list[dict], per_class: int = 80) -> list[dict]:
    """Every class's pairs, one per (class, answer, gold, precision)."""
    pairs = []
    for name, (_, function) in CLASSES.items():
        pairs += function(problems, random.Random(f"olympiadbench-adversarial-{name}"), per_class)
    unique, seen = [], set()
    for item in pairs:
        key = json.dumps([item["set"], item["answer"], item["gold"], item["precision"]], ensure_ascii=False)
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique
