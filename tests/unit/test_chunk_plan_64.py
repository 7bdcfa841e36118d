"""The chunk plans of the pipelined fused collectives count and offset in 64 bits: plans of
more than 2^32 elements (nothing allocated) cover every element once, with each chunk's
pieces, their padded slots and MPI's int arrays (which a plan that large refuses)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from parafuse.emitters.toolchain.runtime import CPP_RUNTIME
from tests.required_tools import require_cxx

SOURCE = Path(__file__).parent / "cpp" / "chunk_plan_64.cpp"


def test_chunk_plans_beyond_2_to_the_32_elements(tmp_path: Path) -> None:
    require_cxx()
    binary = tmp_path / "chunk_plan_64"
    subprocess.run(["c++", "-std=c++17", "-O1", "-Wall", "-Werror", f"-I{CPP_RUNTIME}",
                    str(SOURCE), "-o", str(binary)], check=True)
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout
