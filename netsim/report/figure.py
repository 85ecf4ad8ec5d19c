"""Figure plumbing shared by the report drawings: an Agg figure without pyplot, sizing a
figure to a topology layout, drawing nodes, and saving atomically and reproducibly.

matplotlib is imported inside the functions only.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import InputError
from .layout import Layout, LinkGeometry

__all__ = ["Canvas", "new_figure", "save_figure", "figure_bytes", "figure_format",
           "figure_for", "canvas_on", "draw_nodes", "FORMATS"]

#: File extension -> matplotlib format.
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def new_figure(width: float, height: float):
    """A matplotlib Figure on an explicit Agg canvas (no pyplot, no global backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def figure_format(path) -> str:
    """'png', 'svg' or 'pdf' from the path's extension; an InputError otherwise."""
    suffix = Path(str(getattr(path, "name", path))).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"{path}: unknown figure format {suffix or '(none)'!r} "
                         f"(use {', '.join(FORMATS)})")
    return FORMATS[suffix]


def save_figure(fig, path, overwrite: bool = True, fmt: str | None = None) -> Any:
    """Save ``fig`` to ``path`` (format from the extension: .png, .svg, .pdf) atomically,
    or into a binary file object when ``path`` has a ``write`` method (``fmt``, default png).
    Output is deterministic (no dates, fixed SVG ids)."""
    import matplotlib

    from ..outputs import write_atomic

    if fmt is None:
        named = not hasattr(path, "write") or getattr(path, "name", None)
        fmt = figure_format(path) if named else "png"
    metadata = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}[fmt]
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "netsim", "svg.fonttype": "path"}):
        try:
            fig.savefig(buffer, format=fmt, metadata=metadata)
        except Exception:               # noqa: BLE001 - told apart below
            bad = _bad_mathtext(fig)    # a title such as `$\x$`: the user's text, one line
            if bad is None:
                raise
            raise InputError(f"{getattr(path, 'name', path)}: cannot draw the text {bad!r}: "
                             f"not valid mathtext (write \\$ for a dollar sign)") from None
    if hasattr(path, "write"):
        path.write(buffer.getvalue())
        return path
    return write_atomic(path, buffer.getvalue(), overwrite)


def _bad_mathtext(fig) -> str | None:
    """The first text of ``fig`` that matplotlib reads as mathtext and cannot parse."""
    from matplotlib.mathtext import MathTextParser
    from matplotlib.text import Text

    parser = MathTextParser("path")
    for artist in fig.findobj(Text):
        text, is_math = artist._preprocess_math(artist.get_text())
        if is_math:
            try:
                parser.parse(text)
            except Exception:           # noqa: BLE001 - ValueError or pyparsing's own
                return artist.get_text()
    return None


def figure_bytes(draw, *args, fmt: str = "png", **kwargs) -> bytes:
    """Bytes of the figure ``draw(*args, path=<buffer>, **kwargs)`` makes (for HTML reports)."""
    buffer = io.BytesIO()
    buffer.name = f"figure.{fmt}"
    draw(*args, path=buffer, **kwargs)
    return buffer.getvalue()


def _extent(positions: np.ndarray, margin: float) -> tuple[float, float, float, float]:
    lo = positions.min(axis=0) - margin if positions.size else np.zeros(2) - margin
    hi = positions.max(axis=0) + margin if positions.size else np.zeros(2) + margin
    return float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1])


@dataclass
class Canvas:
    """A figure laid out for a topology: the axes, inches per layout unit and the figure
    rectangle (fractions) beside the axes where a colour bar goes."""

    fig: Any
    ax: Any
    scale: float
    side: tuple[float, float, float, float]


