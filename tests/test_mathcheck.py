"""mathcheck: rule-based answer equivalence, and the worker pool with a hard timeout."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from olympiad_eval.scoring.checks import Equivalence, Verdict
from olympiad_eval.scoring.expressions import to_number
from olympiad_eval.scoring.mathcheck import equivalent
from olympiad_eval.scoring.normalise import clean
from olympiad_eval.scoring.pool import CheckPool
from tests.support import ROOT


def bug(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


# (gold, prediction, rel_tol, unit, expected)
CASES = [
    # accepted ranges include their ends and exclude values outside
    pytest.param(r"\boxed{$[1.21, 1.25]$}", "1.21", 0.0, "A", True, id="range-low-end"),
    pytest.param(r"\boxed{$[1.21, 1.25]$}", "1.25", 0.0, "A", True, id="range-high-end"),
    pytest.param(r"\boxed{$[1.21, 1.25]$}", "1.2308", 0.0, "A", True, id="range-inside"),
    pytest.param(r"\boxed{$[1.21, 1.25]$}", "1.20", 0.0, "A", False, id="range-below"),
    pytest.param(r"\boxed{$[1.21, 1.25]$}", "1.26", 0.0, "A", False, id="range-above"),
    pytest.param(r"\boxed{$[1.21, 1.25]$}", r"I_3 = 1.23\ \mathrm{A}", 0.0, "A", True, id="range-named-with-unit"),
    pytest.param(
        r"\boxed{$[5.21 \times 10^{-1}, 5.28 \times 10^{-1}]$}", "0.525", 0.0, None, True, id="range-sci-inside"
    ),
    pytest.param(
        r"\boxed{$[5.21 \times 10^{-1}, 5.28 \times 10^{-1}]$}",
        r"5.25 \times 10^{-1}",
        0.0,
        None,
        True,
        id="range-sci-sci",
    ),
    pytest.param(
        r"\boxed{$[5.21 \times 10^{-1}, 5.28 \times 10^{-1}]$}", "0.53", 0.0, None, False, id="range-sci-outside"
    ),
    # numeric tolerance: PhysElite accepts 5 %
    pytest.param("280 MeV", "279.7 MeV", 0.05, None, True, id="tol-unit-both"),
    pytest.param("280 MeV", "279.7", 0.05, None, True, id="tol-gold-unit-only"),
    pytest.param("280 MeV", "300 MeV", 0.05, None, False, id="tol-7pct-off"),
    pytest.param("24 m", "25.1 m", 0.05, None, True, id="tol-4.6pct"),
    pytest.param("24 m", "26 m", 0.05, None, False, id="tol-8pct"),
    pytest.param("100", "95", 0.05, None, True, id="tol-exactly-5pct-below"),
    pytest.param("100", "94.9", 0.05, None, False, id="tol-5.1pct-below"),
    pytest.param("100", "105.2", 0.05, None, False, id="tol-5.2pct-above"),
    pytest.param(r"\boxed{$W = 275$}", "274.9", 0.0, "J", False, id="no-tol-is-exact"),
    pytest.param("3.20", "3.2", 0.0, None, True, id="trailing-zero"),
    pytest.param("0", "0.0", 0.0, None, True, id="zero"),
    pytest.param("0", "0.1", 0.0, None, False, id="zero-vs-nonzero"),
    pytest.param("-5", "5", 0.05, None, False, id="sign"),
    # symbols are case-sensitive and a product is not a factor
    pytest.param("Mg", "mg", 0.0, None, False, id="Mg-vs-mg"),
    pytest.param(r"\frac{mg}{k}", r"\frac{Mg}{k}", 0.0, None, False, id="mg-vs-Mg-in-fraction"),
    pytest.param("v_0", "v_0 t", 0.0, None, False, id="v0-vs-v0t"),
    pytest.param("v_0 t", "t v_0", 0.0, None, True, id="commuted-product"),
    pytest.param(r"\theta", r"\Theta", 0.0, None, False, id="theta-vs-Theta"),
    pytest.param("M", "m", 0.0, None, False, id="single-capital-symbol"),
    # a named answer states its right-hand side
    pytest.param("2", r"\beta = 2", 0.0, None, True, id="beta=2"),
    pytest.param(r"\boxed{$W = 275$}", "W = 275", 0.0, "J", True, id="same-equation"),
    pytest.param(r"\boxed{$W = 275$}", "275", 0.0, "J", True, id="gold-equation-pred-value"),
    pytest.param("E = m c^{2}", "E=c^2 m", 0.0, None, True, id="equation-reordered"),
    # units are presentation
    pytest.param("9.8", r"9.8 \text{ m/s}", 0.0, "m/s", True, id="text-unit"),
    pytest.param("9.8", "9.8 m/s", 0.0, "m/s", True, id="bare-unit"),
    pytest.param(r"\boxed{$W = 275$}", r"275\,\mathrm{J}", 0.0, "J", True, id="mathrm-unit"),
    pytest.param("3.20", r"3.20 \mathrm{m/s^2}", 0.0, "m/s^2", True, id="unit-with-power"),
    pytest.param("9.8", r"9.8\ \mathrm{m\,s^{-2}}", 0.0, None, True, id="unit-braced-exponent"),
    pytest.param(
        r"\boxed{$E > 30 \frac{GV}{m}$}",
        r"E > 30 \frac{GV}{m}",
        0.0,
        r"$\frac{GV}{m}$",
        True,
        id="unit-is-part-of-answer",
    ),
    # fractions, decimals, scientific notation, constants
    pytest.param(r"\frac{3}{8}", "0.375", 0.0, None, True, id="fraction-vs-decimal"),
    pytest.param(r"\frac{3}{8}", r"\dfrac{6}{16}", 0.0, None, True, id="dfrac-unreduced"),
    pytest.param(r"\frac{3}{8}", "3/8", 0.0, None, True, id="slash-fraction"),
    pytest.param(r"\frac{3}{8}", "0.38", 0.0, None, False, id="rounded-fraction-no-tol"),
    pytest.param("0.5", r"\frac{1}{2}", 0.0, None, True, id="decimal-vs-fraction"),
    pytest.param(r"1.6 \times 10^{-19}", "1.6e-19", 0.0, None, True, id="times-ten-vs-e"),
    pytest.param(r"2.5 \times 10^{3}", "2500 kg", 0.0, None, True, id="sci-vs-plain-with-unit"),
    pytest.param(r"2.998 \times 10^{8}", r"3.0 \times 10^{8}", 0.05, None, True, id="sci-within-tol"),
    pytest.param(r"\sqrt{2}", "1.41421356", 1e-6, None, True, id="sqrt2-numeric"),
    pytest.param(r"2\pi", "6.2832", 0.0, None, False, id="2pi-rounded-exact"),
    pytest.param("1000", "1{,}000", 0.0, None, True, id="thousands-separator"),
    # multiple choice letters
    pytest.param(r"\boxed{B}", "B", 0.0, None, True, id="mc-letter"),
    pytest.param("B", "(B)", 0.0, None, True, id="mc-parenthesised"),
    pytest.param("B", r"\boxed{B}", 0.0, None, True, id="mc-boxed"),
    pytest.param("B", "C", 0.0, None, False, id="mc-wrong"),
    pytest.param("A", "(A) 13 cm", 0.0, None, False, id="mc-letter-plus-text"),
    pytest.param("B", r"\text{B}", 0.0, None, True, id="mc-text-letter"),
    pytest.param(r"\boxed{A, D}", "A, D", 0.0, None, True, id="mc-multi-same"),
    # equivalent symbolic forms
    pytest.param(r"\sqrt{2gh}", r"\sqrt{2hg}", 0.0, None, True, id="sqrt-2gh-2hg"),
    pytest.param(r"\sqrt{2gh}", r"(2 g h)^{1/2}", 0.0, None, True, id="sqrt-vs-power"),
    pytest.param(r"\sqrt{2gh}", r"\sqrt{gh}", 0.0, None, False, id="sqrt-missing-factor"),
    pytest.param(
        r"\boxed{$v = \sqrt{2 g h (1 - \mu \cot\theta)}$}",
        r"\sqrt{2gh - 2gh\mu\cot\theta}",
        0.0,
        None,
        True,
        id="hipho-expanded",
    ),
    pytest.param(
        r"\boxed{$v = \sqrt{2 g h (1 - \mu \cot\theta)}$}",
        r"\sqrt{2gh(1+\mu\cot\theta)}",
        0.0,
        None,
        False,
        id="hipho-sign-error",
    ),
    pytest.param(r"\frac{1}{2} m v^2", r"\frac{mv^2}{2}", 0.0, None, True, id="kinetic-energy"),
    pytest.param(
        r"r = \frac{1}{B}\sqrt{\frac{2 m U}{q}}", r"\frac{\sqrt{2mU/q}}{B}", 0.05, None, True, id="physelite-radius"
    ),
    # symbols are positive, as physical quantities are: sqrt(x/B^2) is sqrt(x)/B
    pytest.param(
        r"r = \frac{1}{B}\sqrt{\frac{2 m U}{q}}",
        r"\sqrt{\frac{2 m U}{q B^2}}",
        0.05,
        None,
        True,
        id="radius-B-inside-root",
    ),
    # answers that are text with inline maths (real HiPhO: IPhO_2025_2_B_2, IPhO_2025_1_C_4)
    pytest.param(
        r"\boxed{Angular point 3: $z^{\star}$}", r"Angular point 3: z^{\star}", 0.0, None, True, id="text-with-dollars"
    ),
    pytest.param(r"\boxed{[0.94, 0.96] for $R_1$}", "0.95", 0.0, None, True, id="labelled-range"),
    # nothing given
    pytest.param("27", "", 0.0, None, False, id="empty-prediction"),
    pytest.param("27", "$ $", 0.0, None, False, id="only-dollars"),
]


@pytest.mark.parametrize("gold, pred, rel_tol, unit, expected", CASES)
def test_equivalent(gold, pred, rel_tol, unit, expected):
    assert equivalent(gold, pred, rel_tol, unit) is expected


@pytest.mark.parametrize(
    "answer, unit, expected",
    [
        (r"\boxed{$v = 3$}", None, "v = 3"),
        (r"$\displaystyle \left( 1 \right)$.", None, "( 1 )"),
        (r"9.8 \text{ m/s}", None, "9.8"),
        ("24 m", "m", "24"),
        (r"275 \mathrm{J}", "J", "275"),
        (r"\dfrac{1}{2}", None, r"\frac{1}{2}"),
        ("m", "m", "m"),  # the unit alone is not stripped to nothing
    ],
)
def test_clean(answer, unit, expected):
    assert clean(answer, unit) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2.5", 2.5),
        (r"5.21 \times 10^{-1}", 0.521),
        ("1.6e-19", 1.6e-19),
        ("24 m", 24.0),
        (r"\frac{3}{8}", 0.375),
        ("x + 1", None),
        ("g h", None),
    ],
)
def test_to_number(text, expected):
    value = to_number(text)
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------- CheckPool
# No assertion here rests on how busy the machine is: a check that must time out never finishes
# (TOWER), and every check that must finish has a timeout hundreds of times what it needs.

TOWER = Equivalence("9^{9^{9^{9}}}", "x")  # sympy expands the tower for ever: it can only time out
ROOMY = 60  # seconds: a check that must finish does, however busy the machine


def test_check_many_returns_verdicts_in_order():
    jobs = [
        Equivalence("27", "28"),
        Equivalence(r"\frac{3}{8}", "0.375"),
        Equivalence("Mg", "mg"),
        Equivalence(r"\sqrt{2gh}", r"\sqrt{2hg}"),
        Equivalence("24 m", "25.1 m", 0.05),
        Equivalence("B", "C"),
    ]
    with CheckPool(workers=2, cpu_seconds=ROOMY) as pool:
        verdicts = pool.check_many(jobs)
    assert [v.correct for v in verdicts] == [False, True, False, True, True, False]


def test_check_many_of_nothing_is_nothing():
    with CheckPool(workers=1) as pool:
        assert pool.check_many([]) == []


def test_check_many_records_a_crash_as_an_undecided_verdict():
    with CheckPool(workers=1, cpu_seconds=ROOMY) as pool:
        verdicts = pool.check_many([Equivalence("1", None), Equivalence("1", "1")])
    assert verdicts[0].correct is None and verdicts[0].reason.startswith("check failed")
    assert verdicts[1] == Verdict(True)


def test_workers_give_way_only_to_a_caller_that_sends_requests():
    """An LLM judge's cell sends requests while its checks run: its workers are reniced. A rules-only
    cell sends nothing, and its workers keep the stage's own priority (reniced, they would wait on
    every other process of a busy machine)."""
    own = os.getpriority(os.PRIO_PROCESS, 0)
    for give_way, expected in ((False, own), (True, max(10, own))):
        with CheckPool(workers=1, cpu_seconds=ROOMY, give_way=give_way) as pool:
            assert pool.check_many([Equivalence("1", "1")]) == [Verdict(True)]
            [worker] = pool._warm[None]
            assert os.getpriority(os.PRIO_PROCESS, worker.process.pid) == expected, give_way


def test_a_check_that_overruns_is_undecided_and_the_pool_carries_on():
    """The tower never finishes: that the batch returns at all shows it was not awaited. Its
    worker is replaced; the checks after it, in the same batch and the next, get verdicts."""
    jobs = [Equivalence("2", "2.0"), TOWER, Equivalence(r"\frac{3}{8}", "0.375"), Equivalence("27", "28")]
    with CheckPool(workers=2, cpu_seconds=5) as pool:  # 5 s: thousands of times what the others need
        verdicts = pool.check_many(jobs)
        again = pool.check_many([Equivalence("1", "1")])  # a fresh worker replaced the stuck one
    assert [v.correct for v in verdicts] == [True, None, True, False]
    assert verdicts[1].reason == "check exceeded its CPU budget of 5 s"
    assert again == [Verdict(True)]


def test_a_worker_does_not_run_the_script_that_started_its_pool_again(tmp_path):
    """multiprocessing runs the caller's main script again in each worker it starts; a stage
    script's imports would cost each worker about half a second of CPU. Each run of the script
    here leaves a line: one, its own, however many workers start, a replaced one too."""
    runs = tmp_path / "runs.txt"
    script = tmp_path / "stage.py"
    script.write_text(
        f"with open({str(runs)!r}, 'a') as runs:\n"
        "    runs.write(__name__ + '\\n')\n"
        "if __name__ == '__main__':\n"
        "    from olympiad_eval.scoring.checks import Equivalence, Options\n"
        "    from olympiad_eval.scoring.pool import CheckPool\n"
        f"    jobs = [Equivalence('1', '1'), {TOWER!r}, Equivalence('2', '2')]\n"
        "    with CheckPool(workers=2, cpu_seconds=1) as pool:\n"
        "        print(pool.check_many(jobs))\n"
    )
    path = os.pathsep.join([str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])
    environment = {**os.environ, "PYTHONPATH": path}
    result = subprocess.run([sys.executable, str(script)], env=environment, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "None, reason='check exceeded its CPU budget" in result.stdout  # a worker was replaced
    assert runs.read_text().splitlines() == ["__main__"]


def test_the_timeout_counts_the_check_not_a_workers_start(tmp_path):
    """Every new Python process here takes 1.5 s to start (as on a machine whose cores are busy),
    longer than the 1 s timeout; so does the server the workers fork from. The first check, and the
    one after a worker was replaced, still get their verdicts, because a check's clock starts only
    once a warm worker takes it. In a fresh interpreter: this one's fork server started long ago."""
    (tmp_path / "sitecustomize.py").write_text("import time\ntime.sleep(1.5)\n")
    child = (
        "from olympiad_eval.scoring.pool import CheckPool\n"
        "from olympiad_eval.scoring.checks import Equivalence, Options\n"
        f"jobs = [Equivalence('1', '1'), {TOWER!r}, Equivalence('2', '2')]\n"
        "with CheckPool(workers=1, cpu_seconds=1) as pool:\n"
        "    print(pool.check_many(jobs))\n"
    )
    path = os.pathsep.join([str(tmp_path), str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])
    result = subprocess.run(
        [sys.executable, "-c", child],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == repr(
        [Verdict(True), Verdict(None, "check exceeded its CPU budget of 1 s"), Verdict(True)]
    )
