"""The README is one screen's read, and every relative link in it and in docs/ resolves.

A link resolves when its file exists (relative to the page) and its anchor, if any, is a heading
of the target page, slugged as GitHub slugs it. No page points to ``../shared`` (a folder a user
who cloned the repository does not have).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but ``-`` dropped, spaces to ``-``."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.MULTILINE)}


def links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans are not links
    return [a or b for a, b in LINK.findall(text)]


def test_the_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines (at most 250)"


def test_there_are_pages_to_link_to() -> None:
    assert len(PAGES) >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_points_to_a_folder_users_lack(page: Path) -> None:
    assert "../shared" not in page.read_text(encoding="utf-8")


def test_the_slug_is_githubs() -> None:
    assert slug("Noise you can see: intervals, `compare`'s verdict, the reply cache") == (
        "noise-you-can-see-intervals-compares-verdict-the-reply-cache"
    )
    assert slug("Reward bases beyond the leaderboard's (`--reward-basis`)") == (
        "reward-bases-beyond-the-leaderboards---reward-basis"
    )


def test_the_testing_page_counts_tests_by_a_command_never_by_a_stale_number() -> None:
    """docs/testing.md gives the commands that count the tests (the README command's two
    selections), and no number of tests or of passed/skipped ones, which every new test
    would make false."""
    page = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    block = page.split("<!-- test-counts -->", 1)[1].split("```", 2)[1]
    commands = [line for line in block.splitlines()[1:] if line.strip()]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    test_command = readme.split("<!-- test-command -->", 1)[1].split("```", 2)[1]
    default, long = re.findall(r"python -m pytest (-q -n 2 [^&]*?)\s*(?:&&|$)", test_command)
    assert commands == [
        f"python -m pytest --collect-only -q {run.replace('-q -n 2 ', '').strip()} | tail -1"
        for run in (default, long)
    ]
    prose = re.sub(r"`[^`]*`", "", FENCE.sub("", page))
    assert not re.search(r"\d[\d,]*\s+(?:passed|skipped|failed|tests\b)", prose)
