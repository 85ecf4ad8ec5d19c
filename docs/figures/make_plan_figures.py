"""Regenerate the heatmaps of docs/plan-study.md: ``python docs/figures/make_plan_figures.py``
(from the repo root; about a minute).

For each machine of the study, the winner and the runner-up of ``netsim plan`` under their
best placement: each link coloured by its utilisation while one collective of the step runs
(one occurrence, every group of its dimension at once, as the planner simulates it). A step
average would hide the short tensor-parallel collectives behind the data-parallel ones.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from netsim.planning import load_model, plan  # noqa: E402
from netsim.report.figure import save_figure  # noqa: E402
from netsim.report.heatmap import draw_heatmap  # noqa: E402
from netsim.topology import parse_topology  # noqa: E402

HERE = Path(__file__).parent

# (file stem, model, machine spec, global batch, ranks drawn (0: the winner), collectives)
CASES = [
    ("plan-galaxy-8b", "llama3-8b", "galaxy-wh", 32, (0, 1, 7),
     ("tp-allgather", "pp-sendrecv", "dp-reducescatter")),
    ("plan-h100-70b", "llama3-70b", "dgx-h100-cluster:nodes=4", 32, (0, 1),
     ("tp-allgather", "pp-sendrecv", "dp-reducescatter")),
    ("plan-nvl72-70b", "llama3-70b", "gb200-nvl72", 72, (0, 1),
     ("tp-allgather", "dp-reducescatter")),
    ("plan-quad-70b", "llama3-70b", "galaxy-wh-quad", 128, (0, 1),
     ("tp-allgather", "dp-allgather")),
]


def winner_and_runner_up(stem: str, model: str, spec: str, batch: int,
                         ranks: tuple[int, ...], phases: tuple[str, ...]) -> None:
    """A grid of one row per ranked layout drawn (the winner on top), one collective a
    column, from ``netsim plan``'s default search (the 10 best bounds simulated)."""
    topology = parse_topology(spec)
    result = plan(load_model(model), topology, batch=batch)
    fig, axes = plt.subplots(len(ranks), len(phases),
                             figsize=(6.5 * len(phases), 5.5 * len(ranks)), squeeze=False)
    for r, k in enumerate(ranks):
        row, detail = result.rows[k], result.details[k]
        util = detail["utilisation"]
        role = {0: "winner", 1: "runner-up"}.get(k, f"#{k + 1}")
        for c, name in enumerate(phases):
            values = util.get(name)
            ax = axes[r][c]
            if values is None:
                ax.set_axis_off()
                ax.text(0.5, 0.5, f"{role}: {row['layout']}\nhas no {name}",
                        ha="center", va="center", fontsize=11, transform=ax.transAxes)
                continue
            draw_heatmap(topology, values, ax=ax, label_top=2,
                         title=f"{role}: {row['layout']} ({row['placement']})\n"
                               f"{name}, {detail['times'][name] * 1e3:.3g} ms; "
                               f"step {row['step_s']:.3g} s")
    fig.suptitle(f"{model} on {spec}, batch {batch}: link utilisation per collective",
                 fontsize=14)
    fig.tight_layout()
    save_figure(fig, HERE / f"{stem}.png")
    plt.close(fig)


if __name__ == "__main__":
    import sys

    wanted = set(sys.argv[1:])
    for case in CASES:
        if not wanted or case[0] in wanted:
            winner_and_runner_up(*case)
