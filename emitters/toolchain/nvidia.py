"""NVIDIA tools and libraries: nvcc, the GPU driver, NCCL and cuBLAS from their wheels."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class NvidiaLibrary:
    include: str
    library: str


def _wheel_library(package: str, header: str, soname: str) -> NvidiaLibrary:
    """A library of an `nvidia-*` wheel of the running Python (empty: use the system's)."""
    try:
        import nvidia
    except ImportError:
        return NvidiaLibrary("", "")
    for root in map(Path, nvidia.__path__):
        for include in sorted(root.glob(f"*/include/{header}")):
            library = include.parent.parent / "lib" / soname
            if library.exists():
                return NvidiaLibrary(str(include.parent), str(library))
    del package
    return NvidiaLibrary("", "")


def nccl_library() -> NvidiaLibrary:
    return _wheel_library("nvidia-nccl-cu13", "nccl.h", "libnccl.so.2")


def cublas_library() -> NvidiaLibrary:
    return _wheel_library("nvidia-cublas", "cublas_v2.h", "libcublas.so.13")


def cublaslt_library() -> NvidiaLibrary:
    return _wheel_library("nvidia-cublas", "cublasLt.h", "libcublasLt.so.13")


def gpu_present() -> bool:
    """Whether the driver knows an NVIDIA GPU here (`nvidia-smi -L`, else /proc)."""
    smi = shutil.which("nvidia-smi")
    if smi:
        done = subprocess.run([smi, "-L"], capture_output=True, text=True)
        return done.returncode == 0 and "GPU" in done.stdout
    return any(Path("/proc/driver/nvidia/gpus").glob("*"))


def find_nvcc() -> str | None:
    """nvcc from $CUDA_HOME (or $CUDA_PATH), else the first one on PATH."""
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(variable)
        if home and (Path(home) / "bin" / "nvcc").is_file():
            return str(Path(home) / "bin" / "nvcc")
    return shutil.which("nvcc")
