"""What the stage scripts share, seen from the command line: the way DVC and launchers run them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from olympiad_eval.records import Generation, read_jsonl
from tests.conftest import ROOT


def test_a_submitit_sweep_writes_what_the_dvc_cells_write(render_suite, tmp_path):
    """submitit (the SLURM launcher, here its local flavour) pickles the stage and runs it in a new
    process: everything the stage imports must come from the installed package."""
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="pip install hydra-submitit-launcher")
    outputs = render_suite("sample_hipho", "sample_hipho")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "stages/generate.py", "-m", "hydra/launcher=submitit_local", "model=reference,demo",
         "cell.suite=sample_hipho", f"paths.outputs={outputs}", f"paths.request_cache={tmp_path / 'cache.sqlite'}",
         f"hydra.sweep.dir={tmp_path / 'multirun'}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    for model in ("reference", "demo"):
        generations = read_jsonl(outputs / "generations" / "sample_hipho" / f"{model}.jsonl", Generation)
        assert len(generations) == 5 and all(g.error is None and g.response for g in generations)
