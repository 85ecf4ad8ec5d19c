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

# (file stem, model, machine spec, global batch, collectives drawn)
CASES = [
    ("plan-galaxy-8b", "llama3-8b", "galaxy-wh", 32, ("tp-allgather", "dp-reducescatter")),
    ("plan-h100-70b", "llama3-70b", "dgx-h100-cluster:nodes=4", 32,
     ("tp-allgather", "dp-reducescatter")),
    ("plan-nvl72-70b", "llama3-70b", "gb200-nvl72", 72, ("tp-allgather", "dp-reducescatter")),
]


def winner_and_runner_up(stem: str, model: str, spec: str, batch: int,
                         phases: tuple[str, ...]) -> None:
    """A 2 x len(phases) grid: winner on top, runner-up below, one collective a column."""
    topology = parse_topology(spec)
    result = plan(load_model(model), topology, batch=batch, top=3)
    fig, axes = plt.subplots(2, len(phases), figsize=(7.5 * len(phases), 12),
                             squeeze=False)
    for r, (row, detail) in enumerate(zip(result.rows[:2], result.details[:2])):
        smodel = detail["model"]
        best = min(detail["scores"], key=lambda s: s.step_s)
        util = smodel.phase_utilisation(best)
        role = "winner" if r == 0 else "runner-up"
        for c, name in enumerate(phases):
            values = util.get(name)
            ax = axes[r][c]
            if values is None:
                ax.set_axis_off()
                ax.set_title(f"{role} {row['layout']}: no {name}")
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
