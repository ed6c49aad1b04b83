"""Presentation is not value: what the rule chain (`mathcheck`) strips from an answer before it
compares (boxes, `$`, spacing, unicode, units, degree marks), and how it reads a number."""

from __future__ import annotations

import re

from olympiad_eval.scoring.answers import boxed

MAX_DEPTH = 20  # brackets nested deeper than this are not parsed (real answers: 5 at most)
OPENING, CLOSING = "([{", ")]}"

# ---------------------------------------------------------------- presentation

_UNICODE = {
    "×": r" \times ",
    "·": r" \cdot ",
    "⋅": r" \cdot ",
    "−": "-",
    "–": "-",
    "°": r"^{\circ}",
    "π": r"\pi ",
    "μ": r"\mu ",
    "µ": r"\mu ",
    "Ω": r"\Omega ",
    "θ": r"\theta ",
    "λ": r"\lambda ",
    "ω": r"\omega ",
    "α": r"\alpha ",
    "β": r"\beta ",
    "γ": r"\gamma ",
    "Δ": r"\Delta ",
    "ρ": r"\rho ",
    "≤": r" \leq ",
    "≥": r" \geq ",
    "≈": r" \approx ",
    "∞": r"\infty ",
    "ε": r"\epsilon ",
    "ϵ": r"\epsilon ",
    "φ": r"\phi ",
    "ϕ": r"\phi ",
    "ϑ": r"\theta ",
}
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
_SUPERSCRIPTS = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻]+")
_UNWRAP = [
    (re.compile(r"\\(?:left|right|displaystyle|limits)(?![A-Za-z])"), ""),
    (re.compile(r"(?<!\\)\\[,;:! ]|~"), " "),  # `\, ` but not the row break `\\ `
    (re.compile(r"\\dfrac|\\tfrac"), r"\\frac"),
    # one letter, two glyphs: the parser would make `\varepsilon_0` and `\epsilon_0` two symbols
    (re.compile(r"\\var(epsilon|phi|theta)(?![A-Za-z])"), r"\\\1"),
]
_END = r"(?=\s*(?:$|[,;)\]]))"  # the end of an answer or of one of its parts
_DEGREE = r"^{\circ}"
_ANGLE_MARKS = [
    # `^\circ C` is a temperature: a unit like any other, not an angle
    (
        re.compile(r"\^\s*\{?\s*\\circ\s*\}?\s*(?:\\(?:text|mathrm)\s*\{\s*([CF])\s*\}|([CF])(?![A-Za-z]))"),
        r" \\mathrm{deg\1\2}",
    ),
    (re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\^?\\(?:degree|textdegree)(?![A-Za-z])"), r"^{\\circ}"),
    (
        re.compile(
            rf"\s*(?:\\(?:text|mathrm)\s*\{{\s*(?:degrees?|deg)\s*\}}|\{{\s*degrees?\s*\}}|\s(?:degrees?|deg))"
            rf"{_END}"
        ),
        r"^{\\circ}",
    ),
    (
        re.compile(rf"\s*(?:\\(?:text|mathrm)\s*\{{\s*(?:rad|radians?)\s*\}}|\s(?:rad|radians?)){_END}"),
        r" \\mathrm{rad}",
    ),
]
_NUMERAL = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
# `\sin 60^{\circ}`, `\cos(30^{\circ})`, `\tan{45^{\circ}}`, `\sin^2 30^{\circ}`: the parser drops the
# degree mark (sin(60) in radians), so the argument is written in radians first
_TRIG_OF_DEGREES = re.compile(
    r"(?P<function>\\(?:sin|cos|tan|cot|sec|csc)(?![A-Za-z])(?:\s*\^\s*(?:\{[^{}]*\}|\d))?)\s*"
    rf"(?:\(\s*(?P<paren>{_NUMERAL})\s*\^\{{\\circ\}}\s*\)|\{{\s*(?P<brace>{_NUMERAL})\s*\^\{{\\circ\}}\s*\}}"
    rf"|(?P<bare>{_NUMERAL})\s*\^\{{\\circ\}})"
)
_UNIT_TEXT = r"[A-Za-z°Ω/\s\^\-\d\\·.*]"
# a trailing `\text{m/s}`-like unit, but not a subscript (`S_\mathrm{b}`) nor radians (an angle unit)
_TRAILING_UNIT = re.compile(
    rf"(?<![_^\s])\s*(?:\\mu\s*)?\\(?:text|mathrm|rm)\s*\{{(?!\s*rad\s*\}})(?:{_UNIT_TEXT}|\{{{_UNIT_TEXT}*\}})*\}}"
    r"(?:\s*\^\s*\{?-?\d+\}?)?\s*$"
)
PERCENT = re.compile(r"\s*\\?%$")
_WRAPPED = re.compile(r"^\\(?:text|mathrm|textbf|mathbf)\s*\{([^{}]*)\}$")


def clean(answer: str, unit: str | None = None) -> str:
    """Strip what is presentation, not value: boxes, dollars, spacing macros, a trailing unit."""
    return cleaned(answer, unit)[0]


def cleaned(answer: str, unit: str | None) -> tuple[str, bool]:
    """`clean`'s text, and whether it ended in a `%` (dropped from the text)."""
    text = _normalise(answer)
    if unit:
        text = _strip_suffix(text, unit)
    wrapped = _WRAPPED.match(text)
    if wrapped:  # `\text{B}` is the answer B, not a unit
        return wrapped.group(1).strip(), False
    text = _TRAILING_UNIT.sub("", text).strip()
    in_percent = bool(unit) and bool(PERCENT.fullmatch(_normalise(unit)))  # then `%` is the slot's unit
    percent = bool(PERCENT.search(text)) and not in_percent
    return PERCENT.sub("", text).strip().rstrip(".").strip(), percent


def _normalise(answer: str) -> str:
    text = answer.strip()
    boxes = boxed(text)
    if boxes and text.startswith("\\boxed"):
        text = boxes[0]
    text = text.replace("$", "")
    text = _SUPERSCRIPTS.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPT) + "}", text)
    for character, replacement in _UNICODE.items():
        text = text.replace(character, replacement)
    for pattern, replacement in _UNWRAP + _ANGLE_MARKS:
        text = pattern.sub(replacement, text)
    text = _TRIG_OF_DEGREES.sub(_in_radians, text)
    return " ".join(text.split())


def _in_radians(match: re.Match) -> str:
    degrees = match["paren"] or match["brace"] or match["bare"]
    return f"{match['function']}(\\frac{{{degrees} \\pi}}{{180}})"


def unbrace(text: str) -> str:
    """`{4}` is 4: a lone pair of braces around the whole answer is grouping, not value."""
    for _ in range(MAX_DEPTH):  # deeper is not parsed anyway: a bound on hostile `{{{...}}}`
        if not (len(text) > 1 and text[0] == "{" and text[-1] == "}" and 0 not in bracket_depths(text)[1:]):
            break
        text = text[1:-1].strip()
    return text


def _strip_suffix(text: str, unit: str) -> str:
    unit = clean(unit)
    for form in (unit, f"\\text{{{unit}}}", f"\\mathrm{{{unit}}}"):
        if form and text.endswith(form) and len(text) > len(form):
            return text[: -len(form)].strip()
    return text


def squeeze(text: str) -> str:
    """Spacing is insignificant in LaTeX."""
    return re.sub(r"\s+", "", text)


# ---------------------------------------------------------------- numbers and units

_PREFIX = r"(?:da|[YZEPTGMkhdcmunpfa]|\\mu\s*)"
_BASE = (
    r"(?:eV/c(?:\^\{?2\}?)?|mol|cd|Hz|Pa|Wb|eV|rad|sr|bar|atm|min|hr|yrs?|years?|days?|ly|pc|au|AU|Da|erg|dyn"
    r"|cal|Torr|torr|mmHg|psi|\\Omega|Ω|[mgsAKNJWCVFSTHLh])"
)
_UNIT_NAMES = (
    r"(?:met(?:er|re)s?|seconds?|(?:kilo)?grams?|newtons?|joules?|watts?|volts?|amperes?|amps?"
    r"|kelvins?|hertz|pascals?|ohms?|coulombs?|teslas?|farads?|hours?|minutes?"
    r"|inch(?:es)?|feet|foot|ft|miles?|lbs?|units?"
    r"|[MRL]_\{?\\odot\}?)"
)
_UNIT_WORD = rf"(?:{_PREFIX}?{_BASE}|{_UNIT_NAMES})(?![A-Za-z])"
_UNIT_GROUP = r"\\(?:text|mathrm|rm|textrm)\s*\{(?:[^{}]|\{[^{}]*\})*\}"
_UNIT_POWER = r"(?:\s*\^\s*(?:\{\s*[-+]?\d+(?:\.\d+)?\s*\}|[-+]?\d))?"
_UNIT_TOKEN = rf"(?:(?:\\mu\s*)?{_UNIT_GROUP}|{_UNIT_WORD}){_UNIT_POWER}"
# "3.0 m/s", "2.5 \times 10^{3} kg", "9.8 m s^{-2}": a head, a space, then nothing but unit words
NUMBER_THEN_UNIT = re.compile(rf"(?P<head>.*?\S)\s+(?P<unit>{_UNIT_TOKEN}(?:\s*(?:/|\\cdot|\*)?\s*{_UNIT_TOKEN})*)\s*")


def split_angle(text: str) -> tuple[str, str | None]:
    """("30", "deg") for `30^{\\circ}`, ("1.2", "rad") for `1.2 \\mathrm{rad}`, else (text, None)."""
    if text.endswith(_DEGREE) and len(text) > len(_DEGREE):
        return text[: -len(_DEGREE)].strip(), "deg"
    if text.endswith(r"\mathrm{rad}") and len(text) > len(r"\mathrm{rad}"):
        return text[: -len(r"\mathrm{rad}")].strip(), "rad"
    return text, None


def unit_angle(unit: str | None) -> str | None:
    """The angle unit a slot's `unit` states, if it is one."""
    if not unit:
        return None
    return split_angle(_normalise("1 " + unit))[1]


def bracket_depths(text: str) -> list[int]:
    """The bracket depth before each character (any opening bracket closes with any closing one,
    so that `(0, 1]` balances)."""
    depths, depth = [], 0
    for character in text:
        depths.append(depth)
        depth += (character in OPENING) - (character in CLOSING)
    return depths
