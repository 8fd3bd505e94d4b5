"""benchmarks write their RESULTS.md sections through torchpool.bench: one section replaced, the rest kept."""

from torchpool import bench


def test_a_recorded_section_replaces_its_old_text_and_keeps_the_others(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n\n<!-- a:begin -->\nold a\n<!-- a:end -->\n\n<!-- b:begin -->\nb\n<!-- b:end -->\n")
    bench.record_section(results, "a", "A title", ["- Settings: s"], ["| row |", "", "![plot](a.png)"])
    text = results.read_text()
    assert "old a" not in text and "<!-- b:begin -->\nb\n<!-- b:end -->" in text
    section = text[text.index("<!-- a:begin -->"):text.index("<!-- a:end -->")].splitlines()
    assert section[:3] == ["<!-- a:begin -->", "## A title", ""]
    assert section[3].startswith("- Date: ") and section[4].startswith("- Machine: ")
    assert section[5:] == ["- Settings: s", "", "| row |", "", "![plot](a.png)"]


def test_a_new_section_is_appended(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Results\n")
    bench.record_section(results, "c", "C", [], ["body"])
    assert results.read_text().startswith("# Results\n\n<!-- c:begin -->\n## C\n")
    assert results.read_text().endswith("body\n<!-- c:end -->\n")
