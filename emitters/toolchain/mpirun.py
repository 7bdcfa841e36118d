"""Launch a built .ccn runner on R ranks with the Open MPI of this environment."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

from parafuse.emitters.toolchain.cmake import Toolchain
from parafuse.grammar.diagnostics import CompileError

# the slowest legitimate launch of the test suite takes seconds; a loaded 2-core machine
# oversubscribed by four ranks, some under AddressSanitizer, is given minutes
DEFAULT_TIMEOUT_S = 600.0
TIMEOUT_VARIABLE = "PARAFUSE_RUN_TIMEOUT"

LAUNCHER_BLOCK = re.compile(r"^-{20,}\n.*?^-{20,}\n?", re.S | re.M)
# PMIx's own line when a rank exits non-zero before the launcher polls it, and libevent's
# when the launcher drops that rank's descriptor twice (races of the launcher, not ours)
LAUNCHER_LINE = re.compile(
    r"^(\[[^\]\n]*\] PMIX ERROR: |\[warn\] Epoll [A-Z]+\(\d+\) on fd \d+ failed\.).*\n?",
    re.M)


# Open MPI's components for ranks on this one node (what ccn/mpi_components.hpp chooses
# in a runner and in a CPU library, here for whatever is launched): shared-memory windows and
# transports, so that Open MPI does not probe UCX, whose one-sided component prints
# errors to every run that opens a window. A value already in the environment wins.
ONE_NODE_COMPONENTS = {"OMPI_MCA_osc": "sm", "OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,sm"}


def launch_environment(ranks: int) -> dict[str, str]:
    """Environment for mpirun: root allowed, one OpenMP team per rank sized to the cores,
    Open MPI's one-node components."""
    env = dict(os.environ)
    for variable, value in ONE_NODE_COMPONENTS.items():
        env.setdefault(variable, value)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // max(1, ranks))))
    return env


def mpirun_command(project: Path, program: str, ranks: int, args: list[str]) -> list[str]:
    runner = project / "build" / f"{program}_run"
    return [Toolchain.current().tool("mpirun"), "--oversubscribe", "-np", str(ranks),
            str(runner), *args]


class LaunchTimeout(CompileError):
    """A launch ran past its time limit: the launcher and its ranks were killed."""

    def __init__(self, command: list[str], timeout_s: float, output: str) -> None:
        tail = "\n".join(output.strip().splitlines()[-20:])
        super().__init__(f"timed out after {timeout_s:g} s (set {TIMEOUT_VARIABLE} or "
                         f"timeout_s for more), killed: {shlex.join(command)}"
                         + (f"\n{tail}" if tail else ""), None)
        self.command = command


def launch_timeout(timeout_s: float | None) -> float:
    """The given limit, else $PARAFUSE_RUN_TIMEOUT, else DEFAULT_TIMEOUT_S."""
    if timeout_s is not None:
        return timeout_s
    return float(os.environ.get(TIMEOUT_VARIABLE) or DEFAULT_TIMEOUT_S)


def run_bounded(command: list[str], env: dict[str, str], timeout_s: float | None = None
                ) -> subprocess.CompletedProcess:
    """Run command with its output captured; past the limit, kill its whole process group
    (the launcher and every rank it started) and raise LaunchTimeout naming it. Stopped
    meanwhile (Ctrl-C, SIGTERM: an exception here), it ends the session the same way first:
    the launcher runs in a session of its own, which the terminal's signal does not reach."""
    limit = launch_timeout(timeout_s)
    with subprocess.Popen(command, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env, start_new_session=True) as process:
        try:
            stdout, stderr = process.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            stderr = end_session(process)
            raise LaunchTimeout(command, limit, stderr) from None
        except BaseException:
            end_session(process)
            raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def end_session(process: subprocess.Popen) -> str:
    """Ask the launcher to stop its ranks (SIGTERM), then kill whatever of its session is
    left: Open MPI puts each rank in a process group of its own, inside the session."""
    process.terminate()
    try:
        _, stderr = process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        stderr = ""
    process.kill()
    kill_session(process.pid)
    if process.returncode is None:
        try:  # a survivor could hold the pipes open: never wait on it for ever
            stderr = process.communicate(timeout=5)[1]
        except subprocess.TimeoutExpired:
            stderr = ""
    return stderr


def kill_session(session: int, rounds: int = 100) -> None:
    """SIGKILL every live process of the session, scanning again until none is left: a
    launcher stopped while it forks a rank leaves a child that one scan would miss (it then
    ran on, holding the job's pipes)."""
    for _ in range(rounds):
        members = session_members(session)
        if not members:
            return
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)


def session_members(session: int) -> list[int]:
    """Live processes whose session id is `session` (Linux /proc; none found elsewhere);
    zombies, dead and waiting to be reaped, are left out."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == session and fields[0] not in "ZX":  # state ppid pgrp session
            members.append(int(stat.parent.name))
    return members


def run_ranks(project: Path, program: str, ranks: int, args: list[str], asan: bool = False,
              timeout_s: float | None = None) -> subprocess.CompletedProcess:
    """Run the runner; Open MPI's own boxed messages and PMIx lines are dropped from
    stderr. Past timeout_s (default: launch_timeout) the launch is killed and
    LaunchTimeout names it."""
    env = launch_environment(ranks)
    if asan:  # Open MPI's own allocations are not ours to report
        env["ASAN_OPTIONS"] = "detect_leaks=0"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    done = run_bounded(mpirun_command(project, program, ranks, args), env, timeout_s)
    done.stderr = LAUNCHER_LINE.sub("", LAUNCHER_BLOCK.sub("", done.stderr))
    return done
