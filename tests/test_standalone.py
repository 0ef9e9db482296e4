"""A clone stands alone: everything the tests and evals read is in the repository.

The dev sets (commits_dev, hard_dev, public_fixtures) live in evals/cases/ with their sources and
licences (evals/cases/README.md); no test, eval, Makefile line or CI script names a folder beside
the repository. evals/results/ and evals/RESULTS.md are history: they record where a past run read
its cases, and may name it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import REPO, repo_files

# A path to the folder beside the repository, written as a string or built with pathlib.
OUTSIDE = re.compile(r"\.\./" + "shared" + r"|parents?(\[\d\])?\s*/\s*[\"']" + "shared" + r"[\"']|FASTAPPLY_" + "SHARED")
# What reads cases or runs the tests: every file under these, and these files.
CHECKED_DIRS = ("tests/", "evals/", "scripts/", ".ci/", "fastapply/", "lsp/", "editor-plugins/")
CHECKED_FILES = ("Makefile", "pyproject.toml", "requirements.txt", "requirements-dev.txt", "requirements-vllm.txt")
HISTORY = ("evals/results/", "evals/RESULTS.md")
DEV_SETS = {"commits_dev": 180, "hard_dev": 215, "public_fixtures": 40}


def _checked(rel: str) -> bool:
    return (rel in CHECKED_FILES or rel.startswith(CHECKED_DIRS)) and not rel.startswith(HISTORY)


def test_nothing_reads_a_folder_outside_the_repository():
    found = []
    for rel in filter(_checked, repo_files()):
        try:
            text = (REPO / rel).read_text(encoding="utf-8")
        except UnicodeDecodeError:  # binary (an adapter's weights)
            continue
        found += [f"{rel}:{n}: {line.strip()[:100]}" for n, line in enumerate(text.splitlines(), 1)
                  if OUTSIDE.search(line)]
    assert not found, ("read these from evals/cases/ (copy the file there, with its source and licence in "
                       "evals/cases/README.md), not from outside the repository:\n" + "\n".join(found))


def test_the_guard_sees_each_way_of_naming_it():
    outside = ["../" + "shared/evals/x.jsonl", 'REPO.parent / "' + "shared" + '" / "evals"',
               "ROOT.parents[1] / '" + "shared'", "os.environ.get('FASTAPPLY_" + "SHARED')"]
    assert all(OUTSIDE.search(line) for line in outside)
    assert not OUTSIDE.search('Path(__file__).parent / "cases" / "shared_notes.md"')


@pytest.mark.parametrize("name", sorted(DEV_SETS))
def test_each_dev_set_is_in_the_repository_with_its_sources(name: str):
    cases_dir = REPO / "evals" / "cases"
    cases = [json.loads(line) for line in (cases_dir / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
    meta = [json.loads(line) for line in (cases_dir / f"{name}.meta.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(cases) == DEV_SETS[name] and [c["id"] for c in cases] == [m["id"] for m in meta]
    assert all(c["source"] and c["license"] for c in cases), "every case names its source and licence"
    readme = (cases_dir / "README.md").read_text(encoding="utf-8")
    assert f"`{name}.jsonl`" in readme
    repos = {c["source"].split("@")[0] for c in cases}
    unnamed = sorted(r for r in repos if r not in readme)
    assert not unnamed, f"evals/cases/README.md: name these sources of {name} (repository, pinned commit, licence)"
