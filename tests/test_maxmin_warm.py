"""The warm-started max-min solver equals a cold solve after any change of the flow set."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from netsim.engine.maxmin import max_min_rates_csr, max_min_rates_warm, saturation_levels


def csr(paths):
    lengths = np.array([len(p) for p in paths], dtype=np.intp)
    links = np.array([l for p in paths for l in p], dtype=np.intp)
    return lengths, links


@st.composite
def changes(draw):
    num_links = draw(st.integers(1, 7))
    capacity = np.array(draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 5.0, 7.5, 10.0]),
                                      min_size=num_links, max_size=num_links)))
    path = st.lists(st.integers(0, num_links - 1), min_size=1, max_size=num_links, unique=True)
    old = draw(st.lists(path, min_size=1, max_size=12))
    stay = draw(st.lists(st.booleans(), min_size=len(old), max_size=len(old)))
    added = draw(st.lists(path, min_size=0, max_size=5))
    return capacity, old, stay, added


@settings(max_examples=400, deadline=None)
@given(changes())
def test_warm_start_matches_a_cold_solve(case):
    capacity, old, stay, added = case
    old_rate = max_min_rates_csr(*csr(old), capacity)
    level = saturation_levels(*csr(old), old_rate, capacity)
    lost = np.zeros(len(capacity), dtype=bool)
    for path, keep in zip(old, stay):
        if not keep:
            lost[path] = True
    paths = [p for p, keep in zip(old, stay) if keep] + added
    if not paths:
        return
    rate_before = np.array([r for r, keep in zip(old_rate, stay) if keep] + [0.0] * len(added))
    new = np.array([False] * (len(paths) - len(added)) + [True] * len(added))
    lengths, links = csr(paths)
    warm = max_min_rates_warm(lengths, links, capacity, rate_before, new, level, lost)
    cold = max_min_rates_csr(lengths, links, capacity)
    np.testing.assert_allclose(warm, cold, rtol=1e-9)


def test_a_finished_fast_flow_leaves_the_slow_ones_alone():
    # Link 0 (cap 1) carries flows a, b; link 1 (cap 10) carries b, c. a, b get 0.5, c 9.5.
    # When c finishes only links it touched may change: a and b keep their rates.
    capacity = np.array([1.0, 10.0])
    lengths, links = csr([[0], [0, 1], [1]])
    rate = max_min_rates_csr(lengths, links, capacity)
    np.testing.assert_allclose(rate, [0.5, 0.5, 9.5])
    level = saturation_levels(lengths, links, rate, capacity)
    np.testing.assert_allclose(level, [0.5, 9.5])
    lost = np.array([False, True])
    warm = max_min_rates_warm(*csr([[0], [0, 1]]), capacity, rate[:2],
                              np.array([False, False]), level, lost)
    np.testing.assert_allclose(warm, [0.5, 0.5])


@settings(max_examples=300, deadline=None)
@given(changes(), st.data())
def test_weighted_warm_start_matches_a_weighted_cold_solve(case, data):
    # A weight w on an incidence counts it as w flows of the same rate on that link (a
    # symmetry class): warm and cold must still agree.
    capacity, old, stay, added = case
    weight_of = {}

    def weights(paths):
        return np.array([weight_of.setdefault((i, l), data.draw(st.integers(1, 4)))
                         for i, p in enumerate(paths) for l in p], dtype=float)

    old_w = weights(old)
    old_rate = max_min_rates_csr(*csr(old), capacity, old_w)
    level = saturation_levels(*csr(old), old_rate, capacity, old_w)
    lost = np.zeros(len(capacity), dtype=bool)
    for path, keep in zip(old, stay):
        if not keep:
            lost[path] = True
    kept = [i for i, keep in enumerate(stay) if keep]
    paths = [old[i] for i in kept] + added
    if not paths:
        return
    w = np.concatenate([old_w[sum(len(p) for p in old[:i]):][:len(old[i])] for i in kept]
                       + [np.array([float(data.draw(st.integers(1, 4))) for _ in p])
                          for p in added] + [np.zeros(0)])
    rate_before = np.array([old_rate[i] for i in kept] + [0.0] * len(added))
    new = np.array([False] * len(kept) + [True] * len(added))
    lengths, links = csr(paths)
    warm = max_min_rates_warm(lengths, links, capacity, rate_before, new, level, lost, w)
    cold = max_min_rates_csr(lengths, links, capacity, w)
    np.testing.assert_allclose(warm, cold, rtol=1e-9)


def test_a_weight_counts_as_that_many_flows():
    # Link 0 (cap 6) carries a class of weight 2 and a flow of weight 1: 2 each.
    lengths, links = csr([[0], [0, 1]])
    rate = max_min_rates_csr(lengths, links, np.array([6.0, 10.0]), np.array([2.0, 1.0, 1.0]))
    np.testing.assert_allclose(rate, [2.0, 2.0])
