"""Schedule.plot writes the timeline and memory figure with matplotlib."""

import pytest


def test_png_and_svg(pp, tmp_path):
    pytest.importorskip("matplotlib")
    s = pp.schedule("zb-h1", num_stages=4, num_microbatches=8, memory_cap=4)
    png, svg = tmp_path / "zb-h1.png", tmp_path / "zb-h1.svg"
    figure = s.plot(png)
    s.plot(svg, title="zb-h1")
    assert png.read_bytes().startswith(b"\x89PNG")
    assert b"<svg" in svg.read_bytes()[:1000]
    timeline, memory = figure.axes[:2]
    assert [t.get_text() for t in timeline.get_yticklabels()] == [
        f"rank {r}" for r in range(4)]
    assert memory.get_ylabel() == "activation memory"


def test_native_svg(pp, tmp_path):
    path = tmp_path / "s.svg"
    text = pp.schedule("1f1b", num_stages=2, num_microbatches=2).to_svg(path)
    assert text.startswith("<svg") and path.read_text() == text


def test_chrome_trace(pp):
    import json
    trace = json.loads(pp.schedule("1f1b", num_stages=2,
                                   num_microbatches=2).to_chrome_trace())
    ranks = {e["tid"] for e in trace["traceEvents"] if e["ph"] == "X"}
    assert ranks == {0, 1}
