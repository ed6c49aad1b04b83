"""End to end: real `dvc repro` runs in a temporary copy of the repository.

The copy is a fresh git repository holding what would be committed (tracked and unignored files),
so these tests see what a user sees after `git clone`.
"""

from __future__ import annotations

import json
import re
import shutil
import sys

import pandas as pd
import pytest

from olympiad_eval.cli.fake_server import JUDGE_MARKER, FakeOpenAI, default_responder
from olympiad_eval.core.plan import read_plan
from tests.support import KEY, REQUEST_CACHE_VARIABLE, Repo, clone, lock_files, plan_yaml

pytestmark = pytest.mark.e2e


def test_a_fresh_clone_reproduces_the_sample_tables_offline(tmp_path):
    repo = Repo(clone(tmp_path / "repo"))
    committed_locks = lock_files(repo.path)
    ran = repo.repro()
    assert ran == sorted(repo.addresses())  # every stage of the plan ran
    families = read_plan(repo.path / "params.yaml")["families"]
    stages = ("fetch", "render", "generate", "judge", "pages", "aggregate")
    # the report's, and one per stage of each benchmark family
    assert set(committed_locks) == {"dvc.lock"} | {f"pipelines/{f}/{s}/dvc.lock" for f in families for s in stages}
    for benchmark in read_plan(repo.path / "params.yaml")["benchmarks"]:
        tables = repo.layout.tables(benchmark)
        assert (tables / "tables.md").read_text(encoding="utf-8").startswith(f"## {benchmark}")
        assert (tables / "summary.csv").is_file()
        for suite, models in repo.metrics(benchmark).items():
            reference = models["reference"]["rule"]
            assert (reference["score"], reference["coverage"]) == (100.0, 1.0), (suite, reference)
    # same inputs, same bytes: the committed locks are reproduced exactly
    assert lock_files(repo.path) == committed_locks, (
        "a dvc.lock differs after `dvc repro` on a fresh copy: either it is stale (run `dvc repro` and commit "
        "it) or an output is not byte-stable"
    )
    coverage = json.loads(repo.layout.coverage("hipho", "sample_hipho", "demo", "rule").read_text(encoding="utf-8"))
    assert coverage == {
        "judgments": 5,
        "scored": 5,
        "judge_errors": 0,
        "failed_generations": 0,
        "undecided": 0,
        "coverage": 1.0,
    }
    plots = json.loads(repo.dvc("plots", "show", "--json"))["data"]
    [score_plot] = plots[repo.layout.plot("sample_hipho", "scores").relative_to(repo.path).as_posix()]
    assert {row["cell"] for row in score_plot["content"]["data"]["values"]} == {
        "reference / rule / sample_hipho",
        "demo / rule / sample_hipho",
    }
    assert "sample_hipho" in (repo.layout.report() / "index.html").read_text(encoding="utf-8")
    shown = repo.dvc("metrics", "show").splitlines()  # a row per cell, a few columns
    # OlympiadBench's sample suites leave out its proofs (as its official protocol does): `partial` says so
    assert shown[0].split() == ["Path", "ci_high", "ci_low", "ci_resampled", "coverage", "partial", "protocol", "score"]
    cells = [
        judge
        for benchmark in read_plan(repo.path / "params.yaml")["benchmarks"]
        for models in repo.metrics(benchmark).values()
        for judges in models.values()
        for judge in judges
    ]
    plan = read_plan(repo.path / "params.yaml")
    assert len(shown) == 1 + len(cells) == 1 + len(plan["suites"]) * len(plan["models"]) * len(plan["judges"])
    [subsets] = plots[repo.layout.plot("sample_physelite", "subsets").relative_to(repo.path).as_posix()]
    encoding = subsets["content"]["encoding"]  # a bar per cell in each subset, side by side, never stacked
    assert encoding["yOffset"]["field"] == "cell" and encoding["x"]["stack"] is None
    written = pd.read_csv(repo.layout.plot("sample_physelite", "subsets"))
    shown_values = {
        (row["cell"], row["subset"]): float(row["score (%)"]) for row in subsets["content"]["data"]["values"]
    }
    assert shown_values == dict(zip(zip(written["cell"], written["subset"]), written["score (%)"]))
    assert max(shown_values.values()) <= 100.0


FAKE_MODEL = """\
provider: openai
base_url: {base_url}
model: {model}
api_key_env: OE_E2E_KEY
concurrency: 4
max_retries: 1
generation:
  temperature: 0
"""

FAKE_JUDGE = """\
defaults:
  - llm_base
  - _self_
judges:
  fake:
    base_url: {base_url}
    model: fake-judge
    api_key_env: OE_E2E_KEY
    concurrency: 4
    max_retries: 1
settings:
  temperature: {temperature}
max_reasks: 1
"""


def plan(models: list[str]) -> str:
    return plan_yaml(
        {"sample_hipho": "sample_hipho", "sample_physelite_en": "sample_physelite"}, models, ["rule", "fakejudge"]
    )


def is_judge(body: dict) -> bool:
    return JUDGE_MARKER in json.dumps(body["messages"])


def stern_when_warm(body: dict) -> str:
    """A judge whose verdicts depend on its settings, so that editing them changes the tables."""
    if is_judge(body) and body.get("temperature", 0) > 0 and "verdict" in json.dumps(body["messages"]):
        return json.dumps({"verdict": "incorrect", "reasoning": "A stricter reading."})
    return default_responder(body)


def test_a_hydra_multirun_then_dvc_repro_pays_nothing_twice_and_dvc_reruns_only_what_changed(tmp_path):
    repo = Repo(clone(tmp_path / "repo"))
    with FakeOpenAI(stern_when_warm) as server:
        generation_requests = lambda: server.count(lambda body: not is_judge(body))  # noqa: E731
        judge_requests = lambda: server.count(is_judge)  # noqa: E731
        repo.write("conf/model/fake.yaml", FAKE_MODEL.format(base_url=server.base_url, model="fake-1"))
        repo.write("conf/judge/fakejudge.yaml", FAKE_JUDGE.format(base_url=server.base_url, temperature=0))
        repo.write("params.yaml", plan(["fake"]))

        # a Hydra multirun of the generate stage (joblib launcher, docs/sweeps.md) writes the fake model's
        # generations outside DVC ...
        assert repo.repro("render@sample_hipho", "render@sample_physelite_en") == sorted(
            ["fetch@sample_hipho", "fetch@sample_physelite", "render@sample_hipho", "render@sample_physelite_en"]
        )
        repo.run(
            sys.executable,
            "stages/generate.py",
            "-m",
            "hydra/launcher=joblib",
            "model=fake",
            "cell.suite=sample_hipho,sample_physelite_en",
        )
        assert generation_requests() == 5 + 3  # one per problem of the two suites
        multirun = repo.layout.generations("hipho", "sample_hipho", "fake").read_bytes()

        # ... `dvc commit` records one cell's as made by its stage (its dependencies and outputs as they
        # are), so that DVC does not run it; the other DVC runs again, every reply from the request cache
        repo.dvc("commit", "--force", repo.addresses()["generate@sample_physelite_en-fake"])
        ran = repo.repro()
        cells = [("sample_hipho", "hipho"), ("sample_physelite_en", "physelite")]
        assert ran == sorted(
            ["generate@sample_hipho-fake", "report"]
            + [f"pages@{suite}-fake" for suite, _ in cells]
            + [f"judge@{suite}-fake-fakejudge" for suite, _ in cells]
            + [f"judge@{suite}-fake-rule" for suite, _ in cells]
            + ["aggregate@sample_hipho", "aggregate@sample_physelite"]
        )
        assert generation_requests() == 5 + 3  # sent once, by the multirun
        assert repo.layout.generations("hipho", "sample_hipho", "fake").read_bytes() == multirun
        first_judging = judge_requests()  # the LLM judge grades each response: criteria, slots, verdicts, steps
        assert first_judging > 5 + 3

        # nothing changed: nothing runs, nothing is sent
        assert repo.repro() == []
        assert server.count() == 8 + first_judging

        # editing one judge's file reruns its own judge stages, the pages, the aggregates and the report:
        # never a generation, nor the other judge's
        repo.write("conf/judge/fakejudge.yaml", FAKE_JUDGE.format(base_url=server.base_url, temperature=0.1))
        ran = repo.repro()
        assert ran == sorted(
            [f"judge@{suite}-fake-fakejudge" for suite, _ in cells]
            + [f"pages@{suite}-fake" for suite, _ in cells]
            + ["aggregate@sample_hipho", "aggregate@sample_physelite", "report"]
        )
        assert generation_requests() == 8 and judge_requests() == 2 * first_judging
        assert repo.metrics("sample_physelite")["sample_physelite_en"]["fake"]["fakejudge"]["score"] == 0.0

        # adding a model runs its own stages and sends its own requests alone
        repo.write("conf/model/fake2.yaml", FAKE_MODEL.format(base_url=server.base_url, model="fake-2"))
        repo.write("params.yaml", plan(["fake", "fake2"]))
        assert repo.repro() == sorted(
            [f"{stage}@{suite}-fake2" for suite, _ in cells for stage in ("generate", "pages")]
            + [f"judge@{suite}-fake2-{judge}" for suite, _ in cells for judge in ("rule", "fakejudge")]
            + ["aggregate@sample_hipho", "aggregate@sample_physelite", "report"]
        )
        # (the fake server answers both models alike: the same responses' judgments come from the request cache)
        assert generation_requests() == 16 and judge_requests() == 2 * first_judging

        # every stage of a cell run again on unchanged inputs rewrites the same bytes and sends nothing
        outputs = sorted(path for path in repo.layout.root.rglob("*") if path.is_file())
        before, sent = {path: path.read_bytes() for path in outputs}, server.count()
        forced = ["generate@sample_hipho-fake", "judge@sample_hipho-fake-fakejudge", "pages@sample_hipho-fake"]
        assert repo.repro("--force", "--single-item", *forced) == sorted(forced)
        assert {path: path.read_bytes() for path in outputs} == before
        assert server.count() == sent
        assert "up to date" in repo.dvc("status")

    # the API key was in the environment of every stage: it must be nowhere they wrote
    assert not [log for log in repo.logs if KEY in log]
    leaked = [path for path in repo.path.rglob("*") if path.is_file() and KEY.encode() in path.read_bytes()]
    assert not leaked, leaked


