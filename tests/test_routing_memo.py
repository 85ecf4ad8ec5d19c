"""routing.route keeps its last big results per router and topology (netsim.kept): a size sweep routes
the same sends at every size. The memo must give what routing again gives, and only then."""

from __future__ import annotations

import numpy as np

from netsim.routing import MEMO_FROM, UpDownRouter, route
from netsim.topology import parse_topology

TOPO = parse_topology("dgx-h100-cluster")


def _requests(seed: int = 0):
    rng = np.random.default_rng(seed)
    ends = np.asarray(TOPO.endpoints)
    src, dst = rng.choice(ends, 2 * MEMO_FROM), rng.choice(ends, 2 * MEMO_FROM)
    keep = src != dst
    return src[keep], dst[keep]


def _same(a, b) -> bool:
    fields = ("src", "dst", "sub_ptr", "sub_req", "sub_frac", "path_ptr", "path_links",
              "sub_latency")
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in fields)


def test_the_same_requests_are_recalled_and_equal_a_fresh_routing():
    router = UpDownRouter(ecmp="hash")
    src, dst = _requests()
    first = route(TOPO, src, dst, router=router)
    assert route(TOPO, src.copy(), dst.copy(), router=router) is first
    fresh = route(TOPO, src, dst, router=UpDownRouter(ecmp="hash"))
    assert fresh is not first and _same(first, fresh)     # another router: routed anew


def test_the_last_four_calls_are_kept():
    # netsim.kept holds the last four answers: a fifth request set drops the oldest
    router = UpDownRouter(ecmp="hash")
    calls = [_requests(seed) for seed in range(5)]
    firsts = [route(TOPO, s, d, router=router) for s, d in calls]
    assert route(TOPO, *calls[4], router=router) is firsts[4]
    assert route(TOPO, *calls[1], router=router) is firsts[1]
    assert route(TOPO, *calls[0], router=router) is not firsts[0]


def test_other_requests_or_keys_are_routed_again():
    router = UpDownRouter(ecmp="hash")
    src, dst = _requests()
    keys = np.arange(src.size, dtype=np.int64)
    first = route(TOPO, src, dst, keys=keys, router=router)
    keys[:] = keys[::-1].copy()           # the caller's array changed in place: not a hit
    again = route(TOPO, src, dst, keys=keys, router=router)
    assert again is not first
    assert _same(again, route(TOPO, src, dst, keys=keys, router=UpDownRouter(ecmp="hash")))
    other = route(TOPO, *_requests(1), router=router)
    assert other is not again and other.src.size != 0


def test_small_calls_and_other_routers_are_not_kept():
    router = UpDownRouter(ecmp="hash")
    src, dst = _requests()
    few = route(TOPO, src[:10], dst[:10], router=router)
    assert route(TOPO, src[:10], dst[:10], router=router) is not few

    class Counting:
        calls = 0

        def link_paths(self, topo, s, d, k):
            Counting.calls += 1
            return router.link_paths(topo, s, d, k)

    counting = Counting()
    a = route(TOPO, src, dst, router=counting)
    b = route(TOPO, src, dst, router=counting)
    assert Counting.calls == 2 and a is not b and _same(a, b)
