"""benchmarks write their RESULTS.md sections through benchmarks/harness: one section replaced, the rest kept."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import harness  # noqa: E402  (benchmarks/harness: not part of the package)


def test_a_recorded_section_replaces_its_old_text_and_keeps_the_others(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n\n<!-- a:begin -->\nold a\n<!-- a:end -->\n\n<!-- b:begin -->\nb\n<!-- b:end -->\n")
    harness.record_section("a", "A title", settings=["- Settings: s"], body=["| row |", "", "![plot](a.png)"],
                           path=results)
    text = results.read_text()
    assert "old a" not in text and "<!-- b:begin -->\nb\n<!-- b:end -->" in text
    section = text[text.index("<!-- a:begin -->"):text.index("<!-- a:end -->")].splitlines()
    assert section[:3] == ["<!-- a:begin -->", "## A title", ""]
    heads = ("- Date: ", "- Machine: ", "- Software: ", "- Command: `python ")
    assert [line[:len(head)] for line, head in zip(section[3:7], heads)] == list(heads), section[3:7]
    assert section[7:] == ["- Settings: s", "", "| row |", "", "![plot](a.png)"]


def test_the_question_stands_under_the_title(tmp_path):
    results = tmp_path / "RESULTS.md"
    harness.record_section("q", "Q", question="How fast?", body=["body"], path=results)
    section = results.read_text().splitlines()
    start = section.index("<!-- q:begin -->")
    assert section[start + 1:start + 5] == ["## Q", "", "How fast?", ""]
    assert section[start + 5].startswith("- Date: ")


def test_a_new_section_is_appended(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n")
    harness.record_section("c", "C", body=["body"], path=results)
    assert results.read_text().startswith("# Results\n\n<!-- c:begin -->\n## C\n")
    assert results.read_text().endswith("body\n<!-- c:end -->\n")


def test_interleaved_orders_take_every_case_once_per_round():
    assert [case for _, case in harness.interleaved("AB", 3)] == list("ABBAAB")
    assert [case for _, case in harness.interleaved("ABC", 3, "rotate")] == list("ABCBCACAB")
    assert [case for _, case in harness.interleaved("AB", 2, "same")] == list("ABAB")


def test_paired_rounds_give_the_median_ratio_and_the_wins():
    result = harness.paired([2.0, 3.0, 1.0], [1.0, 1.0, 2.0])
    assert (result.ratio, result.wins, result.rounds) == (2.0, 2, 3)
