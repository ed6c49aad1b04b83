"""The README is the front door: its two set-up commands are the ones CI and users run, it stays
short, and it leads to every page of docs/ (tests/test_docs.py checks what the pages show)."""

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


def test_the_readme_is_a_front_door_of_at_most_200_lines():
    assert len(README.splitlines()) <= 200, "move the detail to a page of docs/ and link it"


def test_the_readme_links_every_page_of_the_docs():
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)(?:#[\w-]*)?\)", README))
    pages = {path.name for path in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set(), "link each docs page from the README's Documentation list"
