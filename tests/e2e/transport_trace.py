"""Which transport the fused collectives of a CPU run used, seen from outside: a profiling
shim (transport/trace_transport.c, preloaded into the ranks) counts node-shared windows
and MPI reduce-scatters and all-gathers, and each rank writes its counts at exit."""

from __future__ import annotations

import functools
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from parafuse.emitters.toolchain.cmake import Toolchain

SOURCE = Path(__file__).parent / "transport" / "trace_transport.c"


@dataclass(frozen=True)
class RankCalls:
    shared_windows: int
    reduce_scatters: int
    all_gathers: int


@functools.cache
def shim() -> Path:
    """The shim, compiled once per test process (a second or so)."""
    library = Path(tempfile.mkdtemp(prefix="pf-transport-")) / "libtrace_transport.so"
    subprocess.run([Toolchain.current().tool("mpicc"), "-shared", "-fPIC", "-O1",
                    "-o", str(library), str(SOURCE)], check=True, capture_output=True)
    return library


class TransportTrace:
    """Preloads the shim into every launch while the test runs; `take()` returns each
    rank's calls since the last take."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
        self.folder = folder
        folder.mkdir()
        monkeypatch.setenv("LD_PRELOAD", str(shim()))
        monkeypatch.setenv("PF_TRANSPORT_TRACE", str(folder))

    def take(self) -> list[RankCalls]:
        files = sorted(self.folder.glob("rank.*"))
        calls = [RankCalls(*map(int, path.read_text().split())) for path in files]
        for path in files:
            path.unlink()
        return calls
