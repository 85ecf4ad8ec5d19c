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

import numpy as np
import scipy.sparse as sp

__all__ = ["max_min_rates", "max_min_rates_csr"]


def max_min_rates(flow_links: sp.csr_matrix, capacity: np.ndarray) -> np.ndarray:
    """Max-min fair rate (bytes/s) of each flow.

    ``flow_links`` is the flows x links incidence (CSR; any stored entry means the flow
    crosses the link, at most once). ``capacity`` is bytes/s per link. A flow that crosses
    no link gets rate +inf.
    """
    lengths = np.diff(flow_links.indptr)
    return max_min_rates_csr(lengths, flow_links.indices.astype(np.intp), capacity)


def max_min_rates_csr(lengths: np.ndarray, links: np.ndarray, capacity: np.ndarray
                      ) -> np.ndarray:
    """:func:`max_min_rates` on raw flow-major CSR arrays.

    Flow f crosses the ``lengths[f]`` links that follow those of flow f-1 in ``links``.
    Everything runs on flow-major arrays (gathers from the small per-link arrays stay in
    cache), compacted to the unfrozen flows after every pass, so later passes cost only
    what is left.
    """
    num_links = len(capacity)
    rate = np.full(len(lengths), np.inf)
    flows = np.flatnonzero(lengths > 0)          # ids of the unfrozen flows
    lengths = lengths[flows]
    remaining = capacity.astype(np.float64, copy=True)
    while flows.size:
        starts = np.zeros(flows.size, dtype=np.intp)
        np.cumsum(lengths[:-1], out=starts[1:])
        count = np.bincount(links, minlength=num_links)
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
        remaining -= np.bincount(links, weights=flow_min_on * frozen_on, minlength=num_links)
        links = links[~frozen_on]
        flows, lengths = flows[~frozen], lengths[~frozen]
    return rate
