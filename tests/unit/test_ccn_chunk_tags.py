"""The CPU overlap's MPI tags (pf::chunk_tag, cpp_runtime/ccn/chunk_plan.hpp) stay within the
32767 every MPI accepts at every chunk count `tune` accepts, and never pair the producer's
chunks with the consumer's (tests/e2e/test_cpu_backend.py runs 65536 chunks end to end)."""

from __future__ import annotations

from pathlib import Path

from parafuse.ccn_compiler.schedules.tune import MOST_CHUNKS
from tests.unit.cpp_programs import assert_prints_ok


def test_tags_stay_in_bounds_at_the_most_chunks(tmp_path: Path) -> None:
    assert_prints_ok("chunk_tags", tmp_path, ["-O1", "-Wall", "-Werror"], (str(MOST_CHUNKS),))
