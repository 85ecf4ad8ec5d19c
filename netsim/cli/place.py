"""``netsim place --topo SPEC --tp 8 --dp 4 ...``: compare rank -> chip placements.

Examples::

    netsim place --topo galaxy-wh --tp 8 --dp 4 --tp-bytes 32MiB --dp-bytes 1GiB
    netsim place --topo mesh:8x4,bw=12.5GB/s,lat=711ns,links=4 --tp 8 --dp 4 \\
        --tp-bytes 512KiB --strategies row_major,snake,search --budget 100 --format json
    netsim place --topo t3000 --tp 2 --dp 4 --dp-bytes 256MiB --overlap --heatmap figs/heat.png

Every phase (tp all-reduce, cp all-gather, ep all-to-all, dp all-reduce, pp send/recv)
runs in all groups of its dimension at once; phases run in sequence, or all at the same
time with ``--overlap``. For each strategy the table shows the step time, each phase's
time, the busiest and the mean link utilisation, hop-bytes and the change against
row-major. ``--heatmap figs/heat.png`` draws, per strategy, the link heatmap
``figs/heat-<strategy>.png`` and the placement map ``figs/heat-<strategy>-placement.png``
(folders are made). Where the step has several phases the link heatmap has one panel per
phase, each coloured by that phase's own utilisation.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import InputError, unknown_name
from ..run import (ALL_STRATEGIES, SEARCH_BUDGET, PlacementStudy, run_placement_study,
                   strategy_names)
from ..placement import DIMENSIONS
from ..units import format_size, format_time, parse_size, parse_time
from .options import (alpha_option, alpha_seconds, check_outputs, check_writable,
                      chunks_option,
                      emit, format_option, format_records, output_option, overwrite_option,
                      to_jsonable)
from .options import ProgressBar, engine_config, log_engine, wrote
from .options import algo_option, topo_option
from .options import figure_option

__all__ = ["command", "parse_strategies", "parse_repeats"]


def parse_strategies(text: str, has_map: bool) -> list[str]:
    """``'all'`` or a comma list -> strategy names (``explicit`` joins when a map is given)."""
    return strategy_names(text, has_map=has_map)


def parse_repeats(text: str | None) -> dict[str, int]:
    """``'tp=160,dp=1'`` -> ``{'tp': 160, 'dp': 1}`` (one-line errors)."""
    out: dict[str, int] = {}
    for token in (text or "").split(","):
        if not token.strip():
            continue
        key, eq, value = token.partition("=")
        key = key.strip().lower()
        if key not in DIMENSIONS:
            raise unknown_name("parallel dimension", key, DIMENSIONS)
        try:
            count = int(value)
        except ValueError:
            count = 0
        if not eq or count < 1:
            raise InputError(f"--repeat {token.strip()!r}: expected DIM=N with N >= 1")
        out[key] = count
    return out


def _fmt_time(value) -> str:
    return format_time(value) if isinstance(value, (int, float)) else str(value)


def _fmt_pct(value) -> str:
    return f"{value:+.1f}%" if isinstance(value, (int, float)) else "-"


def _fmt_util(value) -> str:
    return f"{100 * value:.1f}%"


def _columns(records: list[dict], phases: list[str]):
    cols = [("strategy", "strategy", str), ("step_s", "step", _fmt_time)]
    cols += [(f"{p}_s", p, _fmt_time) for p in phases]
    cols += [("max_link_util", "max util", _fmt_util), ("mean_link_util", "mean util", _fmt_util),
             ("hop_bytes", "hop-bytes", lambda v: format_size(v, binary=False)),
             ("vs_row_major_pct", "vs row-major", _fmt_pct)]
    if any(r.get("algorithms") for r in records):
        cols.append(("algorithms", "algorithms", str))
    return cols


def _figure_paths(heatmap: str, strategy: str) -> tuple[Path, Path]:
    """The link heatmap and placement map ``--heatmap`` gets for ``strategy``."""
    from ..report import labelled_paths

    links, where = labelled_paths(heatmap, [strategy, f"{strategy}-placement"])
    return links, where


def _draw(heatmap: str, model, scores, overwrite: bool) -> list[Path]:
    """Per strategy: the link heatmap (one panel per phase, each phase's own utilisation,
    where the step has several: a step average would hide the short phases) and the
    placement map (groups of the fastest active dimension)."""
    from ..report import draw_heatmap, draw_phase_heatmaps
    from ..report import draw_placement_map

    dim = model.layout.active_dimensions()[0]
    groups = model.layout.group_of(dim).tolist()
    written = []
    for score in scores:
        links, where = _figure_paths(heatmap, score.strategy)
        title = f"{score.strategy}: link use, step {format_time(score.step_s)}"
        if len(score.phase_s) > 1:
            phases = model.phase_utilisation(score)
            draw_phase_heatmaps(model.topology, {
                f"{name}: {format_time(score.phase_s[name])}": util
                for name, util in phases.items()}, links, title=title, overwrite=overwrite)
        else:
            draw_heatmap(model.topology, score.link_util, quantity="utilization", path=links,
                         title=title)
        draw_placement_map(model.topology, score.placement, groups, where,
                           title=f"{score.strategy}: {dim} groups")
        written += [links, where]
    return written


@click.command("place")
@topo_option(required=True)
@click.option("--tp", type=click.IntRange(min=1), default=1, show_default=True,
              help="Tensor-parallel degree.")
@click.option("--cp", type=click.IntRange(min=1), default=1, show_default=True,
              help="Context-parallel degree.")
@click.option("--ep", type=click.IntRange(min=1), default=1, show_default=True,
              help="Expert-parallel degree.")
@click.option("--dp", type=click.IntRange(min=1), default=1, show_default=True,
              help="Data-parallel degree.")
@click.option("--pp", type=click.IntRange(min=1), default=1, show_default=True,
              help="Pipeline-parallel degree.")
@click.option("--layout-order", "rank_order", default=None,
              help="Rank numbering over the parallel dimensions, fastest first "
                   "[default: tp-cp-ep-dp-pp].")
@click.option("--tp-bytes", default="0", help="TP all-reduce size per step (e.g. 32MiB).")
@click.option("--cp-bytes", default="0", help="CP all-gather output size (e.g. 64MiB).")
@click.option("--ep-bytes", default="0", help="EP all-to-all send buffer per rank.")
@click.option("--dp-bytes", default="0", help="DP gradient all-reduce size (e.g. 1GiB).")
@click.option("--pp-bytes", default="0", help="PP activations sent to the next stage.")
@click.option("--strategies", default="all", show_default=True,
              help="Comma list of strategies, or all: " + ", ".join(ALL_STRATEGIES) + ".")
@algo_option(help="Collective algorithm of every phase: default (what the machine's "
                  "library runs: NCCL's model on NVIDIA presets, tt-metal's CCLs on "
                  "Tenstorrent ones; ring where the machine names none), a name, or auto "
                  "(fastest per strategy).")
@chunks_option
@click.option("--overlap", is_flag=True, help="Run all phases at the same time.")
@click.option("--repeat", "repeats", default=None, metavar="DIM=N,...",
              help="Collectives per step of a dimension, e.g. tp=160 (default 1 each).")
@click.option("--max-copies", type=click.IntRange(min=1), default=8, show_default=True,
              help="With --overlap, a repeated phase is simulated as this many copies.")
@click.option("--shape", default=None, help="Tile shape of the tiles strategy (e.g. 2x4).")
@click.option("--map", "map_file", type=click.Path(dir_okay=False), default=None,
              help="A rank -> node map (JSON or CSV) for the explicit strategy.")
@click.option("--budget", type=click.IntRange(min=0), default=SEARCH_BUDGET, show_default=True,
              help="Simulations the search may run (each a full step; cheap filters run first).")
@click.option("--seconds", default=None,
              help="Wall-time limit of the search (e.g. 30s, 2min; a bare number is seconds).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the random strategy and the search.")
@alpha_option
@figure_option("--heatmap",
               help="Draw each strategy's link heatmap and placement map (.png/.svg/.pdf): "
                    "heat.png gives heat-<strategy>.png and heat-<strategy>-placement.png.")
@format_option
@output_option
@overwrite_option
def command(topo_spec, tp, cp, ep, dp, pp, rank_order, tp_bytes, cp_bytes, ep_bytes,
            dp_bytes, pp_bytes, strategies, algorithm, chunks, overlap, repeats, max_copies, shape,
            map_file, budget, seconds, seed, alpha, heatmap, fmt, output, overwrite):
    """Compare placements of a TP x CP x EP x DP x PP job on a machine by simulating one
    step (all groups of a phase at once) under each strategy."""
    rank_order = rank_order or "tp-cp-ep-dp-pp"
    if seconds is not None:
        text, seconds = seconds, parse_time(seconds, "--seconds")
        if not 0 < seconds <= 1e9:          # also false for nan
            raise InputError(f"--seconds must be a time > 0 and at most 1e9 s, got {text!r}")
    if output:
        check_writable(output, overwrite)
    names = parse_strategies(strategies, map_file is not None)
    if heatmap:
        from ..report import figure_format

        figure_format(heatmap)              # a figure format, before any work
    check_outputs([output, *(path for name in names if heatmap
                             for path in _figure_paths(heatmap, name))],
                  overwrite=overwrite)
    sizes = {d: parse_size(v, f"--{d}-bytes")
             for d, v in zip(("tp", "cp", "ep", "dp", "pp"),
                             (tp_bytes, cp_bytes, ep_bytes, dp_bytes, pp_bytes))}
    study = PlacementStudy(
        topology=topo_spec, layout={"tp": tp, "cp": cp, "ep": ep, "dp": dp, "pp": pp},
        order=rank_order, bytes=sizes, repeat=parse_repeats(repeats) or None,
        algorithm=algorithm, chunks=chunks, overlap=overlap, strategies=names, shape=shape,
        map=map_file, budget=budget, seconds=seconds, seed=seed, max_copies=max_copies,
        alpha=alpha_seconds(alpha))
    layout = study.parallel_layout()
    searching = "search" in study.strategy_names()
    with ProgressBar(study.budget if searching else 0, "search") as bar:   # terminal only
        outcome = run_placement_study(study, progress=lambda done, _: bar.advance(),
                                      engine=engine_config())
    topology, model, scores, found = outcome.topology, outcome.model, outcome.scores, \
        outcome.search
    if not scores:
        raise InputError(f"none of the strategies {', '.join(names)} can place "
                         f"{layout.describe()} on {topology.name!r}")
    records = outcome.records()
    for score in scores:            # -v: what the engine ran for each strategy's step
        log_engine(score.strategy, score.engine)
    phases = [p.name for p in model.workload.phases]
    skipped = outcome.skipped
    if heatmap:
        for path in _draw(heatmap, model, scores, overwrite):
            wrote(path)
    unplaced = [n for n in skipped if n not in outcome.unrunnable]
    if unplaced:
        click.echo(f"skipped (cannot place this layout here): {', '.join(unplaced)}", err=True)
    for name, why in outcome.unrunnable.items():
        click.echo(f"skipped {name} (its groups cannot run): {why}", err=True)
    document = {
        "topology": topology.name, "layout": layout.degrees, "order": list(layout.order),
        "phases": [{"name": p.name, "dim": p.dim, "op": p.op, "bytes": p.size,
                    "repeat": p.repeat} for p in model.workload.phases],
        "overlap": overlap,
        "placements": {s.strategy: [topology.node_names[n] for n in s.placement]
                       for s in scores},
    }
    if outcome.unrunnable:
        document["unrunnable"] = dict(outcome.unrunnable)
    if found is not None:
        # No wall time here: the JSON is the same, byte for byte, run after run.
        document["search"] = {"start": found.start, "evaluations": found.evaluations,
                              "cheap_scores": found.cheap_scores, "improved": found.improved}
    title = (f"{layout.describe()} on {topology.name}: "
             + ("phases overlapped" if overlap else "phases in sequence")
             + (f"; search from {found.start}, {found.evaluations} simulations in "
                f"{found.seconds:.1f} s" if found is not None else ""))
    emit(format_records(records, fmt, to_jsonable(document) if fmt == "json" else None,
                        columns=_columns(records, phases), title=title), output, overwrite)

