"""Exact max-min fair rates by parallel water-filling on a sparse flow-by-link incidence.

Progressive filling raises every unfrozen flow's rate together until some link saturates,
freezes the flows crossing it, and repeats. Done literally that takes one pass per distinct
rate level. We freeze many levels per pass instead: a link whose fair share (remaining
capacity / unfrozen flows) is no larger than the share of any link met by any of its flows
saturates at exactly that share in progressive filling, because shares elsewhere only rise
as smaller flows freeze. All such *locally minimal* links are frozen at once, which makes
the number of passes the depth of the bottleneck dependency chain, not the number of levels.

The result satisfies the textbook conditions (checked by property tests): no link above
capacity, and every flow crosses a saturated link on which no flow has a larger rate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:            # the solvers run on plain arrays: scipy (0.15 s) not loaded
    import scipy.sparse as sp

__all__ = ["max_min_rates", "max_min_rates_csr", "max_min_rates_warm", "saturation_levels",
           "incidence_levels"]


def max_min_rates(flow_links: sp.csr_matrix, capacity: np.ndarray) -> np.ndarray:
    """Max-min fair rate (bytes/s) of each flow.

    ``flow_links`` is the flows x links incidence (CSR; any stored entry means the flow
    crosses the link, at most once). ``capacity`` is bytes/s per link. A flow that crosses
    no link gets rate +inf.
    """
    lengths = np.diff(flow_links.indptr)
    return max_min_rates_csr(lengths, flow_links.indices.astype(np.intp), capacity)


def max_min_rates_csr(lengths: np.ndarray, links: np.ndarray, capacity: np.ndarray,
                      weights: np.ndarray | None = None) -> np.ndarray:
    """:func:`max_min_rates` on raw flow-major CSR arrays.

    Flow f crosses the ``lengths[f]`` links that follow those of flow f-1 in ``links``.
    Everything runs on flow-major arrays (gathers from the small per-link arrays stay in
    cache), compacted to the unfrozen flows after every pass, so later passes cost only
    what is left. ``weights`` (one per incidence, default 1) counts an incidence as that
    many flows of the same rate on the link: a symmetry class (engine.symmetry).
    """
    num_links = len(capacity)
    rate = np.full(len(lengths), np.inf)
    flows = np.flatnonzero(lengths > 0)          # ids of the unfrozen flows
    lengths = lengths[flows]
    remaining = capacity.astype(np.float64, copy=True)
    while flows.size:
        starts = np.zeros(flows.size, dtype=np.intp)
        np.cumsum(lengths[:-1], out=starts[1:])
        count = np.bincount(links, weights=weights, minlength=num_links)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.maximum(remaining, 0.0) / count      # inf (or nan) on unused links
        share_on = share[links]
        flow_min = np.minimum.reduceat(share_on, starts)
        flow_min_on = np.repeat(flow_min, lengths)
        smallest_seen = np.full(num_links, np.inf)
        np.minimum.at(smallest_seen, links, flow_min_on)
        ready = share <= smallest_seen          # locally minimal links (nan/unused: False)
        hit = ready[links] & (share_on <= flow_min_on)
        frozen = np.logical_or.reduceat(hit, starts)
        rate[flows[frozen]] = flow_min[frozen]
        frozen_on = np.repeat(frozen, lengths)
        used = flow_min_on * frozen_on if weights is None else flow_min_on * frozen_on * weights
        remaining -= np.bincount(links, weights=used, minlength=num_links)
        links = links[~frozen_on]
        if weights is not None:
            weights = weights[~frozen_on]
        flows, lengths = flows[~frozen], lengths[~frozen]
    return rate


# -- warm start: re-solve only the flows a change can reach ---------------------------------
#
# Progressive filling on the new problem (flows added, flows removed) repeats the old one
# exactly up to the first level tau at which a changed link behaves differently:
# * a link that lost flows and was saturated at level L in the old solution saturates no
#   earlier than L now, so nothing differs below L;
# * a link that gained flows saturates at the water level of its old flows (at their old
#   rates) plus the new ones, which is where it may first differ.
# Every other link sees the same flows frozen at the same rates below tau, by induction.
# So flows whose old rate is below tau keep it, and the rest are solved on the capacity they
# leave. tau is taken with a small margin, so rounding only makes the re-solved set larger.

_MARGIN = 1e-12


def saturation_levels(lengths: np.ndarray, links: np.ndarray, rate: np.ndarray,
                      capacity: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Per link: the level at which it saturated (its largest flow rate), +inf if it did not."""
    return incidence_levels(links, np.repeat(rate, lengths), capacity, weights)


