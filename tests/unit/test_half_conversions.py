"""The runtime's branch-free f16/bf16 conversions (cpp_runtime/ccn/cpu/half.hpp) equal the
compiler's _Float16 conversions and round-to-nearest-even bfloat16: every f16 pattern,
and every 101st float pattern (all exponents, signs and rounding cases)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from parafuse.emitters.toolchain.runtime import CPP_RUNTIME
from tests.required_tools import require_cxx

SOURCE = Path(__file__).parent / "cpp" / "half_conversions.cpp"


def test_half_conversions_are_exact(tmp_path: Path) -> None:
    require_cxx()
    binary = tmp_path / "half_conversions"
    subprocess.run(["c++", "-std=c++17", "-O2", "-fno-math-errno", f"-I{CPP_RUNTIME}",
                    str(SOURCE), "-o", str(binary)], check=True)
    done = subprocess.run([str(binary), "101"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout
