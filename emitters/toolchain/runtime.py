"""The C++ runtime headers (`cpp_runtime/`) that generated projects ship."""

from __future__ import annotations

from pathlib import Path

CPP_RUNTIME = Path(__file__).resolve().parents[2] / "cpp_runtime"


def runtime_files(names: list[str]) -> dict[str, bytes]:
    """Headers of `cpp_runtime/` to ship in a project, keyed by their path in it."""
    return {f"runtime/{name}": (CPP_RUNTIME / name).read_bytes() for name in names}


def runtime_folders(folders: list[str], under: str) -> dict[str, bytes]:
    """The files of `cpp_runtime/` folders (each without its subfolders), keyed by their
    path under `under` in a project: the tree as it stands, so that `-I under` resolves
    their includes (`#include "ccn/mpi_util.hpp"`)."""
    return {f"{under}/{folder}/{path.name}": path.read_bytes()
            for folder in folders for path in sorted((CPP_RUNTIME / folder).iterdir())
            if path.is_file()}