def incidence_levels(links: np.ndarray, rate_on: np.ndarray, capacity: np.ndarray,
                     weights: np.ndarray | None = None) -> np.ndarray:
    """:func:`saturation_levels` from the incidences themselves: ``links[i]`` carries a
    flow of rate ``rate_on[i]`` (counted ``weights[i]`` times). Links without an incidence
    get +inf."""
    load = np.bincount(links, weights=rate_on if weights is None else rate_on * weights,
                       minlength=len(capacity))
    top = np.zeros(len(capacity))
    np.maximum.at(top, links, rate_on)
    return np.where(load >= capacity * (1 - 1e-9), top, np.inf)


def _gained_water_levels(lengths, links, rate, new, capacity, weights=None) -> float:
    """Smallest level at which a link with new flows saturates, old flows at their old rates.

    ``weights`` (per incidence) count an incidence as that many flows (symmetry classes).
    """
    num_links = len(capacity)
    new_on = np.repeat(new, lengths)
    w_all = np.ones(links.size) if weights is None else weights
    added = np.bincount(links[new_on], weights=w_all[new_on], minlength=num_links)
    touched = added > 0
    old_on = ~new_on & touched[links]
    link, r, w = links[old_on], np.repeat(rate, lengths)[old_on], w_all[old_on]
    order = np.lexsort((r, link))
    link, r, w = link[order], r[order], w[order]
    ends = np.flatnonzero(touched)
    count = np.bincount(link, minlength=num_links)
    start = np.zeros(num_links, dtype=np.intp)
    np.cumsum(count[:-1], out=start[1:])
    # Position p in its link's segment: the level if exactly the p smallest old flows are
    # below it: (c - their sum) / (flows still rising). Valid once it is <= the next rate.
    exclusive = np.cumsum(r * w) - r * w                # sum of all earlier entries
    before = exclusive - exclusive[start[link]]         # ... of earlier entries of this link
    w_exclusive = np.cumsum(w) - w
    w_before = w_exclusive - w_exclusive[start[link]]
    weight = np.bincount(link, weights=w, minlength=num_links)
    rising = weight[link] - w_before + added[link]
    level = (capacity[link] - before) / rising
    valid = level <= r
    first = np.full(num_links, np.inf)
    np.minimum.at(first, link[valid], level[valid])
    total = np.bincount(link, weights=r * w, minlength=num_links)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        last = (capacity - total) / added               # every old flow below the level
    return float(np.minimum(first[ends], last[ends]).min()) if ends.size else np.inf


def max_min_rates_warm(lengths: np.ndarray, links: np.ndarray, capacity: np.ndarray,
                       old_rate: np.ndarray, new: np.ndarray, old_level: np.ndarray,
                       lost: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Max-min rates after a change, re-solving only the flows the change can reach.

    ``old_rate`` are the previous rates of the flows (ignored where ``new``), ``old_level``
    the previous :func:`saturation_levels` and ``lost`` the links that lost flows since.
    ``weights`` as in :func:`max_min_rates_csr`. The result equals :func:`max_min_rates_csr`
    (see the comment above for why).
    """
    tau = float(old_level[lost].min()) if lost.any() else np.inf
    if new.any():
        tau = min(tau, _gained_water_levels(lengths, links, old_rate, new, capacity, weights))
    keep = ~new & (old_rate < tau * (1 - _MARGIN))
    if not keep.any():
        return max_min_rates_csr(lengths, links, capacity, weights)
    kept_on = np.repeat(keep, lengths)
    on = np.repeat(old_rate[keep], lengths[keep])
    used = np.bincount(links[kept_on], weights=on if weights is None else on * weights[kept_on],
                       minlength=len(capacity))
    rate = old_rate.copy()
    rate[~keep] = max_min_rates_csr(lengths[~keep], links[~kept_on],
                                    np.maximum(capacity - used, 0.0),
                                    None if weights is None else weights[~kept_on])
    return rate
