"""MATH-Vision's official scorer, reimplemented: the verdicts of github mathllm/MATH-V's
`evaluation/evaluate.py` (answer extraction) and `evaluation/utils.py` (`find_math_answer`,
`is_equal`), without their `eval` calls.

Entry points:

- `is_correct(response, answer, options=()) -> bool`: the official verdict for one row, with
  `answer` and `options` as in the release's `data/test.jsonl` (the official script read them raw:
  row 2830's answer starts with a form feed where `\\f` was meant, which `mathvision.load` repairs;
  the official verdict there is always False);
- `verdict(response, answer, options=()) -> (extracted, correct)`: the same, with the extracted answer;
- `extract(response) -> str`: the official answer extraction (it ignores the options);
- `is_equal(given, gold) -> bool`: the official comparison of two answer strings.

The official comparison parsed LaTeX with the old `latex2sympy2` (OrangeX4's, antlr 4.7.2) and
then ran Python's `eval` on the printed sympy expression. We parse with `latex2sympy2_extended`
(its grammar's `relation` rule and a subclass of its private converter, `_Latex2Sympy`) and
emulate where the old parser behaved differently (see `_parse`):

- before lexing it replaced `$` with a space, dropped spacing macros (`\\,`, `\\quad`, `~`,
  `\\displaystyle`) and read `\\dfrac`/`\\tfrac` as `\\frac`;
- its start rule had no end-of-input anchor: it read the longest leading expression and ignored
  the rest (`\\frac{1}{4}}.the answer is` read as 1/4), unless its lexer met a character it had
  no token for (`°`, `π`, a bare `%`, `\\!`, `\\circ`, `\\boxed`, ...) on the way, which failed;
- but it stopped cleanly only before a token that cannot go on an expression (a closing bracket,
  `.`, `_`, `&`, `'`, the end): before any other token it read on and failed where the text stopped
  making sense. So a braced unit after a value (`2{ft.}`, `105{,}000`), an unclosed expression after
  one (`2\\sqrt{3`, `\\frac{1}{2}\\frac{1}{`), a trailing operator (`2021+`) and any comma or
  semicolon (a list `1,2`, or a dangling `90,`) never had a value; numbers and `\\pi` took no
  subscript, so it stopped before their `_` (`64\\pi_2` read as 64π);
- numbers could group thousands with commas (`1,000`), decimals became exact rationals, `50\\%`
  read as 1/2, juxtaposition always multiplied (no mixed fractions: `2\\frac{1}{2}` is 1);
- a quotient stayed a quotient (`\\frac{128}{8}` printed `128/8`), which Python evaluated to a
  float: 16.0, printed so in a tuple;
- `x=3` with a single symbol on the left read as its right side (an assignment);
- accents and `\\text{...}` became symbols whose names Python could not evaluate.

One behaviour is not emulated: the old module kept assignments between calls in globals (its
`variances`), so a later `y = ...` could fail after an earlier one, depending on the order of
the rows and files scored in one process. No released verdict depends on it.

Numbers are then evaluated by `_number`, a whitelist over the sympy expression (numbers, + - * /
**, the constants and functions that Python's `math` module offered the official `eval`), with
bounded exponents and factorials: text from a model can never run code or hang the scorer.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from functools import lru_cache

import sympy
from antlr4 import Token
from latex2sympy2_extended.antlr_parser import PSParser
from latex2sympy2_extended.latex2sympy2 import ConversionConfig, _Latex2Sympy

from olympiad_eval.scoring.hendrycks import fix_fracs, fix_sqrt, fractions, is_float, leading_zeros

LETTERS = "ABCDE"
ANSWER_FLAGS = ("the final answer is", "the answer is", "the correct answer is", "the answer should be")

# Bounds that keep hostile answers cheap; no plausible answer comes near them.
MAX_PARSE_CHARS = 500  # the leading expression the parser may read (numbers in the released runs: < 150)
_RAW_LIMIT = 4 * MAX_PARSE_CHARS  # the text read before preprocessing (which shortens macros)
MAX_NESTING = 100  # brackets inside brackets (the parsers hit Python's recursion limit near 150)
MAX_TUPLE_ITEMS = 64  # elements of a tuple evaluated one by one
MAX_POWER_BITS = 100_000  # size of an integer power
MAX_FACTORIAL = 10_000


# ------------------------------------------------------------------------------ entry points


def is_correct(response: str, answer: str, options: Sequence[str] = ()) -> bool:
    """The official verdict: the extracted answer equals the answer key or, for multiple choice,
    the text of the correct option."""
    return verdict(response, answer, options)[1]


def verdict(response: str, answer: str, options: Sequence[str] = ()) -> tuple[str, bool]:
    """(extracted answer, official verdict) for one response."""
    given = extract(response)
    return given, is_equal(given, str(answer)) or is_equal(given, _option_text(str(answer), options))


def _option_text(answer: str, options: Sequence[str]) -> str:
    """The text of the option the answer letter names ('' for free form, as officially)."""
    if not options:
        return ""
    index = ord(answer) - ord("A") if len(answer) == 1 else -1
    # The official code indexes blindly (and would crash on a bad key); every key in the release is a letter.
    return str(options[index]) if 0 <= index < len(options) else ""


# ------------------------------------------------------------------------------ extraction


def extract(response: str) -> str:
    """The official answer extraction (evaluate.py), step by step."""
    text = response.strip()
    text = _single_letter(text)
    tail = text.split("is ")[-1].rstrip(".")
    if is_float(tail):  # "... is 12." -> "12"
        text = tail
    if "oxed{" not in text:
        text = _after_answer_phrases(text)
    elif text.count("oxed{") > 1:  # keep only the last \boxed{...}
        text = "\\boxed{" + text.split("oxed{")[-1]
    text = find_math_answer(text)
    for letter in "abcde":  # "(a)" and "{a}" -> "a"
        text = text.replace(f"({letter})", letter)
    for letter in "abcde":
        text = text.replace(f"{{{letter}}}", letter)
    return text.rstrip(".").lstrip(":").strip()


def _single_letter(text: str) -> str:
    """A response that ends with " C." / " (C)." or starts with "C\\n" / "(C)\\n" / "(C) C\\n" is C."""
    for c in LETTERS:
        if (
            text.endswith(f" {c}.")
            or text.endswith(f" ({c}).")
            or text.startswith(f"{c}\n")
            or text.startswith(f"({c})\n")
            or text.startswith(f"({c}) {c}\n")
        ):
            text = c
    return text


def _after_answer_phrases(text: str) -> str:
    """For each phrase (lower case, then capitalised): keep what follows its last occurrence,
    up to the end of that line or sentence. The text is stripped even where the phrase is absent."""
    for flag in ANSWER_FLAGS:
        for phrase in (flag, flag.replace("the", "The")):
            found = phrase in text
            text = text.split(phrase)[-1].strip()
            if found:
                text = text.split("\n")[0].split(". ")[0]
    return text


def find_math_answer(s: str) -> str:
    """The official normalisation (utils.py): lower case, the inside of the last \\boxed{...},
    the value after `=` or `\\approx`, LaTeX and unit clutter removed, then `_strip_string`."""
    s = s.lower().replace("{}", "")
    ans = _boxed(s)
    close, open_ = ans.find("}"), ans.find("{")
    if close != -1 and (open_ == -1 or close < open_):  # a stray "}" ends the answer
        ans = ans.split("}")[0]
    ans = ans.split("=")[-1].split("\\approx")[-1]
    for old, new in (
        (" ", ""),
        ("\\,", ""),
        ("∞", "\\infty"),
        ("+\\infty", "\\infty"),
        ("\\\\", "\\"),
        ("\n", ""),
        ("\\text", ""),
        ("\\mbox", ""),
        ("bmatrix", "pmatrix"),
        ("\\left", ""),
        ("\\right", ""),
        ("^{\\circ}", ""),
        ("^\\circ", ""),
        ("{m}^3", ""),
        ("m^3", ""),
        ("{units}", ""),
        ("units", ""),
        ("{km}", ""),
        ("km", ""),
    ):
        ans = ans.replace(old, new)
    return _strip_string(ans)


def _boxed(s: str) -> str:
    """What the official `re.findall('oxed{(.*)}', s, re.S)[-1]` found, else s: greedy, from the
    first "oxed{" to the last "}" (so it never has more than one match). Computed directly, as the
    regex takes quadratic time on many "oxed{" without a "}"."""
    start, end = s.find("oxed{"), s.rfind("}")
    return s[start + 5 : end] if start != -1 and end >= start + 5 else s


def _strip_string(string: str) -> str:
    """The official `_strip_string` (a variant of the MATH benchmark's)."""
    for old, new in (
        ("\n", ""),
        ("\\!", ""),
        ("\\\\", "\\"),
        ("tfrac", "frac"),
        ("dfrac", "frac"),
        ("\\left", ""),
        ("\\right", ""),
        ("^{\\circ}", ""),
        ("^\\circ", ""),
        ("\\$", ""),
        ("$", ""),
    ):
        string = string.replace(old, new)
    string = string.split("\\text{ ")[0]  # units on the right
    string = string.replace("\\%", "")
    string = leading_zeros(string)
    if not string:
        return string
    if len(string.split("=")) == 2:
        string = string.split("=")[-1]
    if len(string.split("\\approx")) == 2:
        string = string.split("\\approx")[-1]
    if "sqrt" in string:
        string = fix_sqrt(string, strict=False)
    string = string.replace(" ", "")
    if "sqrt" in string:  # sic: fractions are only fixed next to a square root
        string = fix_fracs(string, strict=False)
    return fractions(string)


# ------------------------------------------------------------------------------ comparison


def is_equal(given: str, gold: str) -> bool:
    """The official `is_equal`: case-insensitive string equality, then equality of tuples with
    their elements rounded to 2 decimals, then equality of the values rounded to 2 decimals."""
    given, gold = given.lower(), gold.lower()
    if not given.replace(" ", "") or not gold.replace(" ", ""):
        return False
    if given.strip() == gold.strip():
        return True
    given, gold = _eval_tuple(given), _eval_tuple(gold)
    if given == gold:
        return True
    a, b = _value(gold), _value(given)
    return a is not None and b is not None and round(a, 2) == round(b, 2)


def _eval_tuple(s: str) -> str:
    """`(a,b,...)` or `[a,b,...]` with each element's value rounded to 2 decimals (as Python
    prints it); elements containing `infty` and the words `a`, `-a` are kept as they are.
    Unchanged when any element has no value."""
    items = s[1:-1].split(",")
    if len(s) < 2 or len(items) < 2 or (s[0], s[-1]) not in (("(", ")"), ("[", "]")):
        return s
    if len(items) > MAX_TUPLE_ITEMS:  # no answer key is that long: it cannot match anyway
        return s
    out = []
    for item in items:
        if "infty" in item or item in ("a", "-a"):
            out.append(item)
            continue
        value = _value(item)
        if value is None:
            return s
        out.append(str(round(value, 2)))
    return s[0] + ",".join(out) + s[-1]


def _value(text: str) -> int | float | None:
    """The number the official `round(eval(str(latex2sympy(text))), 2)` rounded, or None where
    it raised (no parse, a symbol, a complex or infinite value, a list, ...)."""
    return _cached_value(text[: _RAW_LIMIT + 1])  # all `_parse` reads: keeps the cache's keys small


@lru_cache(maxsize=65536)
def _cached_value(text: str) -> int | float | None:
    try:
        return _number(_parse(text))  # inf and nan pass: round() kept them, and nan equals nothing
    except Exception:  # any failure of the old parser or of eval compared unequal
        return None


class _NoValue(Exception):
    """The official code raised here, so the comparison was False."""


# ------------------------------------------------------------------------------ the old parser, emulated


def _parse(text: str) -> sympy.Basic:
    """What the old `latex2sympy2.latex2sympy(text)` returned for numbers (raises where it raised)."""
    truncated = len(text) > _RAW_LIMIT
    text = _old_preprocess(text[:_RAW_LIMIT])
    truncated = truncated or len(text) > MAX_PARSE_CHARS
    text = text[:MAX_PARSE_CHARS]
    bad = _old_lexer_error(text)
    if bad is not None:
        text, truncated = text[:bad], True
    if _nesting(text) > MAX_NESTING:
        raise _NoValue("nested too deeply")  # a RecursionError, after a long time
    text = _for_new_lexer(text)
    converter = _OldStyleConverter(config=ConversionConfig(lowercase_symbols=False))
    parser = converter.create_parser(text)
    relation = parser.relation()  # the start rule without the new grammar's EOF anchor
    if truncated and parser.getTokenStream().fetchedEOF:
        # The parser looked as far as the cut, so the old lexer reached the character it failed on.
        raise _NoValue("the old lexer failed within the expression's lookahead")
    stop = parser.getCurrentToken()
    if stop.type not in _OLD_CLEAN_STOPS:
        # The old parser read this token as the expression going on, and failed further on (or
        # made a list, after a comma): the new one gave up on the continuation and stopped before it.
        raise _NoValue(f"the old parser read on into {stop.text!r} and failed")
    return converter.convert_relation(relation)


def _nesting(text: str) -> int:
    """The deepest nesting of brackets of any kind."""
    depth = peak = 0
    for char in text:
        if char in "{[(":
            depth += 1
            peak = max(peak, depth)
        elif char in "}])":
            depth = max(depth - 1, 0)
    return peak


def _old_preprocess(text: str) -> str:
    """The replacements old `latex2sympy` made before lexing."""
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = text.replace("\\mathrm{T}", "T").replace("\\mathrm{d}", "d").replace("{\\rm d}", "d")
    text = text.replace("\\left[\\begin{matrix}", "\\begin{bmatrix}").replace("\\end{matrix}\\right]", "\\end{bmatrix}")
    text = _PERMUTATION.sub(r"\\frac{(\1)!}{((\1)-(\2))!}", text)
    for macro in ("\\displaystyle", "\\quad", "\\qquad", "~", "\\,", "$"):
        text = text.replace(macro, " ")
    return text.replace("\\bigl(", "(").replace("\\bigr)", ")").replace("\\left(", "(").replace("\\right)", ")")


_PERMUTATION = re.compile(r"\(([a-zA-Z0-9+\-*/\\ ]+?)\)_{([a-zA-Z0-9+\-*/\\ ]+?)}")

# The old lexer's backslash tokens (OrangeX4/latex2sympy, PS.g4 for antlr 4.7.2). A backslash that
# starts none of them was a lexer error. Accents made symbols (see `_for_new_lexer`).
_OLD_ACCENTS = (
    "acute bar overline breve check widecheck dot ddot grave hat tilde widetilde vec overrightarrow bm "
    "boldsymbol text textit mathbb mathbin mathbf mathcal mathclap mathclose mathellipsis mathfrak "
    "mathinner mathnormal mathop mathopen mathord mathpunct mathrel mathring mathrlap mathrm mathscr "
    "mathsf mathsterling mathtt"
).split()
_OLD_COMMANDS = (
    "lgroup rgroup { } lbrace rbrace lbrack rbrack lvert rvert vert lfloor rfloor llcorner lrcorner lceil "
    "rceil ulcorner urcorner left right mleft mright lim to rightarrow Rightarrow longrightarrow "
    "Longrightarrow int sum prod log ln exp sin cos tan csc sec cot arcsin arccos arctan arccsc arcsec "
    "arccot sinh cosh tanh arsinh arcosh artanh arcsinh arccosh arctanh sqrt gcd lcm floor ceil max min "
    "times cdot div over frac binom tbinom dbinom choose mod mathit operatorname xrightarrow xRightarrow "
    "leftrightarrow Leftrightarrow in equiv leq le leqslant geq ge geqslant ne neq exponentialE "
    "pi partial infty emptyset "
    "alpha beta Gamma gamma Delta delta epsilon varepsilon zeta eta Theta theta vartheta iota kappa Lambda "
    "lambda mu nu Xi xi omicron Pi varpi rho varrho Sigma sigma varsigma tau Upsilon upsilon Phi phi varphi "
    "chi Psi psi Omega omega "
    "Bbbk wp nabla bigstar angle nexists diagdown measuredangle eth diagup sphericalangle clubsuit "
    "varnothing Diamond complement diamondsuit imath Finv triangledown heartsuit jmath Game triangle "
    "spadesuit ell hbar vartriangle hslash blacklozenge lozenge blacksquare mho blacktriangle sharp prime "
    "Im flat square backprime Re natural surd circledS"
).split()
_OLD_BACKSLASH_TOKENS = re.compile(
    r"\\(?:begin|end)\{(?:matrix|pmatrix|bmatrix|vmatrix)\}|\\not\\equiv|\\\\|\\\$|\\variable\{[^{}]*\}(?:\\%)?"
    r"|\\char\"[0-9A-F]{6}|\\infty\\%|\\(?:"
    + "|".join(sorted(map(re.escape, _OLD_ACCENTS + _OLD_COMMANDS), key=len, reverse=True))
    + ")"
)
_OLD_PLAIN_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \t\r\n+-*/(){}[]|&_^:;,.!<>='")
_OLD_DIFFERENTIAL = re.compile(r"d[ \t\r\n]*?\\[a-zA-Z]+")  # `d\theta`: one token, whatever the command
_OLD_NUMBER = re.compile(r"[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:\\%)?")  # a number may end in `\%`


def _old_lexer_error(text: str) -> int | None:
    """Where the old lexer met a character it had no token for (None if nowhere).

    ANTLR lexes lazily, so the old parser only failed on it if it read that far: `_parse` parses
    the text before it and fails only if the expression ran into it."""
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char == "\\":
            match = _OLD_BACKSLASH_TOKENS.match(text, pos)
            if not match:
                return pos
            pos = match.end()
        elif char == "d" and (match := _OLD_DIFFERENTIAL.match(text, pos)):
            pos = match.end()
        elif char in "0123456789":
            pos = _OLD_NUMBER.match(text, pos).end()
        elif char in _OLD_PLAIN_CHARS:
            pos += 1
        else:
            return pos
    return None


# Anchored at the start of a run of digits, so that long runs cost linear time.
_THOUSANDS = re.compile(r"(?<![0-9])[0-9]+(?:,[0-9]{3})+(?:\.[0-9]+)?")
_PERCENT = re.compile(r"(?<![0-9.])([0-9]+(?:\.[0-9]+)?|\.[0-9]+)\\%")
_ACCENT = re.compile(r"\\(?:" + "|".join(sorted(_OLD_ACCENTS, key=len, reverse=True)) + r")(?![a-zA-Z])")
# Numbers and `\pi` took no subscript in the old grammar: before such a `_` it stopped (`64\pi_2` is
# 64π), or failed inside a group, as the new parser does before `&` (which reads a subscript there).
_SUBSCRIPT_OF_NO_NAME = re.compile(r"(?:(?<=[0-9])|(?<=\\pi))[ \t\r\n]*_")


def _for_new_lexer(text: str) -> str:
    """Rewrite the tokens the new lexer reads differently into ones it reads as the old one did."""
    # `1,000` was one number; keep the token boundary where digits follow (`1,0000` was 1000·0).
    text = _THOUSANDS.sub(lambda m: m.group().replace(",", "") + " ", text)
    text = _PERCENT.sub(r"{\\frac{\1}{100}}", text)
    text = _SUBSCRIPT_OF_NO_NAME.sub(" &", text)
    # An accent made a symbol named like `\text{5}`, which Python's eval could not read: any symbol fails alike.
    return _ACCENT.sub(r"\\alpha ", text)


# The tokens before which the old parser stopped without error: none of them can go on an
# expression, so its leading expression ended there (measured against latex2sympy2 1.9.1): closing
# brackets, punctuation, arrows, and the words its lexer read as matrix functions or environment
# names (`1 triangle` read as 1 before `tr`, `1 rows` before `rows`).
_OLD_CLEAN_STOPS = (
    {Token.EOF}
    | {
        getattr(PSParser, name)
        for name in (
            "R_PAREN",
            "R_PAREN_VISUAL",
            "R_GROUP",
            "R_BRACE",
            "R_BRACE_VISUAL",
            "R_BRACE_CMD",
            "R_BRACKET",
            "R_BRACK",
            "R_ANGLE",
            "R_FLOOR",
            "R_CEIL",
            "R_VERT",
            "LR_CORNER",
            "UR_CORNER",
            "PERIOD",
            "UNDERSCORE",
            "MATRIX_DEL_COL",
            "MATRIX_DEL_ROW",
            "LIM_APPROACH_SYM",
        )
    }
    | {
        token
        for token, name in enumerate(PSParser.symbolicNames)
        if (name.startswith("FUNC_") and name.endswith("_NAME")) or name.startswith("MATRIX_TYPE_")
    }
    | {PSParser.literalNames.index("'''")}
)  # the prime `'`, a token without a symbolic name


class _OldStyleConverter(_Latex2Sympy):
    """latex2sympy2_extended's converter where the old one converted differently."""

    def parse_number(self, text):
        return sympy.Rational(text.replace(",", ""))  # exact decimals: `0.35` is 7/20

    def convert_postfix_list(self, arr, i=0):
        # Juxtaposition always multiplied: `2\frac{1}{2}` is 1, `3 4` is 12 (no mixed fractions).
        if i < len(arr) - 1:
            res = self.convert_postfix(arr[i])
            if isinstance(res, sympy.Expr):
                return self.mul_flat(res, self.convert_postfix_list(arr, i + 1))
        return super().convert_postfix_list(arr, i)

    def convert_frac(self, frac):
        return _true_division(super().convert_frac(frac))

    def convert_mp(self, mp):
        quotient = super().convert_mp(mp)
        return _true_division(quotient) if mp.DIV() or mp.CMD_DIV() or mp.COLON() else quotient

    def convert_binom(self, binom):
        # Unevaluated here (sympy would compute `\binom{10^8}{5\cdot 10^7}` exactly); see `_number`.
        return sympy.binomial(self.convert_expr(binom.upper), self.convert_expr(binom.lower), evaluate=False)

    def convert_func(self, func):
        if func.FUNC_SQRT() and func.root:
            # The new converter takes 1/root with sympy, which evaluates `\sqrt[9^{9^9}]{2}`'s root.
            root = sympy.Pow(self.convert_expr(func.root), -1, evaluate=False)
            return sympy.Pow(self.convert_expr(func.base), root, evaluate=False)
        return super().convert_func(func)

    def convert_relation(self, rel):
        if rel.expr():
            return self.convert_expr(rel.expr())
        lh = self.convert_relation(rel.relation(0))
        rh = self.convert_relation(rel.relation(1))
        if rel.ASSIGNMENT() and isinstance(lh, sympy.Symbol):
            return rh  # `x=3` assigned x and returned 3
        for token, relation in _INEQUALITIES.items():
            if getattr(rel, token)():
                return relation(lh, rh, evaluate=False)  # printed `3 < 4`, which Python evaluated to True
        raise _NoValue("a relation")  # printed as Eq(...), Ne(...) or a list of solutions: eval failed


def _true_division(quotient):
    """The new converter turns a quotient of integers into an exact number; the old one printed
    `128/8`, which Python's true division made the float 16.0 (so `(\\frac{128}{8},2)` was
    `(16.0,2)`, not `(16,2)`)."""
    if not isinstance(quotient, sympy.Integer):
        return quotient
    if abs(quotient) > sys.float_info.max:
        raise _NoValue("integer division result too large for a float")
    return sympy.Float(int(quotient))


_INEQUALITIES = {
    "LT": sympy.StrictLessThan,
    "LTE": sympy.LessThan,
    "GT": sympy.StrictGreaterThan,
    "GTE": sympy.GreaterThan,
}


# ------------------------------------------------------------------------------ numbers, safely


_CONSTANTS = {sympy.S.Pi: math.pi}
_SYMBOLS = {"pi": math.pi, "tau": math.tau}  # names the official eval found in `math`
_FUNCTIONS = {  # sympy functions printed under a name `math` offered the official eval
    sympy.sin: math.sin,
    sympy.cos: math.cos,
    sympy.tan: math.tan,
    sympy.asin: math.asin,
    sympy.acos: math.acos,
    sympy.atan: math.atan,
    sympy.sinh: math.sinh,
    sympy.cosh: math.cosh,
    sympy.tanh: math.tanh,
    sympy.asinh: math.asinh,
    sympy.acosh: math.acosh,
    sympy.atanh: math.atanh,
    sympy.exp: math.exp,
    sympy.log: math.log,
    sympy.floor: math.floor,
}


_COMPARISONS = {
    sympy.StrictLessThan: lambda a, b: a < b,
    sympy.LessThan: lambda a, b: a <= b,
    sympy.StrictGreaterThan: lambda a, b: a > b,
    sympy.GreaterThan: lambda a, b: a >= b,
}


def _number(expr) -> int | float:
    """The value Python computed from the printed expression, for the whitelisted operations only."""
    if isinstance(expr, sympy.UnevaluatedExpr):
        return _number(expr.args[0])
    if isinstance(expr, sympy.Integer):
        return int(expr)
    if isinstance(expr, sympy.Rational):
        return int(expr.p) / int(expr.q)  # printed `p/q`: true division
    if isinstance(expr, sympy.Float):
        return float(expr)
    if expr in _CONSTANTS:
        return _CONSTANTS[expr]
    if isinstance(expr, sympy.Symbol) and expr.name in _SYMBOLS:
        return _SYMBOLS[expr.name]
    if isinstance(expr, sympy.Add):
        return sum(_number(arg) for arg in expr.args)
    if isinstance(expr, sympy.Mul):
        return _product(expr)
    if isinstance(expr, sympy.Pow):
        return _power(*expr.args)
    if isinstance(expr, sympy.factorial):
        return _factorial(_number(expr.args[0]))
    if isinstance(expr, sympy.binomial):
        return _binomial(*(_number(arg) for arg in expr.args))
    if isinstance(expr, sympy.Function) and expr.func in _FUNCTIONS:
        return _FUNCTIONS[expr.func](*(_number(arg) for arg in expr.args))
    if type(expr) in _COMPARISONS:
        return int(_COMPARISONS[type(expr)](_number(expr.lhs), _number(expr.rhs)))  # round(True, 2) is 1
    # Symbols, E, I, oo, nan, Abs, ceiling, Mod, sets, matrices...: NameError or TypeError officially.
    raise _NoValue(f"no value: {type(expr).__name__}")


def _product(expr: sympy.Mul) -> int | float:
    """sympy printed a product as `a*b/(c*d)`: factors with a negative exponent, and rational
    coefficients' denominators, divide (true division, which stays exact for huge integers:
    `(3**1008 - 1)/3**1009` is about 1/3, where a float 3**-1009 would underflow)."""
    numerator, denominator = [], []
    for arg in expr.args:
        if isinstance(arg, sympy.Rational) and not isinstance(arg, sympy.Integer):
            numerator.append(int(arg.p))
            denominator.append(int(arg.q))
        elif isinstance(arg, sympy.Pow) and arg.exp.is_Rational and arg.exp.is_negative:
            denominator.append(_power(arg.base, -arg.exp))
        else:
            numerator.append(_number(arg))
    value = math.prod(numerator)
    return value / math.prod(denominator) if denominator else value


def _power(base, exponent) -> int | float:
    """`base**exponent` as Python computed the printed form (`sqrt(x)`, `1/x`, `x**e`)."""
    if exponent == sympy.S.Half:
        return math.sqrt(_number(base))
    if exponent.is_Rational and exponent.is_negative:
        return 1 / _power(base, -exponent)
    b, e = _number(base), _number(exponent)
    if isinstance(b, int) and isinstance(e, int) and e > 0 and abs(b) > 1 and e * math.log2(abs(b)) > MAX_POWER_BITS:
        raise _NoValue("power too large")  # `9^{9^9}` hung the official eval
    value = b**e  # ints stay exact; a float overflow raises OverflowError, as it did officially
    if isinstance(value, complex):
        raise _NoValue("complex")  # round() raised TypeError
    return value


def _factorial(n: int | float) -> int:
    """`factorial(n)`: math.factorial took integers, and in Python 3.8 (the official run's: its
    repository holds `utils.cpython-38.pyc`) integral floats too (`(\\frac{6}{2})!` is 6)."""
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    if not isinstance(n, int) or not 0 <= n <= MAX_FACTORIAL:
        raise _NoValue("factorial")
    return math.factorial(n)


def _binomial(n: int | float, k: int | float) -> int:
    """sympy evaluated a binomial of integers, printed as an integer; anything else printed as
    `binomial(...)`, a name the official eval did not know."""
    if not (isinstance(n, int) and isinstance(k, int)) or not 0 <= n <= MAX_FACTORIAL:
        raise _NoValue("binomial")
    return math.comb(n, k) if k >= 0 else 0
