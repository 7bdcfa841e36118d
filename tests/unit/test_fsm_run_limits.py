"""The CLI's bounds of a run's shape are the runners' (cpp_runtime/fsm/run_limits.hpp)."""

from __future__ import annotations

import re

from parafuse.fsm_compiler.options import RUN_LIMITS
from tests.conftest import REPO


def test_the_cli_checks_the_runners_bounds() -> None:
    header = (REPO / "cpp_runtime" / "fsm" / "run_limits.hpp").read_text()
    threads = int(re.search(r"kMostThreads = (\d+);", header)[1])
    chunks_shift = int(re.search(r"kMaxChunks = size_t\(1\) << (\d+);", header)[1])
    assert RUN_LIMITS == {"threads": (0, threads), "chunks": (0, 1 << chunks_shift)}
