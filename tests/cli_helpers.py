"""Running the command line in-process, as the console script does, for tests."""

from __future__ import annotations

import traceback

from netsim.cli import main


def run_main(argv: list[str], capsys) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``netsim ARGV`` run by the console script's main().

    An exception that escapes main() is a bug: it comes back as exit code 1 with its
    traceback on stderr, so tests that forbid tracebacks see it.
    """
    capsys.readouterr()
    try:
        main(argv)
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except Exception:                        # noqa: BLE001 - a bug: show it as a traceback
        captured = capsys.readouterr()
        return 1, captured.out, captured.err + traceback.format_exc()
    captured = capsys.readouterr()
    return code, captured.out, captured.err
