"""Rule verdicts kept beside the request cache (`scoring.verdicts`): a check is decided once, by
whichever stage meets it first; anything that decides it (its fields, the options, the CPU budget,
the code) is in its key; an undecided verdict is never kept."""

from __future__ import annotations

import dataclasses
import sqlite3
import sys
from pathlib import Path

import pytest

import olympiad_eval.scoring.mathcheck as mathcheck
from olympiad_eval.core.code import reached
from olympiad_eval.scoring.checks import Equivalence, Options, ProtocolCheck, Verdict
from olympiad_eval.scoring.pool import CheckPool
from olympiad_eval.scoring.verdicts import Verdicts, code_version, store_path, verdict_key


def same(a: str, b: str) -> bool:
    """A benchmark's own comparison, as a protocol check names one."""
    return a == b


RIGHT = Equivalence("\\frac{1}{2}", "0.5")
WRONG = Equivalence("\\frac{1}{2}", "0.6")


def decided(pool: CheckPool, checks: list) -> tuple[list[Verdict], bool]:
    """The pool's verdicts, and whether it started a worker for them."""
    verdicts = pool.check_many(checks)
    return verdicts, bool(pool._warm or pool._starting)


@pytest.mark.parametrize("cache", ["requests.sqlite", "shared-folder"])
def test_a_check_is_decided_once_and_then_found_without_a_worker(tmp_path, cache):
    with CheckPool(1, 10.0, verdicts=Verdicts(tmp_path / cache)) as pool:
        first, started = decided(pool, [RIGHT, WRONG])
    assert [v.correct for v in first] == [True, False] and started
    with CheckPool(1, 10.0, verdicts=Verdicts(tmp_path / cache)) as pool:
        again, started = decided(pool, [WRONG, RIGHT])
    assert again == [first[1], first[0]] and not started  # no worker for what was decided
    assert store_path(tmp_path / cache).exists() and not (tmp_path / cache).exists()  # beside the request cache


def test_what_decides_a_verdict_is_in_its_key():
    base = verdict_key(RIGHT, Options(), 10.0)
    assert verdict_key(RIGHT, Options(), 10.0) == base
    others = [
        verdict_key(dataclasses.replace(RIGHT, predicted="0.50"), Options(), 10.0),
        verdict_key(dataclasses.replace(RIGHT, rel_tol=0.05), Options(), 10.0),
        verdict_key(dataclasses.replace(RIGHT, unit="m"), Options(), 10.0),
        verdict_key(RIGHT, Options(percent=True), 10.0),
        verdict_key(RIGHT, Options(), 5.0),
        verdict_key(ProtocolCheck(same, ("1", "2")), Options(), 10.0),
        verdict_key(ProtocolCheck(same, ("1", "1")), Options(), 10.0),
    ]
    assert len({base, *others}) == 1 + len(others)


def test_the_code_of_a_check_is_its_module_and_what_it_reaches(tmp_path, monkeypatch):
    """mathcheck's verdicts change with the modules it imports (normalise, expressions), so those are
    its code too; a check function outside the package is named by its own file."""
    src = tmp_path / "outside_checks.py"
    src.write_text("def same(a, b):\n    return a == b\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import outside_checks

    before = verdict_key(ProtocolCheck(outside_checks.same, ("a", "a")), Options(), 1.0)
    src.write_text("def same(a, b):\n    return a != b\n", encoding="utf-8")
    code_version.cache_clear()
    after = verdict_key(ProtocolCheck(outside_checks.same, ("a", "a")), Options(), 1.0)
    assert before != after

    root = Path(mathcheck.__file__).resolve().parents[2]
    assert {"olympiad_eval.scoring.normalise", "olympiad_eval.scoring.expressions"} <= reached(
        [Path(mathcheck.__file__)], root
    )
    del sys.modules["outside_checks"]


def test_an_undecided_verdict_is_not_kept_and_a_torn_row_is_decided_again(tmp_path):
    verdicts = Verdicts(tmp_path / "requests.sqlite")
    verdicts.put("undecided", Verdict(None, "over its CPU seconds"))
    verdicts.put("decided", Verdict(True))
    assert verdicts.get("undecided") is None and verdicts.get("decided") == Verdict(True)
    verdicts.close()
    with sqlite3.connect(store_path(tmp_path / "requests.sqlite")) as db:
        db.execute("UPDATE replies SET reply = '{\"correct\": tru' WHERE key = 'decided'")
    assert Verdicts(tmp_path / "requests.sqlite").get("decided") is None
