"""``netsim plan MODEL --topo PRESET --batch B``: choose a training layout and placement.

Examples::

    netsim plan llama3-8b --topo dgx-h100 --batch 16 --top 3
    netsim plan llama3-70b --topo dgx-h100-cluster:nodes=32 --batch 256 --format json
    netsim plan llama3-8b --topo galaxy-wh --batch 32 --layout tp=8,dp=4,zero=3 --explain
    netsim plan my-model.yaml --topo gb200-nvl72 --batch 288 --plot figs/plan.png

MODEL is a shipped model (``llama3-8b``, ``llama3-70b``, ``llama3-405b``, ``gpt3-175b``,
``mixtral-8x7b``, ``deepseek-v3``) or a model YAML file. Every layout that divides the chips
and fits in memory is bounded, the ``--top`` best bounds are simulated under their best
placement, and the table ranks them: step time, compute, exposed communication per split
(tp, cp, ep, pp, dp), pipeline bubble, memory per chip, MFU and tokens/s. ``--layout``
simulates one layout (keys tp, cp, ep, dp, pp, vp, mb, zero, recompute; dp defaults to what fills
the chips). The model is in ``docs/plan.md``.
"""

from __future__ import annotations

import click

from ..errors import InputError
from ..units import format_time
from .options import (check_outputs, check_writable, emit, format_option, format_records,
                      output_option, overwrite_option, to_jsonable)
from .options import ProgressBar, engine_config, log_engine, wrote
from .options import algo_option, figure_option, topo_option
from .options import executor_options

__all__ = ["command"]

_SPLITS = ("tp", "cp", "ep", "pp", "dp")


def _columns(records):
    t = lambda v: format_time(v) if isinstance(v, (int, float)) else "-"   # noqa: E731
    cols = [("rank", "#", str), ("layout", "layout", str), ("placement", "placement", str),
            ("step_s", "step", t), ("compute_s", "compute", t)]
    cols += [(f"{s}_s", f"{s} comm", t) for s in _SPLITS
             if any(f"{s}_s" in r for r in records)]
    cols += [("bubble_s", "bubble", t),
             ("memory_gib", "mem/chip", lambda v: f"{v:.1f} GiB"),
             ("mfu", "MFU", lambda v: f"{100 * v:.1f}%"),
             ("tokens_per_s", "tokens/s", lambda v: f"{v:,.0f}")]
    return cols


def _explain(result, topology) -> str:
    """Why the winner wins: the time split side by side with the runner-up, and the links
    its collectives load most under each placement."""
    rows = result.rows
    if len(rows) < 2:
        return f"only one layout simulated: {rows[0]['layout']}"
    lines = []
    a, b = rows[0], rows[1]
    lines.append(f"winner {a['layout']} ({a['placement']}): {format_time(a['step_s'])}; "
                 f"runner-up {b['layout']} ({b['placement']}): {format_time(b['step_s'])}")
    for key in ("compute_s", *(f"{s}_s" for s in _SPLITS), "bubble_s"):
        va, vb = a.get(key, 0.0), b.get(key, 0.0)
        if abs(vb - va) > 1e-9 * max(a["step_s"], 1e-30):
            lines.append(f"  {key[:-2]:>8}: {format_time(va):>10} vs {format_time(vb):>10}")
    for label, detail in (("winner", result.details[0]), ("runner-up", result.details[1])):
        times = detail["times"]
        if times:
            lines.append(f"  {label}: one of each collective, all groups at once: "
                         + ", ".join(f"{k} {format_time(v)}" for k, v in times.items()))
        hot = [f"{name} {link} {100 * util:.0f}%"
               for name, (link, util) in detail.get("busiest", {}).items() if util > 0]
        if hot:
            lines.append(f"  {label} ({a['placement'] if label == 'winner' else b['placement']})"
                         f": busiest link per collective: " + "; ".join(hot))
        for name, why in detail.get("skipped", {}).items():
            why = why if len(why) <= 160 else why[:157] + "..."
            lines.append(f"  {label}: placement {name} skipped: {why}")
    stats = result.stats
    if stats:
        from ..planning import describe_stats

        lines.append(f"  collectives: {describe_stats(stats)}")
    return "\n".join(lines)


