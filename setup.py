"""Build hook: compile netsim's numba kernels while the package is built, so that no run
waits for the compiler (netsim/_precompile.py says how the cache works).

``pip install -e .`` compiles on the source tree (the cache lands in its ``__pycache__``
directories); ``pip install .`` compiles on the built copy, whose cache files go into the
wheel. Set ``NETSIM_PRECOMPILE=0`` to skip the step (a wheel built for other machines: the
cache is specific to the CPU and to the numba and Python versions). A failure here never
fails the install: the kernels are then compiled on first use, as numba does by default.
"""

import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py


class build_py_compiled(build_py):
    def run(self):
        super().run()
        if os.environ.get("NETSIM_PRECOMPILE", "1") == "0":
            return
        # an editable install imports the sources in place; a wheel ships build_lib
        root = os.path.dirname(os.path.abspath(__file__)) if self.editable_mode else self.build_lib
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        done = subprocess.run([sys.executable, "-m", "netsim._precompile"], cwd=root, env=env)
        if done.returncode:
            print("netsim: kernels not compiled at install; they compile on first use",
                  file=sys.stderr)


setup(cmdclass={"build_py": build_py_compiled})
