"""The `netsim ...` lines of the code blocks in README.md and docs/, for the tests that
check them (that they parse, and that they run)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _commands():
    for page in PAGES:
        for block in re.findall(r"```[a-z]*\n(.*?)```", page.read_text(), re.S):
            # a line ending in a backslash goes on on the next one, as in a shell
            for line in re.sub(r"\\\n\s*", " ", block).splitlines():
                line = line.strip()
                # placeholders (DIR, FILE, [options]) are for reading, not running
                if line.startswith("netsim ") and not re.search(r"\b[A-Z]{2,}\b|\[", line):
                    yield page.name, re.split(r"\s+#\s", line)[0].strip()


#: (page name, command line) of every runnable documented command, in page order.
COMMANDS = list(_commands())
