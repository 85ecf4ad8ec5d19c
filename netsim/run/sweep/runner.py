"""Running a sweep's points on any :class:`concurrent.futures.Executor`, resumably.

Each point's outcome (its records, or its one-line error) is written to
``OUT/points/<key>.json`` as soon as it is known, under a key made of the netsim version,
the scenario and the point (:func:`~.points.point_key`). A rerun with the same ``OUT``
loads what is there and computes only the rest, so a sweep stopped by a crash or Ctrl-C
loses at most the points that were running.

Executors: :class:`SerialExecutor` (in this process), a process pool (``workers=N``), or a
Dask cluster through its client's ``get_executor()`` (``scheduler='tcp://HOST:PORT'``).
Outcomes are read back from their JSON text whichever ran them, so the table is the same,
byte for byte, whatever the executor and however often the sweep was resumed.
"""

from __future__ import annotations

import json
import logging
import os
import time
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from ...errors import InputError, NetsimError
from ...outputs import to_jsonable, write_atomic
from ..._inputs.extras import require
from ..._inputs.schema import load_yaml, validate
from ..._inputs.yamlio import read_text
from .points import (SweepSpec, apply_point, check_paths, expand, file_digests, point_key,
                     point_seed)

_log = logging.getLogger(__name__)

__all__ = ["Sweep", "SweepResult", "load_sweep", "sweep_from_dict", "run_sweep_points",
           "run_point", "SerialExecutor", "sweep_executor"]


@dataclass
class Sweep:
    """A scenario with a ``sweep:`` mapping: the scenario without it (``base``) and the
    points, each a ``{field path: value}`` mapping."""

    name: str
    description: str
    path: Path
    base: dict[str, Any]
    spec: SweepSpec
    points: list[dict[str, Any]]

    def document(self, index: int) -> dict[str, Any]:
        """The scenario document of point ``index``, its seed set (see ``point_seed``)."""
        point = self.points[index]
        doc = apply_point(self.base, point)
        doc["seed"] = point_seed(int(self.base.get("seed", 0) or 0), point)
        return doc

    def key(self, index: int) -> str:
        """The point's key: version, scenario, point and the content of every file it
        reads (:func:`~.points.file_digests`)."""
        from ... import __version__

        if not hasattr(self, "_reads_cache"):
            self._reads_cache: dict = {}     # per sweep: each file read once
        reads = file_digests(self.document(index), self.path.parent, cache=self._reads_cache)
        return point_key(__version__, self.base, self.points[index], reads)


def sweep_from_dict(doc: Any, path: Path, root=None) -> Sweep:
    """Validate a parsed scenario with a ``sweep:`` mapping (the scenario without it must
    be a valid scenario; every swept path must name a field)."""
    from ..scenarios.jobs import JOB_KINDS
    from ..scenarios.scenario import _ScenarioModel, scenario_from_dict

    if not isinstance(doc, dict) or doc.get("sweep") is None:
        raise InputError(f"{path}: no 'sweep:' mapping: nothing to sweep (run it with "
                         f"'netsim run')")
    spec = validate(SweepSpec, doc["sweep"], path, prefix="sweep", root=root)
    base = {k: v for k, v in doc.items() if k != "sweep"}
    scenario = scenario_from_dict(base, path, root)

    def job_fields(kind):
        return list(JOB_KINDS[kind][0].model_fields) if kind in JOB_KINDS else None

    check_paths(base, spec, list(_ScenarioModel.model_fields), job_fields)
    try:
        points = expand(spec)
    except InputError as err:
        raise InputError(f"{path}: {err}") from None
    return Sweep(scenario.name, scenario.description, path, base, spec, points)


def load_sweep(path: str | Path) -> Sweep:
    """Read a scenario file with a ``sweep:`` mapping."""
    path = Path(path)
    doc, root = load_yaml(read_text(path, "scenario"), str(path))
    try:
        return sweep_from_dict(doc, path, root)
    except InputError as err:
        if str(err).startswith("sweep:"):
            raise InputError(f"{path}: {err}") from None
        raise


def run_point(doc: dict[str, Any], path: str, engine=None) -> dict[str, Any]:
    """Run one point's scenario document: ``{"records": [...]}`` or ``{"error": "..."}``;
    ``engine`` is the engine's :class:`~netsim.engine.config.EngineConfig` (None: its
    defaults), passed to the worker with the point: a worker process has none of the
    caller's state.

    Runs in a worker (a process, a Dask worker); every failure becomes a one-line error so
    that one bad point never stops the others.
    """
    from ...budget import max_memory
    from ..plugins import load_plugins
    from ..scenarios.scenario import run_scenario, scenario_from_dict

    start = time.perf_counter()
    load_plugins()                  # a worker process sees the plugins' job kinds too
    try:
        # the caller's budget for every check of the point (topologies and files too)
        with max_memory(getattr(engine, "memory_budget", None)):
            outcome = run_scenario(scenario_from_dict(doc, Path(path)), engine=engine)
        done = {"records": to_jsonable(outcome.records)}
    except NetsimError as err:
        done = {"error": " ".join(str(err).split())}
    except Exception as err:      # noqa: BLE001 (a bug in one point must not stop the rest)
        done = {"error": " ".join(f"{type(err).__name__}: {err}".split())}
    done["wall_s"] = time.perf_counter() - start
    return done


class SerialExecutor(Executor):
    """Runs each call in this process when it is submitted (no pool, no pickling)."""

    _max_workers = 1

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as err:       # noqa: BLE001 (delivered through the future)
            if not isinstance(err, Exception):   # Ctrl-C, SIGTERM, exit: stop the sweep
                raise
            future.set_exception(err)
        return future


@contextmanager
def sweep_executor(workers: int | None = None, scheduler: str | None = None
                   ) -> Iterator[Executor]:
    """The executor of ``netsim sweep``: a Dask cluster's (``scheduler``), else ``workers``
    local processes (default: the CPUs this process may use), or this process for 1."""
    if scheduler is not None:
        distributed = require("distributed", "sweep", "--scheduler (a Dask cluster)")
        try:
            client = distributed.Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as err:
            raise InputError(f"--scheduler {scheduler!r}: cannot connect "
                             f"({' '.join(str(err).split()) or type(err).__name__})") from None
        try:
            yield client.get_executor()
        finally:
            client.close()
        return
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
    if workers <= 1:
        yield SerialExecutor()
        return
    pool = _Pool(workers)
    try:
        yield pool
    except BaseException:
        # Ctrl-C, SIGTERM, an error: the points under way are not waited for (shutdown
        # alone would join them at exit); their outcomes were never stored, so a rerun
        # computes them.
        pool.end()
        raise
    pool.shutdown()


class _Pool(Executor):
    """Local worker processes that survive the death of one: a ProcessPoolExecutor is
    broken for good when a worker dies (``kill -9``, the kernel's OOM killer), so the next
    submit after that starts a new one. Workers ignore SIGINT and end when the main
    process is gone, even killed with SIGKILL (no orphans)."""

    def __init__(self, workers: int) -> None:
        self._max_workers = workers
        self._pool = None

    def _live(self):
        from concurrent.futures import ProcessPoolExecutor

        if self._pool is None or getattr(self._pool, "_broken", False):
            if self._pool is not None:
                _end_workers(self._pool)
            import multiprocessing

            # forkserver: a fork of a process that runs threads (a test runner, a
            # notebook's kernel) may deadlock; the server is forked once, before any of
            # ours start.
            self._pool = ProcessPoolExecutor(
                max_workers=self._max_workers, initializer=_worker_init,
                initargs=(os.getpid(),), mp_context=multiprocessing.get_context("forkserver"))
        return self._pool

    def submit(self, fn, /, *args, **kwargs) -> Future:
        from concurrent.futures.process import BrokenProcessPool

        try:
            return self._live().submit(fn, *args, **kwargs)
        except BrokenProcessPool:          # broke since _live looked: a new one
            return self._live().submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)

    def end(self) -> None:
        if self._pool is not None:
            _end_workers(self._pool)


#: How often a worker checks that the main process is still there, s.
ORPHAN_CHECK_S = 0.5


def _worker_init(main_pid: int) -> None:
    """A pool worker ignores SIGINT: Ctrl-C in a terminal reaches the whole process group,
    and the main process, not each worker with its own traceback, decides what happens.
    It ends itself when the main process is gone (its parent is the fork server, which
    outlives it only briefly, so the parent-death signal cannot serve): when that pid is
    no more or has exited (a killed main process not yet reaped still has a pid, and its
    fork server stays until it is reaped), or when the fork server is no longer its
    parent."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(ORPHAN_CHECK_S)
            if _process_gone(main_pid) or os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="netsim-orphan-check", daemon=True).start()


def _process_gone(pid: int) -> bool:
    """Whether process ``pid`` has ended: no such pid (or one reused by another user), or,
    where /proc tells, a process that has exited and waits to be reaped (its fork server
    keeps running until then)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return True
    return False


def _end_workers(pool) -> None:
    """Cancel what waits and terminate the workers of a ProcessPoolExecutor now."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)


@dataclass
class SweepResult:
    """Every point's outcome (same order as ``sweep.points``), and how many were computed
    by this run and read back from an earlier one."""

    sweep: Sweep
    outcomes: list[dict[str, Any]]
    computed: int
    reused: int

    @property
    def failed(self) -> int:
        return sum(1 for o in self.outcomes if o.get("error") is not None)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """One row per record of every point: see :func:`~.table.sweep_rows`."""
        from .table import sweep_rows

        return sweep_rows(self.sweep.points, self.outcomes)

    def to_pandas(self):
        """The table as a pandas DataFrame (needs ``netsim[parquet]``)."""
        from .table import rows_to_pandas

        return rows_to_pandas(self.rows)


#: A point whose worker process dies (``kill -9``, out of memory) is run again this many
#: times, then recorded as failed. Every point under way in a pool when one of its workers
#: dies fails with it (the pool cannot tell whose worker it was), so each gets its retry.
DEATH_RETRIES = 1


def _worker_died(future: Future) -> bool:
    from concurrent.futures.process import BrokenProcessPool

    return not future.cancelled() and isinstance(future.exception(), BrokenProcessPool)


def _read_outcome(file: Path, key: str) -> dict[str, Any] | None:
    try:
        stored = json.loads(file.read_text())
    except (OSError, ValueError):
        return None                  # missing, or cut short by a crash: computed again
    return stored if isinstance(stored, dict) and stored.get("key") == key else None


def run_sweep_points(sweep: Sweep, out: str | Path, executor: Executor | None = None, *,
                     progress: Callable[[int, int, int], None] | None = None,
                     retry_failed: bool = False, in_flight: int | None = None,
                     engine=None) -> SweepResult:
    """Run the points of ``sweep`` that ``out`` does not hold yet on ``executor`` (default:
    this process) and return every point's outcome.

    ``progress(done, failed, total)`` is called as points finish (reused ones count as
    done). At most ``in_flight`` points are submitted at a time (default: 4 per worker), so
    a huge sweep holds few futures and Ctrl-C wastes little. ``engine`` (the engine's
    :class:`~netsim.engine.config.EngineConfig`, None: its defaults) goes to every point;
    it changes no result, so a point's key does not depend on it.

    >>> import tempfile
    >>> doc = {"name": "s", "topology": "ring:4,bw=1GB/s", "sweep": {"grid": {
    ...        "jobs[0].size": ["1MB", "2MB"]}}, "jobs": [{"kind": "traffic", "size": "1MB"}]}
    >>> sweep = sweep_from_dict(doc, Path("s.yaml"))
    >>> with tempfile.TemporaryDirectory() as out:
    ...     first = run_sweep_points(sweep, out)
    ...     again = run_sweep_points(sweep, out)
    >>> [row["time_s"] for row in first.rows]          # all-to-all on a ring of 4, 1 GB/s
    [0.002, 0.004]
    >>> again.computed, again.reused, again.rows == first.rows
    (0, 2, True)
    """
    from ... import __version__

    folder = Path(out) / "points"
    total = len(sweep.points)
    keys = [sweep.key(i) for i in range(total)]
    outcomes: list[dict[str, Any] | None] = [_read_outcome(folder / f"{k}.json", k)
                                            for k in keys]
    todo = [i for i, o in enumerate(outcomes)
            if o is None or (retry_failed and o.get("error") is not None)]
    reused = total - len(todo)
    _log.info("sweep %s: %d points, %d stored in %s, %d to compute", sweep.name, total,
              reused, out, len(todo))
    executor = executor if executor is not None else SerialExecutor()
    if in_flight is None:       # this process: one at a time, so each is stored at once
        in_flight = 1 if isinstance(executor, SerialExecutor) else \
            4 * max(1, int(getattr(executor, "_max_workers", 64) or 64))
    done = reused
    failed = sum(1 for o in outcomes if o is not None and o.get("error") is not None
                 and not retry_failed)
    if progress:
        progress(done, failed, total)
    if todo:
        folder.mkdir(parents=True, exist_ok=True)
    queue = iter(todo)
    running: dict[Future, int] = {}
    deaths: dict[int, int] = {}          # point -> times its worker died under it

    def submit_more() -> None:
        for i in queue:
            running[executor.submit(run_point, sweep.document(i), str(sweep.path),
                                    engine)] = i
            if len(running) >= in_flight:
                return

    try:
        submit_more()
        while running:
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in finished:
                i = running.pop(future)
                if _worker_died(future):
                    deaths[i] = deaths.get(i, 0) + 1
                    if deaths[i] <= DEATH_RETRIES:
                        _log.warning("sweep %s: point %d %s: its worker died; running it "
                                     "again", sweep.name, i, sweep.points[i])
                        running[executor.submit(run_point, sweep.document(i),
                                                str(sweep.path), engine)] = i
                        continue
                    outcome = {"error": f"its worker process died {deaths[i]} times "
                                        f"(killed, or out of memory)"}
                else:
                    outcome = future.result()
                stored = {"netsim": __version__, "key": keys[i], "point": sweep.points[i],
                          "seed": sweep.document(i)["seed"], **outcome}
                text = json.dumps(to_jsonable(stored), indent=1)
                write_atomic(folder / f"{keys[i]}.json", text + "\n", overwrite=True)
                outcomes[i] = json.loads(text)      # the same form a resumed run reads
                done += 1
                failed += outcome.get("error") is not None
                _log.debug("point %d %s: %s in %.3f s", i, sweep.points[i],
                           outcome.get("error") or "ok", outcome.get("wall_s", 0.0))
                if progress:
                    progress(done, failed, total)
            submit_more()
    except BaseException:
        for future in running:
            future.cancel()
        raise
    return SweepResult(sweep, outcomes, len(todo), reused)   # type: ignore[arg-type]
