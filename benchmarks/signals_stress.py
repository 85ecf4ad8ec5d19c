"""Ctrl-C and SIGTERM at random moments of long commands: every run must end with rc 130
(143), the one line ``netsim: interrupted`` on stderr and no file left behind.

The heavier companion of ``tests/test_signals.py``: three long commands, signalled anywhere
in their first seconds, where the symmetry search and the compiled event loops run (an
exception unwinding through compiled frames kills the process with rc -11, which
``netsim.interrupts`` prevents by stopping at a safe point; the compiled loop pauses every
0.1 s and the symmetry search returns to Python between kernels, so that point comes
soon). Prints one line per run, with the seconds from the signal to the end, and a
summary; exits 1 if any run went wrong.

Run: ``python benchmarks/signals_stress.py [--runs 20] [--seed 34] [--latest 6]``.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_signals import _signalled  # noqa: E402  (one way to run and signal a command)

COMMANDS = [
    ["coll", "allreduce", "--topo", "fattree:k=16", "--algo", "ring", "--size", "256MiB",
     "-o", "out.json"],
    ["coll", "allreduce", "--topo", "gb200-nvl72", "--algo", "auto", "--size", "4GB"],
    # 1,024 GPUs: seconds of compiled symmetry search, then a compiled event loop of ~10 s
    # per NCCL candidate; each once ran deaf to signals until it returned (up to 6 s here,
    # 17+ min at nodes=512)
    ["coll", "allreduce", "--topo", "dgx-h100-cluster:nodes=128", "--size", "1GiB"],
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--latest", type=float, default=6.0,
                        help="signal within this many seconds of the handlers being in")
    parser.add_argument("--sigterm-every", type=int, default=5,
                        help="every Nth run gets SIGTERM instead of SIGINT")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    bad = 0
    slowest = 0.0
    for run in range(args.runs):
        command = COMMANDS[run % len(COMMANDS)]
        signum = signal.SIGTERM if (run + 1) % args.sigterm_every == 0 else signal.SIGINT
        delay = rng.uniform(0.0, args.latest)
        expected = (128 + signum, "netsim: interrupted\n" if signum == signal.SIGINT
                    else "netsim: terminated (SIGTERM)\n")
        with tempfile.TemporaryDirectory() as folder:
            start = time.monotonic()
            rc, err, _ = _signalled(command, Path(folder), delay, signum)
            took = time.monotonic() - start - delay
            left = sorted(p.name for p in Path(folder).iterdir())
        ok = (rc, err) == expected and not left
        # ended before the signal came (an idle machine runs the gb200 case in ~7 s)
        late = rc == 0 and all(line.startswith("wrote ") for line in err.splitlines())
        bad += not (ok or late)
        slowest = max(slowest, took) if ok else slowest
        label = "ok " if ok else "end" if late else "BAD"
        print(f"{label} {signal.Signals(signum).name:7} at +{delay:5.2f} s "
              f"-> rc {rc:4} in {took:5.2f} s: {' '.join(command[1:4])}"
              + ("" if ok or late else f"  files {left} stderr {err[-400:]!r}"), flush=True)
    print(f"{args.runs - bad}/{args.runs} runs ended cleanly (\"end\": the command had "
          f"finished before the signal, rc 0); the slowest stop took {slowest:.2f} s "
          f"from the signal")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
