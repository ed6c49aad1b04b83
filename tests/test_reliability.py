"""Faults, kills and secrets: real `dvc repro` runs of the sample against a local fake server.

One clean run is the reference. A run whose server fails a fifth of its requests, and a run that
is SIGKILLed again and again at random points of its generation and judging, must both end with
the clean run's bytes, and the killed run must never pay twice for a reply it had received. No
file any of them wrote may hold the API key.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from olympiad_eval.cli.fake_server import JUDGE_MARKER, FakeOpenAI, default_responder, flaky
from tests.support import BIN, KEY, Repo, clone, lock_files, plan_yaml

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("reliability")]  # one worker runs the shared runs

CONCURRENCY = 2
MODEL = f"""\
provider: openai
base_url: {{base_url}}
model: fake-1
api_key_env: OE_E2E_KEY
concurrency: {CONCURRENCY}
max_retries: 8
timeout: 1
samples: 3
generation: {{{{temperature: 0, seed: 0}}}}
"""
JUDGE = f"""\
defaults:
  - llm_base
  - _self_
judges:
  fake:
    base_url: {{base_url}}
    model: fake-judge
    api_key_env: OE_E2E_KEY
    concurrency: {CONCURRENCY}
    max_retries: 8
    timeout: 1
"""
# One suite, one model, one LLM judge: every generate and judge stage of the run is one of the two
# the kills land in, and each run is a dozen stages, not twenty (what the runs test is the stages'
# and the cache's handling of faults and kills, which every family shares). Three samples of each of
# its five problems leave each kind of stage enough requests for its five kills.
PLAN = plan_yaml({"sample_hipho": "sample_hipho"}, ["fake"], ["fakejudge"])
KILLS = 10  # kills that land while a generate or judge stage runs


@pytest.fixture(scope="module")
def server():
    with FakeOpenAI(latency=0.05) as fake:
        yield fake


def pipeline(path: Path, server: FakeOpenAI) -> Repo:
    """A fresh clone whose plan asks one fake model and one fake LLM judge, both on `server`."""
    repo = Repo(clone(path))
    repo.write("conf/model/fake.yaml", MODEL.format(base_url=server.base_url))
    repo.write("conf/judge/fakejudge.yaml", JUDGE.format(base_url=server.base_url))
    repo.write("params.yaml", PLAN)
    return repo


def snapshot(repo: Repo) -> dict[str, bytes]:
    """Every output file and lock file, by path."""
    files = [path for path in (repo.path / "outputs").rglob("*") if path.is_file()]
    return {**{str(path.relative_to(repo.path)): path.read_bytes() for path in files}, **lock_files(repo.path)}


# The dates replies were received (usage files, the judges' conversations, each sample's reply facts,
# and the report pages that show them): a fact of each run, so two runs at other times differ there and
# only there. In the locks, a cell's generation and each judge's folder are outputs, and dependencies
# of what reads them.
DATES = re.compile(rb"(first )?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ(, last \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)?")
DATED = ("outputs/cells", "outputs/report")
# The retries a reply took (in the usage files, each judge reply's record in its conversation, and
# the pages): the only other trace of the faults.
RETRIES = re.compile(rb'(retries(?: |</dt><dd>)|"attempts":|the cell\'s: )\d+')


# How long each reply took (each sample's reply facts, and its problem page): a fact of each run too.
LATENCIES = re.compile(rb'("latency":\s*|latency</dt><dd>)[\d.]+')


def undated(files: dict[str, bytes]) -> dict[str, bytes]:
    """A snapshot with every reply date and latency masked, and its locks without the hashes of
    dated files."""
    return {
        name: yaml.safe_dump(without(data, DATED)).encode()
        if name.endswith("dvc.lock")
        else LATENCIES.sub(rb"\1<seconds>", DATES.sub(b"<date>", data))
        for name, data in files.items()
    }


def cached_replies(repo: Repo) -> int:
    cache = repo.request_cache
    if not cache.exists():
        return 0  # killed before its first request
    with sqlite3.connect(cache) as db:
        return db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]


@pytest.fixture(scope="module")
def clean(server, tmp_path_factory):
    repo = pipeline(tmp_path_factory.mktemp("clean") / "repo", server)
    before, received = Counter(server.answered_bodies), len(server.requests)
    repo.repro()
    repo.requests = len(server.answered_bodies - before)
    repo.kinds = Counter(
        "judge" if JUDGE_MARKER in json.dumps(body["messages"]) else "generate" for body in server.requests[received:]
    )
    assert repo.requests == cached_replies(repo) > 30  # generations and judgments, each sent once
    return repo


@pytest.fixture(scope="module")
def faulted(server, tmp_path_factory):
    repo = pipeline(tmp_path_factory.mktemp("faulted") / "repo", server)
    server.responder = flaky(default_responder, rate=0.2, seed=7, timeout_delay=1.5)
    try:
        repo.repro()
    finally:
        repo.injected, server.responder = Counter(server.responder.injected), default_responder
    return repo


def test_a_run_through_injected_faults_ends_as_a_clean_run(clean, faulted):
    assert set(faulted.injected) == {
        "HTTP 429",
        "HTTP 500",
        "HTTP 503",
        "dropped connection",
        "timeout",
        "garbage body",
        "no message",
        "null content",
    }
    assert sum(faulted.injected.values()) >= 0.15 * clean.requests
    expected, got = snapshot(clean), snapshot(faulted)
    assert sorted(got) == sorted(expected)
    # the only trace of the faults: the retries counted in the usage metrics
    usage = [name for name in expected if name.startswith("outputs/cells/") and name.endswith("/usage.json")]
    assert usage
    retries = 0
    for name in usage:
        clean_usage, faulted_usage = json.loads(expected[name]), json.loads(got[name])
        retries += faulted_usage.pop("retries") - clean_usage.pop("retries")
        dates = [usage.pop("replies_received") for usage in (clean_usage, faulted_usage)]  # each run's own
        assert all(span["first"] <= span["last"] for span in dates), name
        assert faulted_usage == clean_usage
    assert retries > 0
    locks = [name for name in expected if name.endswith("dvc.lock")]
    expected, got = undated(expected), undated(got)
    retried = lambda page: RETRIES.sub(rb"\1<n>", page)  # noqa: E731
    for name in set(expected) - set(usage) - set(locks):
        assert retried(got[name]) == retried(expected[name]), name
    for name in locks:
        assert got[name] == expected[name], name


def without(lock: bytes, folders: tuple[str, ...]) -> dict:
    """dvc.lock less the hashes of the files under `folders` (the cells: their usage's retries and
    dates; the report: the dates it shows)."""
    stages = yaml.safe_load(lock)["stages"]
    for stage in stages.values():
        for entries in (stage.get("deps", []), stage.get("outs", [])):
            entries[:] = [entry for entry in entries if not entry["path"].startswith(folders)]
    return stages


# ---------------------------------------------------------------- kills


class KilledRun:
    """`dvc repro` in its own process group, SIGKILLed by the server the moment it has sent the
    n-th reply of one kind (a generation or a judgment) since the run started. Chosen by progress,
    not by the clock, every kill lands inside a stage of the asked kind however busy the machine:
    the requests of that kind come only from such a stage, and it waits for their replies."""

    KINDS = ("generate", "judge")

    def __init__(self, repo: Repo, log: Path, server: FakeOpenAI, kind: str, nth: int):
        self.kind, self.nth, self.replies = kind, nth, 0
        self._lock = threading.Lock()
        with log.open("ab") as output:
            self.process = subprocess.Popen(
                [str(BIN / "dvc"), "repro"],
                cwd=repo.path,
                env=repo.env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        server.after_answer = self._count

    def _count(self, body: dict) -> None:
        if ("judge" if JUDGE_MARKER in json.dumps(body["messages"]) else "generate") != self.kind:
            return
        with self._lock:
            self.replies += 1
            if self.replies == self.nth:
                os.killpg(self.process.pid, signal.SIGKILL)

    def killed(self) -> bool:
        """Wait for the run to end; whether the kill ended it (not the run finishing first)."""
        self.process.wait()
        return self.process.returncode == -signal.SIGKILL and self.replies >= self.nth


def wait_until_idle(server: FakeOpenAI, quiet: float = 0.5, limit: float = 120.0) -> None:
    """Let the server finish what the dead client had sent: a request still being read is counted
    only once its body is in, and it may still be answered. Every connection of a dead client ends
    (its thread reads the end of the stream), so this waits for none to be open, then for a quiet
    moment in case one was still in the listening socket's queue."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        received = server.received
        time.sleep(quiet)
        if not server.connections and not server.in_flight and server.received == received:
            return
    raise AssertionError(f"the server still has {server.connections} connections open {limit} s after the kill")


