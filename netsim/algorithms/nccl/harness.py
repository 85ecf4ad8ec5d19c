"""The host side of an nccl-tests run: what bounds the time per iteration at small sizes.

nccl-tests (NVIDIA/nccl-tests ``src/common.cu``, ``BenchTime``, commit a0b82b22) times a
size by enqueuing ``iters`` collectives back to back from the host, with no wait between
them (``blocking_coll`` 0 by default), then synchronising once; the time it prints is the
host wall clock divided by ``iters``. In steady state an iteration therefore costs the
larger of the GPU time of one collective and the host time to enqueue one.

With ``-g N`` (every full published curve: one process, one thread driving N GPUs) one
thread enqueues each iteration for all N GPUs inside ``ncclGroupStart/End``, and NCCL's
``doLaunches`` (NVIDIA/nccl ``src/group.cc``, commit 5067397c) prepares and launches the
kernel of each communicator in turn (``cudaSetDevice``, ``ncclLaunchPrepare``,
``ncclLaunchKernel``, ``ncclLaunchFinish``): the host time grows with the GPUs per thread.

netsim models it as ``host_s = gpus_per_thread x LAUNCH_PER_GPU_S``, one constant for every
op, size and GPU count. ``LAUNCH_PER_GPU_S`` = 5.0 us is fitted once over all published
single-node H100 curves (``python benchmarks/fit_nccl_host.py``: least squares on the log
error of 86 points up to 16 MiB, 4.97 us); the same shape and a close value (4.24 us per
GPU) come out of an independent A100 sweep of ``-g 2 .. 8``
(NVIDIA/nccl-tests#123: 10.0, 13.8, 16.9, 20.8, 25.2, 29.5, 33.7 us, ring LL, one channel),
whose times are proportional to the GPU count while NCCL's device latency model grows
by 1.2 us per GPU. See docs/calibration.md ("The small-size floor").

>>> round(host_time(8) * 1e6, 2), host_time(0)
(40.0, 0.0)
"""

from __future__ import annotations

__all__ = ["LAUNCH_PER_GPU_S", "host_time"]

#: Host time to enqueue one collective on one GPU from a multi-GPU thread (s). Fitted
#: globally (one value for every curve and size) by benchmarks/fit_nccl_host.py: 4.97 us.
LAUNCH_PER_GPU_S = 5.0e-6


def host_time(gpus_per_thread: int, *, per_gpu_s: float = LAUNCH_PER_GPU_S) -> float:
    """Host time per iteration (s) of a thread that enqueues a collective on
    ``gpus_per_thread`` GPUs (0: no host bound, a pure device time)."""
    return max(0, int(gpus_per_thread)) * per_gpu_s
