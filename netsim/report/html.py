"""One self-contained HTML file from headings, text, tables and figures.

Figures are embedded as base64 ``data:`` URIs and the style sheet is inline, so the file
opens anywhere without network access and can be mailed or archived as it is.

>>> sections = [Heading("all-to-all on a 4x4 mesh"),
...             Table([{"topology": "mesh:4x4", "time_s": 3.2e-4}]),
...             Figure(b"\\x89PNG...", caption="link utilisation")]
>>> write_html_report("report.html", "netsim report", sections)   # doctest: +SKIP

Sections may also be plain dicts: ``{"heading": ...}``, ``{"text": ...}``,
``{"table": [...], "caption": ...}``, ``{"figure": bytes_or_path, "caption": ...}``.
"""

from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import InputError

__all__ = ["Heading", "Text", "Table", "Figure", "render_html", "write_html_report",
           "scenario_sections", "write_scenario_report"]


@dataclass(frozen=True)
class Heading:
    """A section heading (``level`` 2 or 3; the report title is level 1)."""

    text: str
    level: int = 2


@dataclass(frozen=True)
class Text:
    """A paragraph of plain text (escaped, not HTML)."""

    text: str


@dataclass(frozen=True)
class Table:
    """Rows as dicts; columns are the keys in order of first appearance unless given."""

    rows: Sequence[Mapping[str, Any]]
    caption: str | None = None
    columns: Sequence[str] | None = None


@dataclass(frozen=True)
class Figure:
    """An image: PNG or SVG bytes, or the path of a .png/.svg file."""

    image: bytes | str | Path
    caption: str | None = None
    alt: str | None = None


_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 70em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; border-bottom: 1px solid #ccc; padding-bottom: .2em; }
h2 { font-size: 1.25em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: .9em; }
th, td { border: 1px solid #d4d4d4; padding: .25em .6em; }
th { background: #f1f1f1; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: .3em; }
figure { margin: 1em 0 1.6em; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .9em; color: #555; }
"""


def _section(item: Any):
    """A dataclass section from a dataclass or a dict form."""
    if isinstance(item, (Heading, Text, Table, Figure)):
        return item
    if isinstance(item, str):
        return Text(item)
    if isinstance(item, Mapping):
        if "heading" in item:
            return Heading(str(item["heading"]), int(item.get("level", 2)))
        if "text" in item:
            return Text(str(item["text"]))
        if "table" in item:
            return Table(item["table"], item.get("caption"), item.get("columns"))
        if "figure" in item:
            return Figure(item["figure"], item.get("caption"), item.get("alt"))
    raise InputError(f"report section {item!r:.60}: expected a heading, text, table or figure")


def _cell(value: Any) -> tuple[str, bool]:
    """(escaped text, is a number) of one table cell."""
    if value is None:
        return "-", False
    if isinstance(value, bool):
        return str(value), False
    if isinstance(value, float):
        return ("-" if math.isnan(value) else f"{value:.4g}"), True
    if isinstance(value, int):
        return str(value), True
    return html.escape(str(value)), False


def _table(table: Table) -> str:
    columns = list(table.columns) if table.columns is not None else list(
        dict.fromkeys(k for row in table.rows for k in row))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = []
    for row in table.rows:
        cells = [_cell(row.get(c)) for c in columns]
        body.append("<tr>" + "".join(f'<td class="num">{t}</td>' if num else f"<td>{t}</td>"
                                     for t, num in cells) + "</tr>")
    caption = f"<caption>{html.escape(table.caption)}</caption>" if table.caption else ""
    return (f"<table>{caption}<thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def _image_uri(image: bytes | str | Path) -> str:
    if isinstance(image, (str, Path)):
        path = Path(image)
        try:
            data = path.read_bytes()
        except OSError as err:
            raise InputError(f"{path}: cannot read figure ({err.strerror})") from None
    else:
        data = bytes(image)
    if data.startswith(b"\x89PNG"):
        mime = "image/png"
    elif data.lstrip()[:5] in (b"<?xml", b"<svg ") or b"<svg" in data[:512]:
        mime = "image/svg+xml"
    else:
        raise InputError("report figure: expected PNG or SVG data")
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _figure(figure: Figure) -> str:
    alt = html.escape(figure.alt or figure.caption or "figure", quote=True)
    caption = f"<figcaption>{html.escape(figure.caption)}</figcaption>" if figure.caption \
        else ""
    return f'<figure><img src="{_image_uri(figure.image)}" alt="{alt}">{caption}</figure>'


def render_html(title: str, sections: Sequence[Any]) -> str:
    """The report as one HTML document (a string)."""
    parts = []
    for item in map(_section, sections):
        if isinstance(item, Heading):
            level = min(max(item.level, 2), 6)
            parts.append(f"<h{level}>{html.escape(item.text)}</h{level}>")
        elif isinstance(item, Text):
            parts.append(f"<p>{html.escape(item.text)}</p>")
        elif isinstance(item, Table):
            parts.append(_table(item))
        else:
            parts.append(_figure(item))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n" + "\n".join(parts) + "\n</body>\n</html>\n")


def write_html_report(path, title: str, sections: Sequence[Any], *,
                      overwrite: bool = True) -> Path:
    """Write :func:`render_html` to ``path`` atomically; returns the path."""
    from ..outputs import write_atomic

    return write_atomic(path, render_html(title, sections), overwrite)


# -- scenario reports ---------------------------------------------------------------------------
def scenario_sections(outcome, heatmaps_per_job: int = 3) -> list[Any]:
    """Sections for a scenario outcome: its records, then per job a table, a bus-bandwidth
    curve when the job swept sizes, and link-utilisation heatmaps of its last results."""
    from .heatmap import scenario_results

    scenario = outcome.scenario
    sections: list[Any] = []
    if scenario.description:
        sections.append(Text(scenario.description))
    sections.append(Table(outcome.records, caption="all results"))
    for job, picked in zip(outcome.jobs, scenario_results(outcome, heatmaps_per_job)):
        sections.append(Heading(f"job {job.name} ({job.kind})"))
        sections.append(Table(job.records))
        curve = _job_curve(job)
        if curve is not None:
            sections.append(curve)
        for label, result, topology in picked:
            sections.append(_heatmap_figure(label, result, topology))
    return sections


def _job_curve(job) -> Figure | None:
    from .curves import draw_curves
    from .figure import figure_bytes

    rows = [r for r in job.records if r.get("busbw_GBps") is not None and "size_bytes" in r]
    if len({r["size_bytes"] for r in rows}) < 2:
        return None
    series: dict[str, list] = {}
    for r in rows:
        series.setdefault(str(r.get("topology", job.name)), []).append(r)
    png = figure_bytes(draw_curves, series, title=f"{job.name}: bus bandwidth")
    return Figure(png, caption=f"{job.name}: busbw against message size")


def _heatmap_figure(label: str, result, topology) -> Figure:
    from .figure import figure_bytes
    from .heatmap import draw_heatmap

    png = figure_bytes(draw_heatmap, topology, result, title=f"{label} on {topology.name}")
    return Figure(png, caption=f"{label}: link utilisation (makespan {result.makespan:.4g} s)")


def write_scenario_report(path, outcome, *, overwrite: bool = True) -> Path:
    """Write the HTML report of a scenario outcome (see :func:`scenario_sections`)."""
    return write_html_report(path, f"netsim scenario {outcome.scenario.name}",
                             scenario_sections(outcome), overwrite=overwrite)
