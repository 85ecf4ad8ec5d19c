"""tt-metal's direct reduce-scatter (a ring, up to 512 KiB per device): one worker core hands
off the n-1 messages one after another, so the per-message cost adds up along them."""

from __future__ import annotations

import pytest

from netsim.run import run_collective


@pytest.mark.parametrize("size", ["4KiB", "64KiB"])
def test_each_message_waits_for_the_hand_offs_before_it(size):
    # 8 chips on the T3000 ring: a rank's last (farthest) message leaves after 6 hand-offs and
    # pays its own: the collective takes 7 alpha more per unit of alpha (every link, and no
    # sender or read-back rate of the preset's library to hide any of it)
    from netsim.algorithms import AlgoOptions

    bare = AlgoOptions(extra={"num_links": None, "sender_rate": None,
                              "staging_read_rate": None})
    t = [run_collective("reducescatter", f"t3000,alpha={a}us", "tt_metal", size,
                        options=bare).time_s for a in (1, 3)]
    assert t[1] - t[0] == pytest.approx(7 * 2e-6, rel=1e-9)


def test_the_published_small_reduce_scatter_floor():
    # tt-metal SUMMARY_wormhole_b0_bfloat16_6144.md, 8-chip ring reduce_scatter, 16 KiB:
    # 19.61 us; the default command lands within 15% of it (47% short without the hand-offs)
    t = run_collective("reducescatter", "t3000", "default", "16KiB").time_s
    assert t == pytest.approx(19.61e-6, rel=0.15)


def test_staging_past_the_core_budget_is_read_back():
    # 512 KiB per device on the T3000's one link: 1 MiB of staging per worker core, past the
    # 640 KiB it reduces in place; the 7 staged slices (7 x 64 KiB) are read back at the
    # library's staging_read_rate (11 GB/s) after the last arrives
    from netsim.algorithms import AlgoOptions

    def run(extra):
        return run_collective("reducescatter", "t3000", "tt_metal", "512KiB",
                              options=AlgoOptions(extra={"num_links": 1, **extra})).time_s

    assert run({"staging_read_rate": "11GB/s"}) - run({"staging_read_rate": None}) == \
        pytest.approx(7 * 64 * 1024 / 11e9, rel=1e-9)
    # at 256 KiB (512 KiB per core) the staging fits: nothing to read back
    assert run_collective("reducescatter", "t3000", "default", "256KiB").time_s == \
        pytest.approx(run_collective("reducescatter", "t3000", "tt_metal", "256KiB",
                                     options=AlgoOptions(extra={"num_links": 1})).time_s,
                      rel=1e-12)


def test_two_links_keep_512_kib_in_place():
    # galaxy-bh rings have 2 links per neighbour pair: 512 KiB of staging per core fits
    from netsim.algorithms import AlgoOptions

    base = run_collective("reducescatter", "galaxy-bh", "tt_metal", "512KiB", axis=0).time_s
    slow = run_collective("reducescatter", "galaxy-bh", "tt_metal", "512KiB", axis=0,
                          options=AlgoOptions(extra={"staging_read_rate": "1GB/s"})).time_s
    assert slow == pytest.approx(base, rel=1e-12)


def test_the_published_512_kib_step():
    # FULL_wormhole_b0_bfloat16_6144.md, 8-chip ring: reduce_scatter 103.18 us, all_reduce
    # 151.76 us at 512 KiB (48.48 and 78.97 us at 256 KiB)
    assert run_collective("reducescatter", "t3000", "default", "512KiB").time_s == \
        pytest.approx(103.18e-6, rel=0.15)
    assert run_collective("allreduce", "t3000", "default", "512KiB").time_s == \
        pytest.approx(151.76e-6, rel=0.15)