def whole_lines(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return text.endswith("\n") and all(json.loads(line) is not None for line in text.splitlines())


@pytest.fixture(scope="module")
def killed(server, clean, tmp_path_factory):
    folder = tmp_path_factory.mktemp("killed")
    repo, rng = pipeline(folder / "repo", server), random.Random(20261129)
    repo.kills, repo.lost, repo.log = [], [], folder / "repro.log"
    before = Counter(server.answered_bodies)
    # Each kill takes at most `most` new replies of its kind: five kills in each kind of stage must
    # leave some of that kind's requests for the next run, or a run would end before its kill.
    most = min(clean.kinds.values()) // (KILLS // 2 + 1)
    try:
        while len(repo.kills) < KILLS:
            kind = KilledRun.KINDS[len(repo.kills) * len(KilledRun.KINDS) // KILLS]  # half in each
            run = KilledRun(repo, repo.log, server, kind, nth=rng.randint(1, most))
            assert run.killed(), f"the run finished before its kill at reply {run.nth} of {kind}: {repo.kills}"
            server.after_answer = None
            wait_until_idle(server)
            answered = server.answered_bodies - before
            # replies the server sent but no client stored, so far (counted with repeats): the only
            # ones a rerun may pay for again
            repo.lost.append(sum(answered.values()) - cached_replies(repo))
            repo.kills.append((kind, run.nth))
            for records in (repo.path / "outputs").rglob("*.jsonl"):
                assert whole_lines(records), f"{records} is half-written"
    finally:
        server.after_answer = None
    repo.repro()
    repo.answered = server.answered_bodies - before
    return repo


def test_killed_at_random_points_a_rerun_ends_as_a_clean_run(clean, killed):
    kinds = Counter(kind for kind, _ in killed.kills)
    print(f"kills (stage, at its n-th reply): {killed.kills}; replies lost in flight so far: {killed.lost}")
    assert kinds == {"generate": KILLS // 2, "judge": KILLS // 2}, killed.kills
    assert undated(snapshot(killed)) == undated(snapshot(clean))
    assert not list((killed.path / "outputs").rglob(".*.tmp"))  # no leftovers of killed writes
    assert "up to date" in killed.dvc("status")


def test_killed_runs_never_resend_a_reply_they_had_received(clean, killed):
    assert len(killed.answered) == clean.requests  # every request was answered ...
    lost_at_each_kill = [now - then for then, now in zip([0, *killed.lost], killed.lost)]
    # a new cell is judged while it is generated: the model's and the judge's requests in flight at once
    assert all(0 <= lost <= 2 * CONCURRENCY for lost in lost_at_each_kill), killed.lost
    # ... once, plus once more for each reply that was on the wire when its run was killed
    twice = {key: count for key, count in killed.answered.items() if count > 1}
    assert sum(killed.answered.values()) == clean.requests + killed.lost[-1], (twice, killed.lost)


# ---------------------------------------------------------------- secrets


def test_no_file_or_log_of_any_run_holds_the_api_key(clean, faulted, killed):
    secret = KEY.encode()
    for repo in (clean, faulted, killed):
        written = [path for path in repo.path.rglob("*") if path.is_file() and ".git" not in path.parts]
        assert any(".dvc/cache" in str(path) for path in written) and (repo.path / "outputs/report").is_dir()
        assert any(path.name == "requests.sqlite" for path in written)
        leaked = [path for path in written if secret in path.read_bytes()]
        assert not leaked, leaked
        assert not [log for log in repo.logs if KEY in log]
    assert secret not in killed.log.read_bytes()
