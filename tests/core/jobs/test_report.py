"""Report building and rendering."""

import numpy as np

from core.jobs import Report


def test_markdown_has_metrics_tables_sections_and_resolved_images(tmp_path):
    r = Report(title="T", summary="S")
    r.metrics["acc"] = 0.91234
    r.add_table("Tab", ["a", "b"], [[1, 2.5], ["x|y", float("nan")]])
    r.add_image("img.png", np.zeros((4, 4, 3), dtype=np.uint8), caption="zeros")
    r.add_section("Look", "see ![the image](artifact:img.png)")
    md = r.to_markdown(lambda ref: f"/files/{ref.name}")
    assert "# T" in md and "| acc | 0.9123 |" in md
    assert "| a | b |" in md and "x\\|y" in md and "nan" in md
    assert "![the image](/files/img.png)" in md
    assert "## Artifacts" not in md  # the only artifact is shown inline


def test_write_markdown_writes_files_beside(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = Report(title="T")
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    r.add_figure("plot.png", fig)
    r.add_json("raw.json", {"a": 1})
    path = r.write_markdown(tmp_path / "m.md")
    assert (tmp_path / "m" / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert '"a": 1' in (tmp_path / "m" / "raw.json").read_text()
    text = path.read_text()
    assert "![plot.png](m/plot.png)" in text and "[raw.json](m/raw.json)" in text


def test_roundtrip_through_json_keeps_refs():
    r = Report(title="T")
    r.add_file("a.txt", "hello")
    r.mark_stored("a.txt", "abc123")
    again = Report.model_validate(r.model_dump(mode="json"))
    assert again.artifacts[0].id == "abc123" and again.pending_files() == {}


def test_duplicate_artifact_names_are_refused():
    r = Report(title="T")
    r.add_file("a.txt", b"1")
    try:
        r.add_file("a.txt", b"2")
    except ValueError:
        return
    raise AssertionError("duplicate name accepted")
