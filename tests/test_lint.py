"""The code is clean under ruff (pyproject.toml's [tool.ruff]) and clang-format (.clang-format).

Both come with the test extra, so `.ci/run` (the README's test command) checks them.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CXX_DIRS = ("csrc", "tests/cpp")


def tool(name: str) -> str:
    beside = Path(sys.executable).parent / name  # the venv's own, whatever PATH says
    found = str(beside) if beside.exists() else shutil.which(name)
    assert found, f"{name} is not installed: pip install -e '.[test]' brings it"
    return found


def test_python_is_clean_under_ruff():
    done = subprocess.run([tool("ruff"), "check", "--no-cache", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_cxx_is_clean_under_clang_format():
    files = sorted(str(path) for folder in CXX_DIRS for pattern in ("*.h", "*.cpp")
                   for path in (ROOT / folder).rglob(pattern))
    assert len(files) > 20, f"expected the C++ sources under {CXX_DIRS}"
    done = subprocess.run([tool("clang-format"), "--dry-run", "-Werror", *files], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]


# Named notes (STYLE.md: `# NOTE [Output ring reuse]`): one place writes a note out, other places
# refer back to it by name, and docs/design.md indexes every note with the file that writes it.
NOTE_DIRS = ("csrc", "torchpool", "tests", "benchmarks", "docs")
CODE_DIRS = ("csrc", "torchpool")  # where notes are written out; tests, benchmarks and docs refer to them
# `NOTE [Name]`, wrapped or not: a comment's next line carries its marker, a docstring's or Markdown's only
# indentation; LINE_BREAK joins the lines back.
NOTE = re.compile(r"NOTE(?:\s|\n\s*(?://|#))+\[([^\]]+)\]")
LINE_BREAK = re.compile(r"\s*\n\s*(?:(?://|#)\s*)?")
# What a note's start looks like, after the indentation: `// NOTE [Name]`, `# NOTE [Name].`, `NOTE [Name]` alone
# in a docstring, or (in a docstring only) a paragraph's heading `How a step travels (NOTE [Name]):`.
NOTE_START = re.compile(r"(?:(?://|#)\s*)?NOTE \[([^\]]+)\](?=$|[.:]|\s)|[A-Z][\w ,'-]* \(NOTE \[([^\]]+)\]\):")
# A file named just after a reference (from its `]` on): `NOTE [Name] in executor.h`,
# `(NOTE [Name], `pool.py`)`, `NOTE [Name] (schedule.h)`.
CITED_FILE = re.compile(r"\]\)?(?:\s+in\s+|,\s*|\s*\()`{0,2}([\w./-]+\.(?:h|cpp|py))\b")
COMMENT = re.compile(r"\s*(?://|#)")


def note_files(folders: tuple[str, ...]) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*")
                  if path.suffix in (".h", ".cpp", ".py", ".md") and path.is_file())


def note_references() -> list[tuple[str, str, str | None]]:
    """(file:line, name, the file cited after it or None) for every `NOTE [Name]` in NOTE_DIRS."""
    found = []
    for path in note_files(NOTE_DIRS):
        if path == Path(__file__).resolve():  # the patterns above, not references
            continue
        text = path.read_text(encoding="utf-8")
        for match in NOTE.finditer(text):
            name = LINE_BREAK.sub(" ", match.group(1))
            if name == "...":  # design.md's own `NOTE [...]`, standing for any note
                continue
            cited = CITED_FILE.match(LINE_BREAK.sub(" ", text[match.end() - 1:match.end() + 200]))
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{path.relative_to(ROOT)}:{line}", name, cited.group(1) if cited else None))
    return found


def note_definitions() -> dict[str, list[str]]:
    """Note name -> where it is written out: `file:line`, the file relative to ROOT.

    A note starts a comment block or a docstring paragraph: the line before it is blank, code, or a bare
    comment marker, not more of the same comment. A start that names a file (`# NOTE [Split tail]
    (csrc/core/split_tail.h): ...`) refers to the note there instead.
    """
    written: dict[str, list[str]] = {}
    for path in note_files(CODE_DIRS):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            start = NOTE_START.match(line.strip())
            if not start or CITED_FILE.match(line.strip(), start.end(start.lastindex)):
                continue
            before = lines[number - 1].strip() if number else ""
            is_comment = COMMENT.match(line) is not None
            if is_comment:
                continues = COMMENT.match(before) is not None and before not in ("#", "//")
            else:
                continues = before != ""
            if not continues:
                written.setdefault(start.group(start.lastindex), []).append(f"{path.relative_to(ROOT)}:{number + 1}")
    return written


def note_index() -> dict[str, str]:
    """Note name -> the file docs/design.md's "Index of the NOTEs" says writes it out."""
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = design.split("## Index of the NOTEs", 1)[1].split("\n## ", 1)[0]
    rows = [row.split("|")[1:3] for row in section.splitlines() if row.startswith("| ") and "`" in row]
    return {name.strip(): written_in.split("`")[1] for name, written_in in rows}


def test_note_parsing_finds_the_notes_it_should():
    # Guards the three tests below against passing vacuously, should a pattern stop matching.
    assert "Slot reuse" in note_definitions(), "the note in csrc/core/action_queue.h was not recognised"
    assert note_index().get("Split tail") == "csrc/core/split_tail.h", "docs/design.md's index was not parsed"
    assert ("torchpool/pool.py" in {where.split(":")[0] for where, name, _ in note_references()
                                    if name == "Output ring reuse"}), "the reference wrapped in pool.py was missed"


def test_every_note_reference_names_a_note_written_out():
    written = note_definitions()
    dangling = [f"{where}: NOTE [{name}]" for where, name, _ in note_references() if name not in written]
    assert not dangling, "references to notes no file writes out:\n" + "\n".join(dangling)


def test_a_note_reference_that_names_a_file_names_the_file_that_writes_it():
    written = note_definitions()
    wrong = [f"{where}: NOTE [{name}] in {cited}, but it is written in {', '.join(written[name])}"
             for where, name, cited in note_references()
             if cited and name in written
             and not any(("/" + place.split(":")[0]).endswith("/" + cited) for place in written[name])]
    assert not wrong, "references that point at the wrong file:\n" + "\n".join(wrong)


def test_the_design_docs_index_lists_every_note_where_it_is_written_out():
    written, index = note_definitions(), note_index()
    problems = [f"NOTE [{name}]: written out in {', '.join(files)} but missing from the index"
                for name, files in sorted(written.items()) if name not in index]
    # One place per note; a second start that only refers back reads `... (NOTE [Name])`.
    problems += [f"NOTE [{name}]: the index says {file}, written out in {', '.join(written.get(name, ['no file']))}"
                 for name, file in index.items() if [place.split(":")[0] for place in written.get(name, [])] != [file]]
    assert not problems, "docs/design.md's Index of the NOTEs and the code disagree:\n" + "\n".join(problems)
