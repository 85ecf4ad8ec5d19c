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
any frame of the stack belongs to numba (or llvmlite, or multiprocessing starting a worker),
it raises nothing: it notes the signal and sends it again a few milliseconds later, until it
lands outside; a kernel that runs long without calling back is stopped when it returns (its
caller's next bytecode).

An exception raised where Python cannot pass it on is lost: a signal handler runs inside
whatever Python code is running, and that can be a weak-reference callback or a finaliser
(importlib's module-lock callback, during an import: the command then ran to its end with rc
0 in 3 of 12 Ctrl-C's 0.3 to 0.5 s into ``coll ... --topo dgx-h100-cluster``). So the
signal is sent again every :data:`WATCH_S` until the :class:`Interrupted` has left the
block (the command's own cleanup, running in ``except`` and ``finally`` clauses with it,
is not interrupted again), and such a lost one is not reported as "Exception ignored".

>>> import os, signal
>>> try:
...     with handling():
...         os.kill(os.getpid(), signal.SIGTERM)
...         for _ in range(10**6):      # the handler runs between two bytecodes
...             pass
... except Interrupted as stop:
...     print(stop.exit_code)
143
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["Interrupted", "handling", "checkpoint", "SIGNALS", "RETRY_S", "WATCH_S"]

#: The signals handled, and the exit code of each (128 + its number, as shells report).
SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Seconds between two deliveries of a signal that landed in compiled code.
RETRY_S = 0.02
#: Seconds after which a signal is sent again if its Interrupted has not left the block.
WATCH_S = 0.25
#: Modules (and packages) whose frames on the stack mean "not here": compiled code may be
#: under us (numba, llvmlite), or a pool is starting a worker (multiprocessing, and the
#: pool's submit between starting a worker and recording its pid): stopped half-way, the
#: new worker outlives us and dies with a traceback of its own (seen in about 1 of 30
#: Ctrl-C's of a sweep with 2 workers).
_UNSAFE = ("numba", "llvmlite", "multiprocessing", "concurrent.futures.process")


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


def _unsafe(frame) -> bool:
    """Whether a frame of the stack from ``frame`` down belongs to :data:`_UNSAFE`."""
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if any(name == unsafe or name.startswith(unsafe + ".") for unsafe in _UNSAFE):
            return True
        frame = frame.f_back
    return False


def _wrapped(err: BaseException) -> Interrupted | None:
    """Our Interrupted in the chain of ``err`` (its causes and contexts), or None: Python
    wraps an exception raised inside some of its own machinery (``__set_name__`` while a
    class body is made, during an import: a RuntimeError whose cause is the Interrupted;
    measured, a Ctrl-C 0.24 s into ``coll ... --topo dgx-h100-cluster``, in pydantic's
    import), and an error raised while one is being handled has it as its context."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, Interrupted):
            return err
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


def _unwinding() -> bool:
    """Whether an Interrupted is being handled (an ``except`` or ``finally`` clause runs
    with it): the command is cleaning up on its way out."""
    return isinstance(sys.exc_info()[1], Interrupted)


class _Handler:
    def __init__(self) -> None:
        self.signum: int | None = None     # the signal acted on (the first one)
        self.out = False                   # its Interrupted has left the block
        self.closing = False               # the block has ended: no raising any more
        self.timers: list[threading.Timer] = []
        self.lock = threading.RLock()       # the handler may run inside close()

    def __call__(self, signum: int, frame) -> None:
        if self.out:
            return
        if self.signum is None:
            self.signum = signum
        if self.closing:                   # raised once the handlers are put back
            return
        if _unwinding():
            self.again(WATCH_S)
        elif _unsafe(frame):
            self.again(RETRY_S)
        else:
            self.again(WATCH_S)            # in case it is lost where it lands
            raise Interrupted(self.signum)

    def again(self, delay: float) -> None:
        """Send our signal again in ``delay`` s."""
        timer = threading.Timer(delay, os.kill, (os.getpid(), self.signum))
        timer.daemon = True
        with self.lock:
            if self.closing:
                return
            self.timers = [t for t in self.timers if t.is_alive()] + [timer]
            timer.start()

    def close(self) -> None:
        """No more deliveries: cancel the timers, wait for one under way."""
        with self.lock:
            self.closing = True
            timers = list(self.timers)
        for timer in timers:
            timer.cancel()
            if timer.is_alive():
                timer.join()


#: The handler of the innermost :func:`handling` block, while one is open.
_current: _Handler | None = None


def checkpoint() -> None:
    """A safe point in a long computation that calls compiled code again and again: raise
    :class:`Interrupted` here if a signal came and is still waiting for a safe point.

    Compiled code can call back into Python on its way out (numba rebuilding a constant),
    and that is where the handler runs: it sees numba on the stack, does not raise, and
    sends the signal again in :data:`RETRY_S`, which lands in the next compiled call the
    same way. A loop that pauses its compiled kernel (engine.executor) calls this between
    two calls, where stopping is safe. Outside a :func:`handling` block: nothing."""
    handler = _current
    if handler is not None and handler.signum is not None and not handler.closing \
            and not _unwinding():
        raise Interrupted(handler.signum)


def _quiet_unraisable(previous):
    """An unraisable-exception hook that drops our Interrupted (sent again, see above)."""

    def hook(unraisable) -> None:
        if not isinstance(unraisable.exc_value, Interrupted):
            previous(unraisable)

    return hook


@contextmanager
def handling(*, then_ignore: bool = False) -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted` at a safe point (see
    the module's docstring); a signal still waiting for one when the block ends is raised
    there. A signal the process was started to ignore (``nohup``, a background job of a
    non-interactive shell) stays ignored. Outside the main thread, nothing is installed.

    On leaving, the previous handlers are put back, or with ``then_ignore`` (a process
    about to exit) the signals are ignored from then on: the work is done or being given
    up, and Python's own handlers, back for the interpreter's last moments, would die of
    a late one (rc -2, 4 of 16 SIGINTs sent as a 0.8 s command ended)."""
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
    hook, sys.unraisablehook = sys.unraisablehook, _quiet_unraisable(sys.unraisablehook)
    global _current
    outer, _current = _current, handler
    try:
        yield
    except Interrupted:
        handler.out = True
        raise
    except BaseException as err:
        stop = _wrapped(err)
        if stop is None:
            raise
        handler.out = True                 # Python wrapped it: it is still the interrupt
        raise Interrupted(stop.signum) from err
    finally:
        _current = outer
        handler.close()
        for signum, old in previous.items():
            signal.signal(signum, signal.SIG_IGN if then_ignore else
                          old if old is not None else signal.SIG_DFL)
        sys.unraisablehook = hook
    if handler.signum is not None:         # came at the very end, or was lost: still asked
        raise Interrupted(handler.signum)

