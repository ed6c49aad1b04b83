"""Kill the generation of a cell (`stages/generate.py`, as its generate stage runs it) with SIGKILL
mid-way: the rerun sends only what had no reply, and writes exactly what an uninterrupted run writes."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time

from olympiad_eval.cli.fake_server import FakeOpenAI
from olympiad_eval.core.layout import Layout
from tests.support import ROOT

SAMPLES = 8  # x 5 problems of the HiPhO sample = 40 requests


def by_seed(body: dict) -> str:
    return f"<answer>[\\boxed{{{body['seed']}}}]</answer>"


def command(outputs, cache, base_url) -> list[str]:
    return [
        sys.executable,
        str(ROOT / "stages/generate.py"),
        "model=gpt-4o",
        "cell.suite=sample_hipho",
        f"paths.outputs={outputs}",
        f"paths.request_cache={cache}",
        f"model.base_url={base_url}",
        "model.api_key_env=null",
        "model.concurrency=2",
        f"model.samples={SAMPLES}",
        "+model.generation.seed=0",
    ]


def cached(cache) -> int:
    with sqlite3.connect(cache) as db:
        return db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]


def body_key(body: dict) -> str:
    return json.dumps(body, sort_keys=True)


def test_a_killed_run_resumes_without_paying_twice(render_suite, tmp_path):
    outputs = render_suite("sample_hipho", "sample_hipho")
    out = Layout(outputs).generations("hipho", "sample_hipho", "gpt-4o")
    with FakeOpenAI(by_seed, latency=0.05) as server:
        stage = subprocess.Popen(
            command(outputs, tmp_path / "cache.sqlite", server.base_url),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while server.answered < 12 and time.monotonic() < deadline and stage.poll() is None:
            time.sleep(0.01)
        stage.kill()  # SIGKILL: no cleanup of any kind
        stage.wait()
        assert stage.returncode == -9
        assert not out.exists()  # nothing half-written for DVC to cache
        answered_before = cached(tmp_path / "cache.sqlite")
        sent_before = server.count()
        assert 0 < answered_before < SAMPLES * 5  # killed mid-way

        subprocess.run(
            command(outputs, tmp_path / "cache.sqlite", server.base_url), cwd=ROOT, check=True, capture_output=True
        )
        resent = [body_key(body) for body in server.requests[sent_before:]]
        assert len(resent) == SAMPLES * 5 - answered_before  # exactly the requests with no reply yet
        assert len(set(resent)) == len(resent)
        assert len({body_key(body) for body in server.requests}) == SAMPLES * 5
        resumed = out.read_bytes()

        # an uninterrupted run, with a cache of its own, writes the same bytes
        subprocess.run(
            command(outputs, tmp_path / "clean.sqlite", server.base_url), cwd=ROOT, check=True, capture_output=True
        )
        assert server.count() == sent_before + len(resent) + SAMPLES * 5
    assert resumed == out.read_bytes()
