"""The chunk plans of the pipelined fused collectives count and offset in 64 bits: plans of
more than 2^32 elements (nothing allocated) cover every element once, with each chunk's
pieces, their padded slots and MPI's int arrays (which a plan that large refuses)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.cpp_programs import assert_prints_ok


def test_chunk_plans_beyond_2_to_the_32_elements(tmp_path: Path) -> None:
    assert_prints_ok("chunk_plan_64", tmp_path, ["-O1", "-Wall", "-Werror"])
