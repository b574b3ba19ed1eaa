"""README, docs, CHANGELOG, examples, benchmarks, the library and the tests speak to users.

They name no step of how the project was worked on: no issue or goal numbers, no brief or product
document, no earlier session, no commit hash standing for a baseline (a baseline is a release, or
"the code before this change"). A failure names each file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

WORK_PROCESS_WORDS = re.compile(
    "|".join(
        (
            r"\bissues? ?#?\d+",  # issue 12, issue #3
            r"\bissue-\d+",
            r"\bgoals? \d+\b",  # goal 3
            r"\b(?:the|product) brief\b",
            r"\bbrief's\b",
            r"\bproduct documents?\b",
            r"\bthe issue's\b",
            r"\b(?:previous|earlier|last|next|same) session\b",
            r"\b(?:previous|earlier|last|next|same|this) session's\b",
            r"`(?=[0-9a-f]*\d)[0-9a-f]{7,40}`",  # a commit hash: `2997518`, `5b481e9`
            r"\b(?:at|against|before|since) (?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b",
        )
    ),
    re.IGNORECASE,
)


def read_by_users() -> list[Path]:
    """Every file a user reads: README, CHANGELOG, docs, examples, benchmarks, the library, the tests."""
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "Makefile", ROOT / "pyproject.toml"]
    files += sorted((ROOT / "docs").rglob("*.md"))
    for folder in ("examples", "benchmarks", "src", "tests"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return [f for f in files if f != Path(__file__).resolve() and not _installed(f.relative_to(ROOT))]


def _installed(path: Path) -> bool:
    """Whether a file is part of something installed beside the project (a venv, node_modules), not its own."""
    return any(part.startswith(".") or part in ("node_modules", "site-packages") for part in path.parts[:-1])


def test_no_file_names_a_step_of_the_work() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {match.group()!r}"
        for path in read_by_users()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for match in WORK_PROCESS_WORDS.finditer(line)
    ]
    assert not found, "work-process words (say it to a user instead):\n" + "\n".join(found)


def test_what_ci_installs_beside_the_project_is_not_read() -> None:
    """The venvs and npm folders that .ci/run makes under benchmarks/ and tests/ are other projects' files."""
    for installed in (
        Path("benchmarks/.venv-010/lib/python3.11/site-packages/colorama/initialise.py"),
        Path("tests/integrations/.venv-mcp1/lib/python3.11/site-packages/typing_extensions.py"),
        Path("tests/integrations/.inspector/node_modules/x/index.py"),
    ):
        assert _installed(installed)
    assert not _installed(Path("tests/docs/test_docs_speak_to_users.py"))
    assert not _installed(Path("src/muscle_mem/engine.py"))


def test_the_check_finds_what_it_is_meant_to_find() -> None:
    """Each kind of phrase is caught, and the words a user needs (a ``Session``, a ticket number) are not."""
    caught = [
        "measured against `2997518`",
        "(issue 12, goal 3)",
        "the product brief is not at /x",
        "in the previous session",
        "the product document's cache",
        "same runs against da96a10:",
    ]
    kept = [
        "this session has not begun",
        "engine.session(...)",
        "ticket 41 is closed",
        "1,000,000 calls",
        "`index_size=100_000`",
        "a brief pause",
    ]
    assert all(WORK_PROCESS_WORDS.search(text) for text in caught)
    assert not any(WORK_PROCESS_WORDS.search(text) for text in kept)
