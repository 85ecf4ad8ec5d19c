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

__all__ = ["max_min_rates"]


def max_min_rates(flow_links: sp.csr_matrix, capacity: np.ndarray) -> np.ndarray:
    """Max-min fair rate (bytes/s) of each flow.

    ``flow_links`` is the flows x links incidence (CSR; any stored entry means the flow
    crosses the link, at most once). ``capacity`` is bytes/s per link. A flow that crosses
    no link gets rate +inf.

    Everything runs on flow-major arrays (gathers from the small per-link arrays stay in
    cache), and the arrays are compacted to the unfrozen flows after every pass, so later
    passes cost only what is left.
    """
    num_links = flow_links.shape[1]
    lengths = np.diff(flow_links.indptr)
    flows = np.flatnonzero(lengths > 0)          # global ids of the unfrozen flows
    links = flow_links.indices[_rows_mask(lengths, lengths > 0)].astype(np.intp)
    lengths = lengths[flows]
    rate = np.full(flow_links.shape[0], np.inf)
    remaining = capacity.astype(np.float64, copy=True)
    while flows.size:
        starts = np.concatenate(([0], np.cumsum(lengths[:-1])))
        row = np.repeat(np.arange(flows.size), lengths)
        count = np.bincount(links, minlength=num_links)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(count > 0, np.maximum(remaining, 0.0) / count, np.inf)
        share_on = share[links]
        flow_min = np.minimum.reduceat(share_on, starts)
        smallest_seen = np.full(num_links, np.inf)
        np.minimum.at(smallest_seen, links, flow_min[row])
        ready = share <= smallest_seen          # locally minimal links (count > 0 implied)
        hit = ready[links] & (share_on <= flow_min[row])
        frozen = np.bincount(row[hit], minlength=flows.size) > 0
        rate[flows[frozen]] = flow_min[frozen]
        frozen_on = frozen[row]
        remaining -= np.bincount(links[frozen_on], weights=flow_min[row[frozen_on]],
                                 minlength=num_links)
        links = links[~frozen_on]
        flows, lengths = flows[~frozen], lengths[~frozen]
    return rate


def _rows_mask(lengths: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Mask over CSR entries that keeps the rows where ``keep`` is true."""
    return np.repeat(keep, lengths)