def _plot(path: str, rows, overwrite: bool) -> None:
    """A stacked bar per layout: compute, exposed communication per split, bubble."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [r["layout"] for r in rows]
    parts = ["compute_s", *(f"{s}_s" for s in _SPLITS), "bubble_s"]
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(rows) + 1.5))
    left = [0.0] * len(rows)
    for key in parts:
        vals = [r.get(key, 0.0) for r in rows]
        if not any(vals):
            continue
        ax.barh(labels, vals, left=left, label=key[:-2])
        left = [x + v for x, v in zip(left, vals)]
    ax.invert_yaxis()
    ax.set_xlabel("step time (s)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    from ..report import save_figure

    save_figure(fig, path, overwrite)   # atomic, deterministic, missing folders made
    plt.close(fig)


@click.command("plan")
@click.argument("model_name", metavar="MODEL")
@topo_option(required=True,
             help="Machine: a preset with a chip: block (dgx-h100-cluster:nodes=32, "
                  "galaxy-wh ...) or a topology file with one.")
@click.option("--chips", type=click.IntRange(min=1), default=None,
              help="Chips the job uses: a check that they are every chip of the machine "
                   "(size the machine with its spec, e.g. dgx-h100-cluster:nodes=32).")
@click.option("--batch", type=click.IntRange(min=1), required=True,
              help="Global batch in sequences per step.")
@click.option("--layout", "layout_text", default=None, metavar="tp=8,pp=4,dp=8",
              help="Simulate this layout only (keys tp cp ep dp pp vp mb zero recompute).")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              help="Layouts simulated (the best lower bounds).")
@algo_option(help="Algorithm of the all-reduce, all-gather and reduce-scatter collectives "
                   "(default: what the machine's library runs, else ring).")
@click.option("--efficiency", type=click.FloatRange(min=0.01, max=1.0), default=None,
              help="Fraction of the chip's dense peak compute sustains [default: 0.5].")
@click.option("--exact", is_flag=True,
              help="Simulate each step as one schedule (every collective of every block on "
                   "the network at once) instead of each collective once: slower.")
@executor_options(workers_default=1, workers_help="Local processes simulating layouts in "
                                                  "parallel.")
@figure_option("--plot", dest="plot_path",
               help="Draw the time split of the ranked layouts as stacked bars (.png/.svg/.pdf).")
@click.option("--explain", is_flag=True,
              help="Say why the winner wins against the runner-up.")
@format_option
@output_option
@overwrite_option
def command(model_name, topo_spec, chips, batch, layout_text, top, algorithm, efficiency,
            exact, workers, scheduler, plot_path, explain, fmt, output, overwrite):
    """Rank the parallel layouts of MODEL on a machine by simulated step time."""
    from ..planning import COMPUTE_EFFICIENCY, load_model, parse_train_layout, plan
    from ..run import sweep_executor
    from ..topology import parse_topology

    if output:
        check_writable(output, overwrite)
    if plot_path:
        from ..report import figure_format

        figure_format(plot_path)
    check_outputs([output, plot_path], overwrite=overwrite)
    model = load_model(model_name)
    topology = parse_topology(topo_spec)
    if chips is not None and chips != topology.num_endpoints:
        raise InputError(f"--chips {chips}: the planner uses every chip of the machine; "
                         f"{topology.name!r} has {topology.num_endpoints} (pick a preset "
                         f"size such as dgx-h100-cluster:nodes=N)")
    layout = parse_train_layout(layout_text, batch=batch, chips=topology.num_endpoints) \
        if layout_text else None
    with ProgressBar(1 if layout else top, "simulate") as bar, \
            sweep_executor(workers, scheduler) as executor:
        result = plan(model, topology, batch=batch, layout=layout, top=top,
                      algorithm=algorithm,
                      efficiency=efficiency if efficiency is not None else COMPUTE_EFFICIENCY,
                      progress=lambda done, _: bar.advance(),
                      executor=executor if (workers > 1 or scheduler) else None,
                      workers=None if scheduler else workers, exact=exact,
                      engine=engine_config())
    records = result.rows
    for row in records:             # -v: what the engine ran for each layout's step
        log_engine(row["layout"], row.get("engine"))
    if plot_path:
        _plot(plot_path, records, overwrite)
        wrote(plot_path)
    document = {"model": model.name, "topology": topology.name, "chips": topology.num_endpoints,
                "batch": batch, "chip": result.chip.name, "layouts_considered":
                result.considered, "layouts_fitting": result.fitting}
    title = (f"{model.name} on {topology.name} ({topology.num_endpoints} x {result.chip.name}),"
             f" batch {batch} x {model.seq_len} tokens: {result.fitting} of "
             f"{result.considered} layouts fit, {len(records)} simulated")
    emit(format_records(records, fmt, to_jsonable(document) if fmt == "json" else None,
                        columns=_columns(records), title=title), output, overwrite)
    if explain:
        click.echo(_explain(result, topology), err=fmt != "table")
