"""Physics answers judged by rules: a table of gold/prediction pairs (written for this project, not
taken from any benchmark), one group per rule of `olympiad_eval.scoring.mathcheck`, and hostile input
through `CheckPool`."""

from __future__ import annotations

import time

import pytest

from olympiad_eval.scoring.checks import Equivalence, Options, Verdict
from olympiad_eval.scoring.mathcheck import equivalent
from olympiad_eval.scoring.pool import CheckPool


def case(gold, pred, expected, id, rel_tol=0.0, unit=None):
    return pytest.param(gold, pred, rel_tol, unit, expected, id=id)


# (gold, prediction, rel_tol, unit, expected)
PAIRS = [
    # symbols are case-sensitive, and positive (physical quantities), which must not merge cases
    case(r"Mg\sin\theta", r"mg\sin\theta", False, "case-Mg-mg"),
    case(r"\frac{Mg}{k}", r"\frac{gM}{k}", True, "case-same-product"),
    case(r"\frac{q}{4\pi\varepsilon_0 R^2}", r"\frac{Q}{4\pi\varepsilon_0 R^2}", False, "case-q-Q"),
    case("L", "l", False, "case-L-l"),
    case(r"\sqrt{\frac{2mU}{qB^2}}", r"\frac{1}{B}\sqrt{\frac{2mU}{q}}", True, "positive-B-out-of-root"),
    case(r"\sqrt{\frac{2MU}{qB^2}}", r"\frac{1}{B}\sqrt{\frac{2mU}{q}}", False, "positive-keeps-case"),
    case(r"\sqrt{\frac{k}{m}}", r"\frac{\sqrt{k}}{\sqrt{m}}", True, "positive-root-of-ratio"),
    case(r"\sqrt{R^2\omega^2}", r"R\omega", True, "positive-root-of-square"),
    case(r"\ln\frac{V_2}{V_1}", r"\ln V_2 - \ln V_1", True, "positive-log-of-ratio"),
    # units are stripped without eating variables
    case("3.0", "3.0 m/s", True, "unit-bare-m/s"),
    case("9.8", r"9.8\,\mathrm{m\,s^{-2}}", True, "unit-mathrm-negative-power"),
    case("v_0", "v_0 t", False, "unit-not-a-variable-t"),
    case("v_0 t", "v_0", False, "unit-variable-kept-in-gold"),
    case("2", "2x", False, "unit-2x-is-not-2"),
    case("2x", "2", False, "unit-2-is-not-2x"),
    case("12.5", r"12.5 \text{ N}", True, "unit-text-N"),
    case(r"1.2 \times 10^{3}", r"1.2 \times 10^{3}\ \mathrm{kg\,m^{-3}}", True, "unit-after-sci"),
    case("6.0", "6.0 N·m", True, "unit-unicode-dot"),
    case("37.19 m", "55.78 m", False, "unit-same-unit-other-number"),
    case("2 m g", "3 m g", False, "unit-or-product-other-number"),
    case("2 m g", "2mg", True, "unit-or-product-2mg"),
    case("4.7", "4.7 μF", True, "unit-unicode-micro"),
    case(r"22.4\ \mu\mathrm{m}", "22.4", True, "unit-mu-mathrm-in-gold"),
    case("350", "350 K", True, "unit-kelvin"),
    case("25", "25 °C", True, "unit-celsius-is-no-angle"),
    case("2mg", "2 mg", True, "unit-2-mg-is-a-product-too"),
    case("2mg", "2", False, "unit-2mg-is-not-2"),
    case("35%", "35", True, "unit-percent"),
    case(r"\frac{mg}{k}", r"\frac{mg}{k}\ \mathrm{m}", True, "unit-after-expression"),
    case("1.5", "1.5", True, "unit-in-slot", unit="kg"),
    # degrees: every spelling; radians only when the gold states its unit
    case(r"30^{\circ}", r"30^\circ", True, "deg-circ"),
    case(r"30^{\circ}", "30°", True, "deg-unicode"),
    case(r"30^{\circ}", "30 degrees", True, "deg-word"),
    case(r"30^{\circ}", r"30\text{ deg}", True, "deg-text"),
    case(r"30^{\circ}", r"\frac{\pi}{6}", True, "deg-gold-bare-pred-radians"),
    case(r"30^{\circ}", r"\frac{\pi}{6}\ \text{rad}", True, "deg-gold-pred-rad"),
    case(r"30^{\circ}", r"30\ \text{rad}", False, "deg-gold-30-rad"),
    case(r"30^{\circ}", r"60^{\circ}", False, "deg-wrong-angle"),
    case("30", r"30^{\circ}", True, "deg-mark-is-presentation"),
    case(r"\frac{\pi}{6}", r"30^{\circ}", False, "deg-gold-without-unit-no-conversion"),
    case(r"\frac{\pi}{6}\ \mathrm{rad}", r"30^{\circ}", True, "rad-gold-states-unit"),
    case(r"\frac{\pi}{6}", "30°", True, "rad-unit-in-slot", unit="rad"),
    case("37", "0.6458", True, "deg-slot-pred-radians", rel_tol=0.01, unit="degrees"),
    # names and equations
    case("2", r"\beta = 2", True, "name-pred"),
    case(r"\beta = 2", "2", True, "name-gold"),
    case(r"T = 2\pi\sqrt{\frac{L}{g}}", r"2\pi\sqrt{L/g}", True, "name-gold-expression"),
    case(r"v = \sqrt{2gh}", r"v_f = \sqrt{2gh}", True, "name-is-a-label"),
    case(r"\sqrt{2gh}", r"v = \sqrt{2gh} \approx 6.3", True, "name-chain-of-values"),
    case("y = 2x + 1", "y = 1 + 2x", True, "eq-reordered"),
    case("y = 2x + 1", "2x - y + 1 = 0", True, "eq-rearranged"),
    case("y = 2x + 1", "2y = 4x + 2", True, "eq-scaled"),
    case("y = 2x + 1", "y = 2x - 1", False, "eq-sign-error"),
    case("mg - T = ma", "T = m(g - a)", True, "eq-newton-solved-for-T"),
    case("mg - T = ma", "T = m(g + a)", False, "eq-newton-wrong"),
    case("v^2 = 2gh", r"v = \sqrt{2gh}", True, "eq-same-positive-root"),
    case("E = mc^2", "m = E/c^2", True, "eq-solved-for-other-symbol"),
    case(r"\frac{dp}{dz} = -\rho g", r"\frac{dp}{dz} = -g\rho", True, "eq-derivative"),
    case(r"\frac{dp}{dz} = -\rho g", r"\frac{dq}{dz} = -\rho g", False, "eq-other-derivative"),
    case(r"m\ddot{x} + kx = 0", "0", False, "eq-not-answered-by-its-zero"),
    # inequalities
    case(r"v < \sqrt{gR}", r"\sqrt{gR} > v", True, "ineq-turned-round"),
    case(r"v < \sqrt{gR}", r"v \leq \sqrt{gR}", False, "ineq-strictness"),
    case(r"v < \sqrt{gR}", r"v > \sqrt{gR}", False, "ineq-direction"),
    case(r"\mu \geq \tan\theta", r"\tan\theta \leq \mu", True, "ineq-geq-leq"),
    # accepted ranges include their ends, labelled or not
    case("[2.40, 2.60]", "2.40", True, "range-low-end"),
    case("[2.40, 2.60]", "2.60 m", True, "range-high-end-unit"),
    case("[2.40, 2.60]", "2.61", False, "range-above"),
    case("[1.5, 1.7] for $T_1$", r"T_1 = 1.6\ \mathrm{s}", True, "range-labelled"),
    case("[1.5, 1.7] for $T_1$", "1.45", False, "range-labelled-below"),
    case(r"[3.0 \times 10^{-5}, 3.4 \times 10^{-5}]", "3.2e-5", True, "range-sci"),
    # numbers within a relative tolerance of the gold
    case("4.90", "5.0", True, "tol-2pct", rel_tol=0.05),
    case("4.90", "5.2", False, "tol-6pct", rel_tol=0.05),
    case("4.90", "5.0", False, "tol-none-is-exact"),
    case(r"1.50 \times 10^{11}", "1.49e11", True, "tol-sci", rel_tol=0.01),
    case("-273", "273", False, "tol-sign", rel_tol=0.05),
    case("0", "0.001", False, "tol-zero-gold", rel_tol=0.05),
    case(
        r"0.39\frac{1}{b}\sqrt{\frac{\tau}{\rho}}",
        r"\frac{0.4}{b}\sqrt{\frac{\tau}{\rho}}",
        True,
        "tol-decimal-coefficient",
        rel_tol=0.05,
    ),
    case(r"\frac{2}{5}MR^2", "0.41MR^2", False, "tol-exact-coefficient", rel_tol=0.05),
    case(r"\frac{2}{5}MR^2", "0.4MR^2", True, "decimal-of-exact-coefficient"),
    # intervals and tuples
    case("(0, 1]", "(0,1]", True, "interval-same"),
    case("(0, 1]", "[0,1]", False, "interval-closed"),
    case("(0, 1]", "(0, 1)", False, "interval-open"),
    case(r"[0, \frac{\pi}{2})", r"[0, \pi/2)", True, "interval-equal-ends"),
    case(r"(-\infty, -2) \cup (2, \infty)", r"(-\infty,-2)\cup(2,\infty)", True, "interval-union"),
    case("(0, c)", r"v \in (0, c)", True, "interval-membership"),
    case("(2, 3, 6)", "(2,3,6)", True, "tuple-same"),
    case("(2, 3, 6)", "(3, 2, 6)", False, "tuple-order"),
    # scientific notation in every common form
    case(r"3\times10^{8}", "3e8", True, "sci-e"),
    case(r"3\times10^{8}", r"3 \cdot 10^8", True, "sci-cdot"),
    case(r"3\times10^{8}", "3E+08", True, "sci-E-plus"),
    case(r"3\times10^{8}", "3×10⁸", True, "sci-unicode"),
    case(r"6.63\times10^{-34}", "6.63×10⁻³⁴", True, "sci-unicode-negative"),
    case(r"6.63\times10^{-34}", "6.63e-33", False, "sci-wrong-exponent"),
    case(r"1.6\times10^{-19}\ \mathrm{C}", r"1.6 \times 10^{-19} C", True, "sci-both-units"),
    case(r"2.0\times10^{5}", "200000", True, "sci-vs-plain"),
    case("310^{3}", "3000", False, "sci-needs-an-operator"),
    # several answers in one box: element-wise, in order
    case("2.0, 3.5", "2, 3.50", True, "multi-same"),
    case("2.0, 3.5", "3.5, 2.0", False, "multi-order"),
    case("2.0, 3.5", "2.0", False, "multi-missing-part"),
    case(r"12\ \mathrm{V}, 3\ \mathrm{A}", "12, 3", True, "multi-units"),
    case(r"v_1 = \frac{2}{3}v_0, v_2 = \frac{5}{3}v_0", r"\frac{2v_0}{3}, \frac{5v_0}{3}", True, "multi-named"),
    case("A, C", "A,C", True, "multi-choice"),
    case("A, C", "C, A", False, "multi-choice-order"),
    # equivalent forms
    case("C", "(c)", True, "choice-letter"),
    case(r"\frac{\mu_0 I}{2\pi r}", r"\frac{2 \mu_0 I}{4 \pi r}", True, "form-unreduced"),
    case(r"\frac{1}{2}kA^2", r"\frac{kA^2}{2}", True, "form-half"),
    case(r"\omega = \sqrt{\frac{g}{L}}", r"\sqrt{g/L}\ \mathrm{rad/s}", True, "form-unit-rad-per-s"),
    case(r"e^{-t/\tau}", r"\exp(-t/\tau)", True, "form-exp"),
    # a letter's variant glyph is the same letter
    case(r"\frac{q}{\varepsilon_0 A}", r"\frac{q}{\epsilon_0 A}", True, "variant-epsilon"),
    case(r"\epsilon_r", r"\varepsilon_r", True, "variant-epsilon-in-pred"),
    case(r"\Phi_0 \cos\varphi", r"\Phi_0 \cos\phi", True, "variant-phi"),
    case(r"\omega t + \phi", "ωt + φ", True, "variant-phi-unicode"),
    case(r"2\vartheta", r"2\theta", True, "variant-theta"),
    case(r"\varphi", r"\theta", False, "variant-phi-is-not-theta"),
    case(r"\varepsilon", "e", False, "variant-epsilon-is-not-e"),
    # trigonometric functions of a number of degrees take it in degrees
    case(r"\frac{\sqrt{3}}{2}", r"\sin 60^\circ", True, "trig-sin-60-degrees"),
    case(r"\sin 60^\circ", r"\frac{\sqrt{3}}{2}", True, "trig-degrees-in-gold"),
    case(r"\frac{\sqrt{3}}{2}", r"\cos(30^{\circ})", True, "trig-cos-parenthesised"),
    case("1", r"\tan 45°", True, "trig-tan-unicode-degree"),
    case("0.75", r"\sin^2 60^\circ", True, "trig-squared"),
    case(r"mg\sin 30^\circ", r"\frac{mg}{2}", True, "trig-in-a-product"),
    case(r"\frac{1}{2}", r"\sin 60^\circ", False, "trig-sin-60-is-not-a-half"),
    case(r"\sin 1", r"\sin 1^\circ", False, "trig-radians-are-not-degrees"),
    # a lone pair of braces is grouping
    case("4", "{4}", True, "braced-value"),
    case("{2.5}", "2.5", True, "braced-gold"),
    case("4", "{{4}}", True, "braced-twice"),
    case("1, 2", "{1}, {2}", True, "braced-parts"),
    case("4", "{5}", False, "braced-other-value"),
    case("4", r"\{4, 5\}", False, "braced-set-is-a-set"),
    # a gold written as a set is answered in any order; its elements keep theirs
    case(r"\{1, 2\}", "2, 1", True, "set-any-order"),
    case(r"\{1, 2\}", r"\{2, 1\}", True, "set-against-set"),
    case(r"\{\frac{1}{2}, 3\}", "3, 0.5", True, "set-values"),
    case(r"\{1, 2\}", "1, 3", False, "set-other-element"),
    case(r"\{1, 2\}", "1, 2, 3", False, "set-extra-element"),
    case(r"\{1, 1, 2\}", "1, 2, 2", False, "set-each-element-once"),
    case(r"\{(1, 2), (3, 4)\}", "(3, 4), (1, 2)", True, "set-of-pairs"),
    case(r"\{(1, 2), (3, 4)\}", "(4, 3), (1, 2)", False, "set-pairs-stay-ordered"),
    case(r"\{\}", r"\emptyset", True, "set-empty"),
    case(
        r"\frac{1}{2}\begin{pmatrix} 1 & a \\ b & 2 \end{pmatrix}",
        r"\begin{pmatrix} 0.5 & a/2 \\ b/2 & 1 \end{pmatrix}",
        True,
        "form-matrix",
    ),
]


