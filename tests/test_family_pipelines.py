"""Each benchmark family's stages depend on that family's files only, and each fetch on its own
release's folder: real `dvc` in a temporary copy of the repository, as a user runs it after `git clone`."""

from __future__ import annotations

import json
import shutil

import pytest

from olympiad_eval.core.plan import read_plan
from tests.support import Repo, clone

# its module fixture runs the HiPhO pipeline once: keep its tests on one test worker
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("family_pipelines")]

HIPHO = ("--recursive", "pipelines/hipho")  # the family's pipeline: a dvc.yaml per stage


def edit(repo: Repo, name: str, old: str, new: str) -> None:
    text = (repo.path / name).read_text(encoding="utf-8")
    assert old in text, (name, old)
    repo.write(name, text.replace(old, new))


@pytest.fixture(scope="module")
def hipho_run(tmp_path_factory) -> tuple[Repo, list[str]]:
    """A copy of the repository where `dvc repro` ran the HiPhO pipeline, and the stages it ran."""
    repo = Repo(clone(tmp_path_factory.mktemp("hipho") / "repo"))
    return repo, repo.repro(*HIPHO)


def copy_of(repo: Repo, target) -> Repo:
    shutil.copytree(repo.path, target, symlinks=True)
    return Repo(target)


def test_adding_a_model_and_running_one_family_runs_that_family_s_stages_only(hipho_run, tmp_path):
    """Once the HiPhO aggregate read every family's judgments folder, so `dvc repro` of the HiPhO
    pipeline ran (and paid for) the new model's MATH-Vision and PhysElite cells too."""
    first, ran = hipho_run
    cells = [f"{stage}@sample_hipho-{model}" for stage in ("generate", "pages") for model in ("reference", "demo")]
    assert ran == sorted(
        cells  # each model's cells, and their judges'
        + ["judge@sample_hipho-reference-rule", "judge@sample_hipho-demo-rule"]
        + [f"{stage}@sample_hipho" for stage in ("fetch", "render", "aggregate")]
    )
    repo = copy_of(first, tmp_path / "repo")
    repo.write("conf/model/another.yaml", "provider: reference\n")
    edit(repo, "params.yaml", "  - demo\n", "  - demo\n  - another\n")
    # the new model's own stages (its cell and its pages: no other model's pages are rewritten), the aggregate
    assert repo.repro(*HIPHO) == [
        "aggregate@sample_hipho",
        "generate@sample_hipho-another",
        "judge@sample_hipho-another-rule",
        "pages@sample_hipho-another",
    ]


def test_editing_a_release_makes_only_its_own_fetch_stale(tmp_path):
    repo = Repo(clone(tmp_path / "repo"))
    fetches = sorted(address for name, address in repo.addresses().items() if name.startswith("fetch@"))
    assert len(fetches) == len(read_plan(repo.path / "params.yaml")["releases"])  # one per release
    repo.dvc("repro", *fetches)
    exam = repo.path / "data/sample/hipho/data/DemoPhO_2025.json"
    exam.write_text(exam.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    stale = json.loads(repo.dvc("status", "--json", *fetches))
    fetch = "pipelines/hipho/fetch/dvc.yaml:fetch@sample_hipho"
    assert stale == {fetch: [{"changed deps": {"data/sample/hipho": "modified"}}]}


def test_dropping_a_suite_of_one_family_leaves_another_family_s_tables_up_to_date(hipho_run, tmp_path):
    repo = copy_of(hipho_run[0], tmp_path / "repo")
    repo.repro("judge@sample_physelite_en-reference-rule", "judge@sample_physelite_zh-reference-rule")
    edit(repo, "params.yaml", "      sample_physelite_zh: sample_physelite\n", "")
    # a fresh clone of the new plan that pulls its outputs has no file of the dropped suite's cells
    for path in (
        repo.layout.generations("physelite", "sample_physelite_zh", "reference"),
        repo.layout.usage("physelite", "sample_physelite_zh", "reference"),
        repo.layout.judgments("physelite", "sample_physelite_zh", "reference", "rule"),
        repo.layout.coverage("physelite", "sample_physelite_zh", "reference", "rule"),
    ):
        path.unlink()
    assert "up to date" in repo.dvc("status", *HIPHO)
    assert repo.repro(*HIPHO) == []
