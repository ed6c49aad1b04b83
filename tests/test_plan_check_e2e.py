"""A misspelt name in the plan, set the way the docs show (`dvc exp run -S`), stops a real DVC run
at its first stage (`check`) with the stages' own message, before any other stage runs."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.support import BIN, Repo, clone

pytestmark = pytest.mark.e2e


def test_a_misspelt_model_stops_the_experiment_at_the_check_stage_naming_the_closest(tmp_path):
    repo = Repo(clone(tmp_path / "repo"))
    done = subprocess.run(
        [str(BIN / "dvc"), "exp", "run", "-S", "models=[reference,gtp-4o]"],
        cwd=repo.path,
        env=repo.env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    said = done.stdout + done.stderr
    assert done.returncode != 0
    assert re.findall(r"Running stage '([^']+)'", said) == ["check"]  # the first stage, and the only one
    assert (
        "error: model 'gtp-4o' (model=gtp-4o, from params.yaml or the command line): there is no "
        "conf/model/gtp-4o.yaml. did you mean 'gpt-4o'?"
    ) in said
    # nothing was fetched, rendered or generated (DVC makes the check's output folder before it runs)
    assert not [path for path in (repo.path / "outputs").rglob("*") if path.is_file()]
    assert "gtp-4o" in (repo.path / "params.yaml").read_text(encoding="utf-8")  # DVC leaves it (docs/sweeps.md)
