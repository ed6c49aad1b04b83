"""The README's two set-up commands are the ones CI and users run."""

from __future__ import annotations

import re

from tests.support import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = re.findall(r"```bash\n(python3 -m venv .*)\n```", README)


def test_the_readme_gives_the_main_job_and_the_test_command():
    main_job, tests = COMMANDS[:2]
    assert main_job.endswith("dvc repro") and "pip install -e ." in main_job
    assert "pytest" in tests


def test_ci_runs_exactly_the_readmes_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert COMMANDS[1] in ci.splitlines()
