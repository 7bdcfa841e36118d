"""oneDNN, the CPU backend's GEMM library, from the onednn-devel-cpu-gomp wheel of the
running Python: the folder of its CMake package (dnnl-config.cmake, target DNNL::dnnl)."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

WHEEL = "onednn-devel-cpu-gomp"


def dnnl_cmake_dir() -> str:
    """The folder holding dnnl-config.cmake; empty when the wheel is not installed (CMake
    then searches its default places, and says so if it finds none)."""
    try:
        files = metadata.distribution(WHEEL).files or []
    except metadata.PackageNotFoundError:
        return ""
    for file in files:
        if file.name == "dnnl-config.cmake":
            return str(Path(file.locate()).resolve().parent)
    return ""
