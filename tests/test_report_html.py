"""Self-contained HTML reports: valid HTML, figures embedded as data URIs, nothing fetched
from the network, text escaped; ``netsim run --report``."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import pytest

from netsim.cli import main
from netsim.errors import InputError
from netsim.report.html import Figure, Heading, Table, Text, render_html, write_html_report

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.images, self.open = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "img":
            self.images.append(dict(attrs)["src"])
        if tag not in ("meta", "img"):
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()


def _parse(text):
    parser = _Collect()
    parser.feed(text)
    assert parser.open == []                      # every element closed, in order
    return parser


def test_report_embeds_figures_and_escapes_text(tmp_path):
    svg = b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"></svg>'
    (tmp_path / "f.svg").write_bytes(svg)
    sections = [Heading("results"), Text("a < b & <script>alert(1)</script>"),
                Table([{"topology": "mesh:4x4", "time_s": 3.25e-4, "links": 48},
                       {"topology": "torus:4x4", "time_s": None}], caption="runs"),
                Figure(PNG, caption="heatmap"), {"figure": tmp_path / "f.svg"},
                {"heading": "more", "level": 3}, "plain text"]
    path = write_html_report(tmp_path / "r.html", "netsim <report>", sections)
    text = path.read_text()
    parsed = _parse(text)
    assert text.startswith("<!DOCTYPE html>")
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "netsim &lt;report&gt;" in text
    assert parsed.tags.count("tr") == 3 and '<td class="num">0.000325</td>' in text
    assert "<td>-</td>" in text                   # None shown as a dash
    assert base64.b64decode(parsed.images[0].split(",", 1)[1]) == PNG
    assert parsed.images[1].startswith("data:image/svg+xml;base64,")
    assert not re.search(r"(src|href)=\"https?:", text) and "@import" not in text
    assert "<h3>more</h3>" in text and "<p>plain text</p>" in text


def test_bad_sections_and_figures():
    with pytest.raises(InputError, match="expected a heading"):
        render_html("t", [{"what": 1}])
    with pytest.raises(InputError, match="PNG or SVG"):
        render_html("t", [Figure(b"GIF89a")])


def test_netsim_run_writes_report_and_heatmap(tmp_path, capsys, monkeypatch):
    """Without Plotly the report is this static page (tests/test_report_interactive.py:
    the interactive one)."""
    import netsim.cli.run
    from netsim.report.heatmap import heatmap_paths
    from netsim.run.scenarios.scenario import default_scenario_path, load_scenario

    monkeypatch.setattr(netsim.cli.run, "interactive_report", lambda: False)

    jobs = len(load_scenario(default_scenario_path()).jobs)
    report, heatmap = tmp_path / "r.html", tmp_path / "h.png"
    main(["run", "--report", str(report), "--heatmap", str(heatmap)])
    parsed = _parse(report.read_text())
    assert "table" in parsed.tags and len(parsed.images) == jobs   # one heatmap per job
    err = capsys.readouterr().err
    for target in heatmap_paths(heatmap, jobs):
        assert target.read_bytes()[:4] == b"\x89PNG"
        assert f"wrote {target}" in err
    assert f"wrote {report}" in err
    with pytest.raises(SystemExit) as stop:
        main(["run", "--report", str(report)])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"netsim: error: {report}: already exists (use --overwrite to replace it)"]


def test_netsim_run_heatmap_per_job(tmp_path, capsys):
    scenario = tmp_path / "two.yaml"
    scenario.write_text("name: two\ntopology: torus:3x3\njobs:\n"
                        "  - {kind: traffic, pattern: shift, size: 1MiB}\n"
                        "  - {kind: traffic, pattern: alltoall, size: 64KiB}\n")
    main(["run", str(scenario), "--heatmap", str(tmp_path / "h.svg"), "--format", "json"])
    assert (tmp_path / "h-1.svg").exists() and (tmp_path / "h-2.svg").exists()
    with pytest.raises(SystemExit) as stop:
        main(["run", str(scenario), "--heatmap", str(tmp_path / "h.gif")])
    assert stop.value.code == 2
    assert "unknown figure format '.gif'" in capsys.readouterr().err
