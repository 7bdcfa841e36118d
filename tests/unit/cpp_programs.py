"""Small C++ programs over the runtime's headers (tests/unit/cpp/), compiled and run by the
unit tests: each prints "ok", or what failed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from parafuse.emitters.toolchain.runtime import CPP_RUNTIME
from tests.required_tools import require_cxx

SOURCES = Path(__file__).parent / "cpp"


def assert_prints_ok(name: str, tmp_path: Path, flags: list[str], args: tuple[str, ...] = ()
                     ) -> None:
    """Builds tests/unit/cpp/NAME.cpp with `flags` and runs it with `args`."""
    require_cxx()
    binary = tmp_path / name
    subprocess.run(["c++", "-std=c++17", *flags, f"-I{CPP_RUNTIME}", str(SOURCES / f"{name}.cpp"),
                    "-o", str(binary)], check=True)
    done = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout
