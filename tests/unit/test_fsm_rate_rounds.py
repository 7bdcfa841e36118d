"""How many rounds `auto`'s first rule times its kernels (cpp_runtime/fsm/auto_rate_rounds.hpp),
checked as functions, without timing anything: tests/property/test_fsm_auto_cost.py runs the
rule itself, where the machine's load decides how many rounds a run takes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from parafuse.emitters.toolchain.runtime import CPP_RUNTIME
from tests.required_tools import require_cxx

SOURCE = Path(__file__).parent / "cpp" / "rate_rounds.cpp"


def test_rounds_stop_where_two_agree_and_fit_the_input(tmp_path: Path) -> None:
    require_cxx()
    binary = tmp_path / "rate_rounds"
    subprocess.run(["c++", "-std=c++17", "-O1", "-Wall", "-Werror", f"-I{CPP_RUNTIME}",
                    str(SOURCE), "-o", str(binary)], check=True)
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout
