"""What VLMEvalKit's and MATH-V's scorers share: the LaTeX repairs of Hendrycks et al.'s MATH
(`math_equivalence.py`), which both copied into their `_strip_string`. The copies differ in one
place only, a `\\sqrt` or `\\frac` that ends the text: VLMEvalKit's raise there as the original does
(`strict`, and its caller keeps the text as it was), MATH-V's leave the text as it is. Both also
take a number to be whatever Python's `float()` accepts (`is_float`)."""

from __future__ import annotations


def leading_zeros(text: str) -> str:
    """`.5` as `0.5`, at the start and after a space or a brace."""
    text = text.replace(" .", " 0.").replace("{.", "{0.")
    return "0" + text if text.startswith(".") else text


def fix_sqrt(text: str, *, strict: bool) -> str:
    """`\\sqrt3` as `\\sqrt{3}`: the one character after a `\\sqrt` without a brace becomes its
    argument. `strict`: IndexError at a `\\sqrt` that ends the text."""
    pieces = text.split("\\sqrt")
    fixed = pieces[0]
    for piece in pieces[1:]:
        if not piece:
            _at_the_end("\\sqrt", strict)
            fixed += "\\sqrt"
        elif piece[0] == "{":
            fixed += "\\sqrt" + piece
        else:
            fixed += "\\sqrt{" + piece[0] + "}" + piece[1:]
    return fixed


def fix_fracs(text: str, *, strict: bool) -> str:
    """`\\frac12` as `\\frac{1}{2}`, `\\frac1{b}` as `\\frac{1}{b}`: the first two characters after a
    `\\frac` without a brace become its arguments; the whole text unchanged where fewer than two
    follow. `strict`: IndexError at a `\\frac` that ends the text."""
    pieces = text.split("\\frac")
    fixed = pieces[0]
    for piece in pieces[1:]:
        fixed += "\\frac"
        if not piece:
            _at_the_end("\\frac", strict)
        if piece.startswith("{"):
            fixed += piece
            continue
        if len(piece) < 2:
            return text
        first, second = piece[0], piece[1]
        fixed += "{" + first + "}" + (second if second == "{" else "{" + second + "}") + piece[2:]
    return fixed


def _at_the_end(command: str, strict: bool) -> None:
    """Where a command ends the text, the original (and VLMEvalKit's copy) fails on its missing
    argument; MATH-V's copy goes on."""
    if strict:
        raise IndexError(f"{command} ends the text")


def fix_a_slash_b(text: str) -> str:
    """`3/4` as `\\frac{3}{4}`, only for two integers written exactly so."""
    parts = text.split("/")
    if len(parts) != 2:
        return text
    try:
        numerator, denominator = int(parts[0]), int(parts[1])
    except ValueError:
        return text
    if text != f"{numerator}/{denominator}":
        return text
    return "\\frac{" + str(numerator) + "}{" + str(denominator) + "}"


def fractions(text: str) -> str:
    """MATH's last two repairs: `0.5` as `\\frac{1}{2}`, then `fix_a_slash_b`."""
    return fix_a_slash_b("\\frac{1}{2}" if text == "0.5" else text)


def is_float(text: str) -> bool:
    """Whatever Python's `float()` accepts (so also " 12\\n", "1_000", "inf", "nan")."""
    try:
        float(text)
    except ValueError:
        return False
    return True