@pytest.mark.parametrize("gold, pred, rel_tol, unit, expected", PAIRS)
def test_physics_pairs(gold, pred, rel_tol, unit, expected):
    assert equivalent(gold, pred, rel_tol, unit) is expected


def test_the_table_covers_enough_pairs():
    assert len(PAIRS) >= 60


# ---------------------------------------------------------------- rules only some protocols allow

PERCENT, UNORDERED = Options(percent=True), Options(unordered=True)


@pytest.mark.parametrize(
    "gold, pred, options, expected",
    [
        ("0.6", "60%", None, False),  # off by default: `%` is dropped, so `60%` is 60
        ("60", "60%", None, True),
        ("0.6", "60%", PERCENT, True),
        ("0.6", r"60\%", PERCENT, True),
        (r"60\%", "0.6", PERCENT, True),  # a gold in percent, answered by the fraction
        ("60", "60%", PERCENT, True),  # the dropped `%` still reads as before
        ("0.125", r"12.5 \%", PERCENT, True),
        ("0.6", "60", PERCENT, False),  # without a `%` a number is itself
        ("0.6", "6%", PERCENT, False),
        ("x", "60%", PERCENT, False),
        ("1, 2", "2, 1", None, False),  # in order by default
        ("1, 2", "2, 1", UNORDERED, True),
        (r"\frac{1}{2}, 3", "3, 0.5", UNORDERED, True),
        ("1, 2", "2, 2", UNORDERED, False),  # each gold part its own prediction part
        ("1, 2", "1", UNORDERED, False),
        ("(1, 2), (3, 4)", "(3, 4), (1, 2)", UNORDERED, True),
        ("(1, 2), (3, 4)", "(2, 1), (3, 4)", UNORDERED, False),  # inner pairs stay ordered
        ("4", "4", UNORDERED, True),
        ("0.6, 0.2", "20%, 60%", PERCENT | UNORDERED, False),  # percent reads a whole answer only
        ("0.6", "60%", Options(percent=True) | Options(), True),
    ],
)
def test_protocol_options(gold, pred, options, expected):
    assert equivalent(gold, pred, 0.0, None, options) is expected


def test_a_slot_in_percent_keeps_its_percentages():
    """A slot whose unit is `%` states its gold in percent: there `%` is the unit, not a number."""
    assert equivalent("60", "60%", 0.0, "%", PERCENT) is True
    assert equivalent("0.6", "60%", 0.0, "%", PERCENT) is False


def test_unordered_parts_are_matched_not_taken_greedily():
    # `0.5` answers both gold parts within 10%; greedily given to the first, the second would go unanswered
    assert equivalent("0.52, 0.5", "0.5, 0.56", 0.1, None, UNORDERED) is True


def test_options_add_up_and_come_from_a_config_mapping():
    assert PERCENT | UNORDERED == Options(percent=True, unordered=True)
    assert Options.from_mapping({"percent": True}) == PERCENT
    assert Options.from_mapping(None) == Options()
    with pytest.raises(ValueError, match="unknown check option 'percents'"):
        Options.from_mapping({"percents": True})
    with pytest.raises(ValueError, match="must be true or false"):
        Options.from_mapping({"percent": "yes"})


def test_the_pool_applies_the_cells_options_and_each_checks_own():
    jobs = [Equivalence("0.6", "60%"), Equivalence("1, 2", "2, 1"), Equivalence("1, 2", "2, 1", 0.0, None, UNORDERED)]
    with CheckPool(workers=1, cpu_seconds=20) as pool:
        assert [v.correct for v in pool.check_many(jobs)] == [False, False, True]
    with CheckPool(workers=1, cpu_seconds=20, options=PERCENT) as pool:
        assert [v.correct for v in pool.check_many(jobs)] == [True, False, True]


