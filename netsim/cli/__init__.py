"""The ``netsim`` command line. Each subcommand lives in its own module of this package;
they use only netsim's public API. Errors caused by input are one line on stderr and a
non-zero exit (2 for usage and input errors); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import importlib
import io
import logging
import re
import sys

import click

from ..errors import NetsimError

__all__ = ["main", "cli"]

#: Subcommand modules (netsim/cli/NAME.py, each defining a click command called `command`),
#: in the order `netsim --help` lists them; a module loads only when its command runs.
SUBCOMMANDS = (
    "topo", "flows", "run", "coll", "compare", "place", "heatmap",
    "export",       # schedules as MSCCL XML and Chakra execution traces
    "synth",        # collectives synthesised for the machine
    "sweep", "schema", "plugins",
    "validate",     # published measurements against the default command
    "plan",         # a training layout and its placement for a model on a machine
)


class _Group(click.Group):
    def list_commands(self, ctx):
        return [name for name in SUBCOMMANDS if self._load(name) is not None]

    def get_command(self, ctx, name):
        return self._load(name)

    @staticmethod
    def _load(name):
        if name not in SUBCOMMANDS:
            return None
        try:
            module = importlib.import_module(f"netsim.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name == f"netsim.cli.{name}":
                return None
            raise
        return module.command


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.option("--max-memory", metavar="SIZE", default=None,
              help="Memory a run may use (e.g. 16GiB); default: what the machine has "
                   "available. Bigger runs are refused before they start.")
@click.option("-v", "--verbose", count=True, help="Log more to stderr (-v info, -vv debug).")
@click.option("-q", "--quiet", is_flag=True, help="Log only errors to stderr.")
@click.version_option(package_name="netsim")
@click.pass_context
def cli(ctx: click.Context, debug: bool, max_memory: str | None, verbose: int = 0,
        quiet: bool = False) -> None:
    """netsim: how long does this collective take on this machine, and which links are hot?"""
    from ..budget import set_max_memory
    from ..errors import InputError
    from ..units import parse_size

    ctx.ensure_object(dict)["debug"] = debug
    ctx.obj["quiet"] = quiet              # -q also drops the "wrote FILE" lines
    size = None if max_memory is None else parse_size(max_memory, "--max-memory")
    if size is not None and size < 1:
        raise InputError(f"--max-memory must be at least 1 byte, got {max_memory!r}")
    set_max_memory(None if size is None else int(size))   # every invocation sets its own
    ctx.obj["max_memory"] = None if size is None else int(size)   # the engine's budget
    _logging(verbose, quiet)
    _load_plugins()


class _Stderr(logging.StreamHandler):
    """A handler writing to whatever sys.stderr is when a record comes (tests swap it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def _logging(verbose: int, quiet: bool) -> None:
    """netsim's loggers to stderr: warnings by default, -v info, -vv debug, -q errors."""
    levels = [logging.WARNING, logging.INFO, logging.DEBUG]
    logger = logging.getLogger("netsim")
    logger.setLevel(logging.ERROR if quiet else levels[min(verbose, 2)])
    if not any(isinstance(h, _Stderr) for h in logger.handlers):
        handler = _Stderr()
        handler.setFormatter(logging.Formatter("netsim: %(levelname)s: %(message)s"))
        logger.addHandler(handler)


def _load_plugins() -> None:
    """Load installed plugins (netsim.run.plugins); a broken one is a one-line warning.
    Entry points are looked up first so that, with none installed, nothing is imported."""
    from importlib.metadata import entry_points

    groups = ("netsim.topologies", "netsim.algorithms", "netsim.placements", "netsim.jobs")
    installed = entry_points()            # one scan of the installed packages, not four
    if not any(installed.select(group=group) for group in groups):
        return
    from ..run import load_plugins

    for plugin in load_plugins():
        if plugin.error is not None:
            click.echo(f"netsim: warning: plugin {plugin.name!r} ({plugin.group}, from "
                       f"{plugin.dist or plugin.value}) not loaded: {plugin.error}", err=True)


#: A quoted value longer than this is cut in error messages: they quote what was given,
#: never a megabyte of it.
MAX_QUOTED = 80
_QUOTED = re.compile("'[^'\\n]{%d,}'|\"[^\"\\n]{%d,}\"" % (MAX_QUOTED, MAX_QUOTED))


def _shorten(match: re.Match) -> str:
    text = match.group(0)
    return f"{text[:MAX_QUOTED - 20]}...{text[0]} ({len(text) - 2} characters)"


def _one_line(message: str) -> str:
    """Errors are one line on stderr, whatever the message carries, with long quoted
    values shortened."""
    line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    return _QUOTED.sub(_shorten, line)


def _drop_stdout() -> None:
    """Point stdout at /dev/null: its unwritable buffer is discarded, not flushed again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


class _ClosedStdout(io.TextIOBase):
    """Standard output when the shell closed it (``netsim ... >&-``: ``sys.stdout`` is
    None): writing to it is the error a closed descriptor gives, reported in one line."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        import errno

        raise OSError(errno.EBADF, "closed (Bad file descriptor)")

    def fileno(self) -> int:
        raise OSError("standard output is closed")


def main(argv=None) -> None:
    """Entry point of the ``netsim`` console script.

    Ctrl-C (SIGINT) and SIGTERM end any command with one line on stderr and exit code 130
    or 143 (:mod:`netsim.interrupts` keeps them out of compiled code); the command's files
    are written atomically, so none is left half-written, and sweep workers are ended.
    """
    from ..interrupts import Interrupted, handling

    exiting = argv is None      # the console script: this process ends after the command
    try:
        with handling(then_ignore=exiting):
            _main(argv)
    except Interrupted as stop:
        click.echo(f"netsim: {stop}", err=True)
        sys.exit(stop.exit_code)


def _main(argv=None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    try:
        cli.main(args=argv, prog_name="netsim", standalone_mode=False)
        sys.stdout.flush()            # a full disk under `> file` shows here, not at exit
    except click.exceptions.Abort:
        click.echo("netsim: aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        hint = ""
        if isinstance(err, click.UsageError) and err.ctx is not None:
            hint = f" (see '{err.ctx.command_path} --help')"
        click.echo(f"netsim: error: {_one_line(err.format_message())}{hint}", err=True)
        sys.exit(err.exit_code)
    except NetsimError as err:
        if debug:
            raise
        click.echo(f"netsim: error: {_one_line(str(err))}", err=True)
        sys.exit(err.exit_code)
    except (KeyboardInterrupt, BrokenPipeError):
        sys.exit(130)
    except MemoryError:
        click.echo("netsim: error: out of memory (try a smaller case)", err=True)
        sys.exit(1)
    except RecursionError:
        if debug:
            raise
        click.echo("netsim: error: input nested too deeply", err=True)
        sys.exit(2)
    except OSError as err:
        # Writing stdout to a full disk or a closed device: one line, and stdout is
        # dropped so that the interpreter does not fail again flushing it at exit.
        if debug:
            raise
        where = f"{err.filename or 'standard output'}: "
        _drop_stdout()
        click.echo(f"netsim: error: {where}{err.strerror or err}", err=True)
        sys.exit(1)
    except click.exceptions.Exit as err:
        sys.exit(err.exit_code)
    finally:
        # --max-memory is this invocation's: a program (or test) that calls main() and then
        # the Python API must not keep its budget
        from ..budget import set_max_memory

        set_max_memory(None)