def figure_for(lay: Layout, caption: Sequence[str] = (), right: float = 1.5,
               geometry: LinkGeometry | None = None) -> Canvas:
    """A figure whose axes have the layout's aspect (nodes, ghosts of ``geometry``, tile
    captions), a title on top, the ``caption`` lines in small text below (wrapped to the
    figure's width) and ``right`` inches for a colour bar or a legend."""
    import textwrap

    x0, x1, y0, y1 = _extent(_layout_points(lay, geometry), 0.6)
    width, height = x1 - x0, y1 - y0
    scale = min(1.1, 10.0 / max(width, height, 1.0), 7.5 / max(height, 1.0))
    ax_w, ax_h = width * scale, height * scale
    fig_w = max(ax_w + 0.25 + right, 5.0)
    lines = [part for line in caption for part in textwrap.wrap(line, int(fig_w * 15.5))]
    left, top, bottom = 0.25 + (fig_w - ax_w - 0.25 - right) / 2, 0.45, 0.2 + 0.13 * len(lines)
    fig_h = ax_h + top + bottom
    fig = new_figure(fig_w, fig_h)
    ax = fig.add_axes((left / fig_w, bottom / fig_h, ax_w / fig_w, ax_h / fig_h))
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.set_axis_off()
    if lines:
        fig.text(0.08 / fig_w, 0.08 / fig_h, "\n".join(lines), fontsize=7, color="#333333",
                 va="bottom")
    bar_h = min(ax_h * 0.9, 4.0)
    side = ((left + ax_w + 0.2) / fig_w, (bottom + (ax_h - bar_h) / 2) / fig_h,
            0.16 / fig_w, bar_h / fig_h)
    return Canvas(fig, ax, scale, side)


def canvas_on(ax, lay: Layout, geometry: LinkGeometry | None = None) -> Canvas:
    """A :class:`Canvas` on the caller's matplotlib axes (a notebook's subplot): the
    layout's extent and aspect, inches per layout unit from the axes' size, and no side
    rectangle (a colour bar then takes room from ``ax``)."""
    x0, x1, y0, y1 = _extent(_layout_points(lay, geometry), 0.6)
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal")
    ax.set_axis_off()
    box = ax.get_position()
    width, height = ax.figure.get_size_inches()
    scale = min(box.width * width / max(x1 - x0, 1e-9), box.height * height / max(y1 - y0, 1e-9))
    return Canvas(ax.figure, ax, float(scale), None)    # type: ignore[arg-type]


def _layout_points(lay: Layout, geometry: LinkGeometry | None) -> np.ndarray:
    points = [lay.positions]
    if geometry is not None and geometry.ghosts:
        points.append(np.asarray([g[:2] for g in geometry.ghosts]))
    if lay.notes:
        points.append(np.asarray([n[:2] for n in lay.notes]) + [0.0, 0.3])
    return np.vstack(points)


def draw_nodes(ax, topology, lay: Layout, scale: float, faces=None, texts=None,
               ghosts=()) -> None:
    """Endpoints as circles, switches as squares; ``faces``/``texts`` per node override the
    default fill colour and label (the node name when the names fit). ``ghosts`` are
    ``(x, y, node)`` dashed copies named in grey (far ends of torus wrap-around links)."""
    from matplotlib.patches import Circle, Rectangle

    r = lay.node_radius
    size = _font_size(topology.node_names, r, scale)
    text_size = size if texts is None else _font_size(
        [line for t in texts if t for line in str(t).split("\n")], r, scale, 9.0)
    for x, y, text in lay.notes:
        ax.text(x, y, text, ha="center", va="bottom", fontsize=8, color="#333333")
    for x, y, node in ghosts:
        ax.add_artist(Circle((x, y), r, facecolor="none", edgecolor="#9a9a9a", linewidth=0.8,
                            linestyle=(0, (2, 2)), zorder=3))
        if size >= 4.5:
            ax.text(x, y, topology.node_names[node], ha="center", va="center", zorder=4,
                    fontsize=size, color="#8a8a8a", fontstyle="italic")
    for i, name in enumerate(topology.node_names):
        x, y = lay.positions[i]
        switch = bool(topology.is_switch[i])
        face = faces[i] if faces is not None else ("#5f6b7a" if switch else "#f2f2f2")
        patch = (Rectangle((x - r, y - r), 2 * r, 2 * r) if switch else Circle((x, y), r))
        patch.set(facecolor=face, edgecolor="#333333", linewidth=0.8, zorder=3)
        ax.add_artist(patch)   # add_artist: the limits are fixed, skip the update
        text = texts[i] if texts is not None else name
        if text and text_size >= 4.5:
            ax.text(x, y, text, ha="center", va="center", zorder=4, fontsize=text_size,
                    color="white" if _is_dark(face) else "black", linespacing=1.0)


def _font_size(texts, radius: float, scale: float, largest: float = 8.0) -> float:
    """Points at which the longest of ``texts`` fits across a node of ``radius``."""
    longest = max((len(t) for t in texts), default=1)
    return min(largest, 2 * radius * scale * 72 / max(longest, 2) * 1.5)


def _is_dark(face) -> bool:
    from matplotlib.colors import to_rgb

    red, green, blue = to_rgb(face)
    return 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
