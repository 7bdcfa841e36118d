"""Make `tests/` and `tests/e2e/` importable, whether or not `tests` is a package.

The e2e helpers (`numpy_oracles`, `sample_cases`, `reference_runner`) are imported by
plain module name.
"""

from __future__ import annotations

import sys
from pathlib import Path

for directory in (Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent):
    if str(directory) not in sys.path:
        sys.path.insert(0, str(directory))
