"""Launch a built .ccn runner on R ranks with the Open MPI of this environment."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from parafuse.emitters.toolchain.cmake import Toolchain

LAUNCHER_BLOCK = re.compile(r"^-{20,}\n.*?^-{20,}\n?", re.S | re.M)
# PMIx's own line when a rank exits non-zero before the launcher polls it, and libevent's
# when the launcher drops that rank's descriptor twice (races of the launcher, not ours)
LAUNCHER_LINE = re.compile(
    r"^(\[[^\]\n]*\] PMIX ERROR: |\[warn\] Epoll [A-Z]+\(\d+\) on fd \d+ failed\.).*\n?",
    re.M)


def launch_environment(ranks: int) -> dict[str, str]:
    """Environment for mpirun: root allowed, one OpenMP team per rank sized to the cores."""
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // max(1, ranks))))
    return env


def mpirun_command(project: Path, program: str, ranks: int, args: list[str]) -> list[str]:
    runner = project / "build" / f"{program}_run"
    return [Toolchain.current().tool("mpirun"), "--oversubscribe", "-np", str(ranks),
            str(runner), *args]


def run_ranks(project: Path, program: str, ranks: int, args: list[str], asan: bool = False
              ) -> subprocess.CompletedProcess:
    """Run the runner; Open MPI's own boxed messages and PMIx lines are dropped from
    stderr."""
    env = launch_environment(ranks)
    if asan:  # Open MPI's own allocations are not ours to report
        env["ASAN_OPTIONS"] = "detect_leaks=0"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    done = subprocess.run(mpirun_command(project, program, ranks, args), text=True,
                          capture_output=True, env=env)
    done.stderr = LAUNCHER_LINE.sub("", LAUNCHER_BLOCK.sub("", done.stderr))
    return done