# ---------------------------------------------------------------- hostile input

HUNDRED_KB = "x+" * 50_000 + "1"


@pytest.mark.parametrize(
    "gold, pred",
    [
        ("1", HUNDRED_KB),
        (HUNDRED_KB, "1"),
        ("1", "{" * 2_999),  # nesting that antlr would take minutes over
        ("1", r"\sin(" * 100 + "x" + ")" * 100),
    ],
    ids=["100KB-pred", "100KB-gold", "deep-braces", "deep-parentheses"],
)
def test_hostile_input_is_refused_in_process_at_once(gold, pred):
    started = time.process_time()  # this process's CPU seconds: a busy machine does not add to them
    assert equivalent(gold, pred) is False
    assert time.process_time() - started < 2


def test_hostile_input_through_the_pool_finishes_within_the_timeout():
    """Returning at all shows that no tower was awaited past the timeout (the check's own: a
    worker's start is not counted). 5 s: thousands of times what the ordinary checks need, so
    that a busy machine cannot time them out."""
    jobs = [
        Equivalence("9^{9^{9}}", "x"),  # a 370-million-digit integer
        Equivalence("10^{10^{10}}", "1"),  # ten billion digits
        Equivalence("1", HUNDRED_KB),
        Equivalence("2", "2.0"),
        Equivalence("B", "C"),
    ]
    with CheckPool(workers=2, cpu_seconds=5) as pool:
        verdicts = pool.check_many(jobs)
        again = pool.check_many([Equivalence("3e8", "3E+08")])  # fresh workers carry on
    # the towers: undecided when the worker was stopped, or False; never a hang, never True
    assert all(v.correct is False or v == Verdict(None, "check exceeded its CPU budget of 5 s") for v in verdicts[:2])
    assert verdicts[2:] == [Verdict(False), Verdict(True), Verdict(False)]
    assert again == [Verdict(True)]
