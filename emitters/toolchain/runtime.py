"""The C++ runtime headers (`cpp_runtime/`) that generated projects ship."""

from __future__ import annotations

from pathlib import Path

CPP_RUNTIME = Path(__file__).resolve().parents[2] / "cpp_runtime"


def runtime_files(names: list[str]) -> dict[str, bytes]:
    """Headers of `cpp_runtime/` to ship in a project, keyed by their path in it."""
    return {f"runtime/{name}": (CPP_RUNTIME / name).read_bytes() for name in names}
