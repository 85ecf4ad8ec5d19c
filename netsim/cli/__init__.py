"""The ``netsim`` command line. Each subcommand lives in its own module of this package;
they use only netsim's public API. Errors caused by input are one line on stderr and a
non-zero exit (2 for usage and input errors); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import importlib
import sys

import click

from ..errors import NetsimError

__all__ = ["main", "cli"]

# Subcommand modules, each defining a click command called `command`.
SUBCOMMANDS = ["topo", "flows", "run", "coll", "compare", "place", "heatmap"]


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
@click.version_option(package_name="netsim")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """netsim: how long does this collective take on this machine, and which links are hot?"""
    ctx.ensure_object(dict)["debug"] = debug


def _one_line(message: str) -> str:
    """Errors are one line on stderr, whatever the message carries."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def main(argv=None) -> None:
    """Entry point of the ``netsim`` console script."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="netsim", standalone_mode=False)
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
    except click.exceptions.Exit as err:
        sys.exit(err.exit_code)
