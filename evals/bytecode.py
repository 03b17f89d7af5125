"""The benchmarks time orch as an installed copy runs: its modules compiled to bytecode.

Installing a package writes the bytecode of its modules; a checkout does so on first
import, unless PYTHONDONTWRITEBYTECODE is set, when every `orch` process started from a
checkout whose modules changed compiles them again. A benchmark that spawns `orch` would
then count the compiler in each run. `compile_package()` writes the bytecode once, before
anything is timed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orchestrator


def compile_package() -> None:
    """Write the bytecode of every module of orch (the package this Python imports)."""
    package = Path(orchestrator.__file__).parent
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], env=env, check=True)
