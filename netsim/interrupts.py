"""Ctrl-C (SIGINT) and SIGTERM in the command line: stop at a safe point, never inside
compiled code.

Python's own SIGINT handler raises :class:`KeyboardInterrupt` at the next bytecode the
main thread runs. When a signal comes while a numba kernel runs, that next bytecode can be
one that the compiled code itself calls back into (numba's ``_numba_unpickle`` rebuilding a
constant, its import and typing machinery): the exception then unwinds through compiled
frames that do not expect one, and the process dies of a segmentation fault (measured: 4 of
6 Ctrl-C's 3 to 7 s into ``netsim coll allreduce --topo gb200-nvl72 --algo auto --size
4GB``, rc -11, all inside ``symmetry._find_compiled``). And SIGTERM's default action ends
the process at once, leaving temporary files and pool workers behind.

:func:`handling` installs one handler for both signals. When the main thread is running
Python code of its own, the handler raises :class:`Interrupted` there, as Python would. When
any frame of the stack belongs to numba (or llvmlite), it raises nothing: it notes the
signal and sends it again a few milliseconds later, until it lands outside; a kernel that
runs long without calling back is stopped when it returns (its caller's next bytecode).

>>> import os, signal
>>> with handling():
...     try:
...         os.kill(os.getpid(), signal.SIGTERM)
...         for _ in range(10**6):      # the handler runs between two bytecodes
...             pass
...     except Interrupted as stop:
...         print(stop.exit_code)
143
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["Interrupted", "handling", "stopping", "SIGNALS", "RETRY_S"]

#: The signals handled, and the exit code of each (128 + its number, as shells report).
SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Seconds between two deliveries of a signal that landed inside compiled code.
RETRY_S = 0.02
#: Modules whose frames on the stack mean "compiled code may be under us".
_NATIVE = ("numba", "llvmlite")


class Interrupted(BaseException):
    """A run stopped by SIGINT or SIGTERM. A :class:`BaseException`, like
    :class:`KeyboardInterrupt`, so that ``except Exception`` clauses let it through; not a
    KeyboardInterrupt itself, which click turns into an ``Abort`` with a blank line."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = int(signum)

    @property
    def exit_code(self) -> int:
        """130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signum

    def __str__(self) -> str:
        return "interrupted" if self.signum == signal.SIGINT else \
            f"terminated ({signal.Signals(self.signum).name})"


def _in_native(frame) -> bool:
    """Whether a frame of the stack from ``frame`` down is numba's or llvmlite's."""
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if name.split(".", 1)[0] in _NATIVE:
            return True
        frame = frame.f_back
    return False


class _Handler:
    def __init__(self) -> None:
        self.raised = False
        self.pending: int | None = None      # a signal that landed in compiled code
        self.timers: list[threading.Timer] = []
        self.closing = False

    def __call__(self, signum: int, frame) -> None:
        if self.raised:                # already on the way out: one line, one exit
            return
        if self.closing:               # the block is ending: raised after it, see below
            self.pending = signum
            return
        if _in_native(frame):
            self.pending = signum
            # Each deferral schedules its own delivery: the one that brought us here has
            # fired already (its thread may not have ended yet).
            timer = threading.Timer(RETRY_S, os.kill, (os.getpid(), signum))
            timer.daemon = True
            self.timers = [t for t in self.timers if t.is_alive()] + [timer]
            timer.start()
            return
        self.raise_(signum)

    def raise_(self, signum: int) -> None:
        self.raised = True
        self.pending = None
        raise Interrupted(signum)

    def cancel(self) -> None:
        self.closing = True
        for timer in self.timers:
            timer.cancel()
            if timer.is_alive() and timer is not threading.current_thread():
                timer.join()           # a delivery under way lands before we restore


@contextmanager
def handling() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted` at a safe point (see
    the module's docstring); a signal still waiting for one when the block ends is raised
    there. A signal the process was started to ignore (``nohup``, a background job of a
    non-interactive shell) stays ignored. Outside the main thread, nothing is installed.
    The previous handlers are put back on leaving."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = _Handler()
    previous = {}
    for signum in SIGNALS:
        old = signal.getsignal(signum)
        if old is signal.SIG_IGN:
            continue
        previous[signum] = old
        signal.signal(signum, handler)
    try:
        yield
    finally:
        handler.cancel()
        for signum, old in previous.items():
            signal.signal(signum, old if old is not None else signal.SIG_DFL)
    if handler.pending is not None:
        handler.raise_(handler.pending)


def stopping() -> None:
    """From now on, further SIGINTs and SIGTERMs are ignored: the process is on its way out
    (removing temporary files, ending workers) and a second Ctrl-C must not cut that short
    with a traceback."""
    if threading.current_thread() is threading.main_thread():
        for signum in SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                signal.signal(signum, signal.SIG_IGN)