# Two families' suites, for what stays up to date in the other family.
OFFLINE = {"sample_hipho": "sample_hipho", "sample_mathvision": "sample_mathvision"}


def cell_stages(kind: str, models: list[str], judges: list[str] = (), suites=tuple(OFFLINE)) -> list[str]:
    """The names of `kind`'s stages (generate, judge, pages) for these cells."""
    if kind == "judge":
        return [f"judge@{suite}-{model}-{judge}" for suite in suites for model in models for judge in judges]
    return [f"{kind}@{suite}-{model}" for suite in suites for model in models]


def test_dvc_reruns_exactly_the_stages_that_read_what_changed(tmp_path):
    """From the names of the stages DVC runs (or restores without running): a judge added, edited,
    removed and added back; a model added; a model's setting; a recording edited or added; one
    benchmark's code. Offline: the replayed demo and a reference model added, judged by the rules
    and the scripted LLM judge."""
    repo = Repo(clone(tmp_path / "repo"))
    models = ["demo"]  # one model, so that each step's stages are few (the one added below is the other)
    repo.write("params.yaml", plan_yaml(OFFLINE, models, ["rule"]))
    assert "generate@sample_hipho-demo" in repo.repro()
    after_every_cell = sorted(cell_stages("pages", models) + ["aggregate@sample_hipho", "aggregate@sample_mathvision"])

    # a judge added: its judge stages, and what shows every judge (each cell's pages, the tables, the report)
    repo.write("params.yaml", plan_yaml(OFFLINE, models, ["rule", "scripted"]))
    assert repo.repro() == sorted(cell_stages("judge", models, ["scripted"]) + after_every_cell + ["report"])
    # a value of its config edited: the same, and no generate stage (nor the rule judge's)
    scripted = repo.path / "conf/judge/scripted.yaml"
    repo.write("conf/judge/scripted.yaml", scripted.read_text(encoding="utf-8") + "max_reasks: 3\n")
    assert repo.repro() == sorted(cell_stages("judge", models, ["scripted"]) + after_every_cell + ["report"])

    # removed: only what shows every judge; added back: nothing runs, not one judge process starts; and
    # where its outputs are gone (a clone that never had them), DVC's run cache restores them
    repo.write("params.yaml", plan_yaml(OFFLINE, models, ["rule"]))
    assert repo.repro() == sorted(after_every_cell + ["report"])
    for folder in repo.layout.root.glob("cells/*/*/*/judges/scripted"):
        shutil.rmtree(folder)
    repo.write("params.yaml", plan_yaml(OFFLINE, models, ["rule", "scripted"]))
    assert repo.repro() == []
    restored = re.findall(r"Stage '[^']*:(judge@[^']+)' is cached - skipping run", repo.logs[-1])
    assert sorted(restored) == sorted(cell_stages("judge", models, ["scripted"]))
    assert "stages/judge.py" not in repo.logs[-1] and "stages/pages.py" not in repo.logs[-1]
    judges = ["rule", "scripted"]

    # a model added: its own generate, judge and pages stages, then the tables and the report
    repo.write("conf/model/another.yaml", "provider: reference\n")
    repo.write("params.yaml", plan_yaml(OFFLINE, [*models, "another"], judges))
    assert repo.repro() == sorted(
        cell_stages("generate", ["another"]) + cell_stages("judge", ["another"], judges)
        + cell_stages("pages", ["another"]) + ["aggregate@sample_hipho", "aggregate@sample_mathvision", "report"]
    )  # fmt: skip

    # one model's generation setting: that model's cells alone
    demo = repo.path / "conf/model/demo.yaml"
    repo.write("conf/model/demo.yaml", demo.read_text(encoding="utf-8") + "generation: {temperature: 0.7}\n")
    assert repo.repro() == sorted(
        cell_stages("generate", ["demo"]) + cell_stages("judge", ["demo"], judges) + cell_stages("pages", ["demo"])
        + ["aggregate@sample_hipho", "aggregate@sample_mathvision", "report"]
    )  # fmt: skip

    # one recording edited: that model's cell of that benchmark alone; a recording added for a model
    # outside the plan: nothing
    recording = repo.path / "data/replay/demo/sample_hipho.jsonl"
    lines = recording.read_text(encoding="utf-8").splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), "response": "\\boxed{0}"}, ensure_ascii=False)
    repo.write("data/replay/demo/sample_hipho.jsonl", "\n".join(lines) + "\n")
    hipho = ["sample_hipho"]
    assert repo.repro() == sorted(
        cell_stages("generate", ["demo"], suites=hipho) + cell_stages("pages", ["demo"], suites=hipho)
        + cell_stages("judge", ["demo"], judges, suites=hipho) + ["aggregate@sample_hipho", "report"]
    )  # fmt: skip
    repo.write("data/replay/newcomer/sample_hipho.jsonl", lines[0] + "\n")
    assert repo.repro() == []

    # one benchmark's code: that family's stages that run it (every one but generation), and the report
    tables = repo.path / "src/olympiad_eval/benchmarks/mathvision/tables.py"
    tables.write_text(tables.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    mathvision = ["sample_mathvision"]
    assert repo.repro() == sorted(
        ["fetch@sample_mathvision", "render@sample_mathvision", "aggregate@sample_mathvision", "report"]
        + cell_stages("judge", [*models, "another"], judges, suites=mathvision)
        + cell_stages("pages", [*models, "another"], suites=mathvision)
    )


def test_a_new_endpoint_tried_on_two_problems_then_the_full_run_sends_only_the_rest(tmp_path):
    """The smoke-test recipe of docs/subsets.md as written, through `dvc exp run -S` on the suite's file
    (here the sample's base suite, which the plan's sample_hipho extends)."""
    repo = Repo(clone(tmp_path / "repo"))
    repo.env["OLYMPIAD_EVAL_REQUEST_CACHE"] = str(tmp_path / "requests.sqlite")
    for setting in ("user.name=t", "user.email=t@t"):  # `dvc exp run` commits each experiment
        repo.run("git", "config", *setting.split("="))
    with FakeOpenAI() as server:
        sent = lambda: server.count(lambda body: not is_judge(body))  # noqa: E731
        repo.write("conf/model/fake.yaml", FAKE_MODEL.format(base_url=server.base_url, model="fake-1"))
        repo.write("params.yaml", plan_yaml({"sample_hipho": "sample_hipho"}, ["reference"], ["rule"]))
        repo.run("git", "add", "-A")
        repo.run("git", "commit", "-qm", "a HiPhO plan and a new endpoint")
        repo.dvc("exp", "run", "-S", "models=[fake]", "-S", "conf/suite/hipho.yaml:limit=2")
        assert sent() == 2
        summary = repo.layout.tables("sample_hipho") / "summary.csv"
        assert "sample_hipho,fake,rule,2," in summary.read_text() and "2 of 5 problems (limit 2)" in summary.read_text()
        assert (
            "<b>partial:</b> sample_hipho: 2 of 5 problems (limit 2)"
            in (repo.layout.report() / "index.html").read_text()
        )

        repo.dvc("exp", "run", "-S", "conf/suite/hipho.yaml:limit=null")
        assert sent() == 5  # the two tried are answered from the request cache
        assert "sample_hipho,fake,rule,5," in summary.read_text() and "partial" not in summary.read_text()
        assert "partial" not in (repo.layout.report() / "index.html").read_text()


def test_machines_share_replies_through_a_shared_cache_and_outputs_through_a_dvc_remote(tmp_path):
    shared = tmp_path / "shared"  # storage that every machine mounts
    one_cell = plan_yaml({"sample_physelite_en": "sample_physelite"}, ["fake"], ["rule"])
    with FakeOpenAI() as server:
        machines = []
        for name in ("a", "b"):
            machine = Repo(clone(tmp_path / name))
            machine.env["OLYMPIAD_EVAL_REQUEST_CACHE"] = str(shared / "requests")
            machine.write("conf/model/fake.yaml", FAKE_MODEL.format(base_url=server.base_url, model="fake-1"))
            machine.write("params.yaml", one_cell)
            machine.dvc("remote", "add", "-d", "shared", str(shared / "dvc"))
            machines.append(machine)
        a, b = machines

        # machine A runs the plan; machine B runs it too, and every reply comes from the shared cache
        assert a.repro() == sorted(a.addresses()) and server.count() == 3  # every stage of the plan
        assert b.repro() == sorted(b.addresses()) and server.count() == 3
        assert lock_files(b.path) == lock_files(a.path)
        assert len(list((shared / "requests").rglob("*.json"))) == 3

        # A pushes its outputs; B, starting from nothing but A's commit, pulls them and runs nothing
        a.dvc("push")
        shutil.rmtree(b.layout.root)
        shutil.rmtree(b.path / ".dvc" / "cache")
        b.dvc("pull")
        assert b.repro() == [] and server.count() == 3
        assert (b.layout.tables("sample_physelite") / "summary.csv").read_bytes() == (
            a.layout.tables("sample_physelite") / "summary.csv"
        ).read_bytes()


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_CACHE_HOME moves the user's cache folder on Linux only")
def test_a_queued_experiment_over_cached_cells_sends_no_request(tmp_path):
    """`dvc exp run --queue` runs each experiment in a temporary copy of the workspace, where a
    request cache named relative to the workspace would be empty: every cell would pay again. The
    default cache, in the user's cache folder, is the same for every copy. The release sits where
    the README puts one (data/releases/, ignored by git, so not in the copy): DVC's `-C` copies it in."""
    repo = Repo(clone(tmp_path / "repo"))
    del repo.env[REQUEST_CACHE_VARIABLE]  # the default, in the user's cache folder ...
    repo.env["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")  # ... here a temporary one
    release = "data/releases/sample_physelite"
    shutil.copytree(repo.path / "data/sample/physelite", repo.path / release)
    config = repo.path / "conf/benchmark/sample_physelite.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("path: data/sample/physelite", f"path: {release}"))
    with FakeOpenAI() as server:
        repo.write("conf/model/fake.yaml", FAKE_MODEL.format(base_url=server.base_url, model="fake-1"))
        suites = {"sample_physelite_en": "sample_physelite"}
        repo.write("params.yaml", plan_yaml(suites, ["fake"], ["rule"], releases={"sample_physelite": release}))
        repo.run("git", "add", "-A")  # an experiment runs what git has
        repo.run("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a fake model")
        repo.run("git", "check-ignore", "-q", release)  # the release is not in git, as the README has it
        assert repo.repro() == sorted(repo.addresses()) and server.count() == 3  # every stage of the plan
        assert (tmp_path / "user-cache" / "olympiad-eval" / "requests.sqlite").is_file()

        # the same cells as a queued experiment, forced, with a setting that changes no request: every
        # stage runs, every reply comes from the request cache
        again = ("--queue", "--force", "-S", "conf/model/fake.yaml:concurrency=5", "--name", "again", "-C", release)
        repo.dvc("exp", "run", *again)
        repo.dvc("exp", "run", "--run-all")
        assert re.search(r"\bagain\b.*\bSuccess$", repo.dvc("queue", "status"), re.M)
        logs = repo.dvc("queue", "logs", "again")
        assert (
            "Running stage 'pipelines/physelite/fetch/dvc.yaml:fetch@sample_physelite'" in logs
        )  # read the copied release
        assert "Running stage 'pipelines/physelite/generate/dvc.yaml:generate@sample_physelite_en-fake'" in logs
        assert "3 generations, 0 failed, 0 refused; 0 requests sent (0 retries), cost of this run $0.0000" in logs
        assert server.count() == 3
        # the leaderboard has a row for the experiment beside the workspace's, with the same score
        board = repo.run(sys.executable, "-m", "olympiad_eval.cli", "leaderboard", "--exp").splitlines()
        rows = {
            line.split()[0]: line.split()[3:] for line in board if re.match(r"(workspace|again)\s+fake\s+rule\s", line)
        }
        assert rows.keys() == {"workspace", "again"} and rows["again"] == rows["workspace"]
