"""Citations point at documents the repository holds: the contract is docs/contract.md (never a file outside the
checkout), and every `<doc>.md#section` a docstring or document cites names a heading that document has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("src", "tests", "bench", "docs", "README.md")

NOT_YET: tuple[str, ...] = ()  # files not scanned yet (none: every file cites the contract in the repository)

# the design notes the repository was started from, outside the checkout: a citation of them points nowhere
OUTSIDE = re.compile(r"\b" + "CONTRACT" + r"\b|\.\./shared/(?!corpus\b)")
CITED_SECTION = re.compile(r"(?:\b([\w/.-]+\.md)|\]\()#([\w-]+)")


def _slug(heading: str) -> str:
    """The anchor GitHub gives a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(document: Path) -> set[str]:
    return {_slug(line.lstrip("#")) for line in document.read_text().splitlines() if re.match(r"#{1,6} ", line)}


def _document(cited: str, citing: Path) -> Path:
    """The document `cited` names (`docs/x.md`, `x.md` beside the citing document or in docs/, `README.md`)."""
    for candidate in (ROOT / cited, citing.parent / cited, ROOT / "docs" / Path(cited).name):
        if candidate.is_file():
            return candidate
    return ROOT / cited


def scanned_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix in (".py", ".md"))
    own = Path(__file__).resolve()
    return [
        path
        for path in files
        if path != own and not any(path.relative_to(ROOT).as_posix().startswith(prefix) for prefix in NOT_YET)
    ]


def citations_outside(text: str) -> list[str]:
    return [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}" for m in OUTSIDE.finditer(text)]


def broken_sections(text: str, citing: Path) -> list[str]:
    broken = []
    for match in CITED_SECTION.finditer(text):
        document = _document(match.group(1), citing) if match.group(1) else citing
        if not document.is_file():
            broken.append(f"{match.group(0)}: no such document")
        elif match.group(2) not in _anchors(document):
            broken.append(f"{match.group(0)}: {document.relative_to(ROOT)} has no such heading")
    return broken


def test_nothing_cites_the_contract_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)} {place}" for path in scanned_files() for place in citations_outside(path.read_text())
    ]
    assert not found, "cite docs/contract.md instead:\n" + "\n".join(found)


def test_every_cited_section_exists() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {problem}"
        for path in scanned_files()
        for problem in broken_sections(path.read_text(), path)
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("text", "outside", "broken"),
    [
        ('"""The oracle (CONTRACT.md)."""', 1, 0),
        ("as CONTRACT allows", 1, 0),
        ("see ../shared/architecture/draft.json", 1, 0),
        ("the corpus at ../shared/corpus", 0, 0),
        ("(docs/contract.md#what-identical-means)", 0, 0),
        ("(docs/contract.md#what-identical-is)", 0, 1),
        ("[above](#no-such-heading)", 0, 1),
        ("(docs/nowhere.md#exit-codes)", 0, 1),
    ],
)
def test_the_checks_catch_a_bad_citation(text: str, outside: int, broken: int) -> None:
    assert len(citations_outside(text)) == outside
    assert len(broken_sections(text, ROOT / "README.md")) == broken
