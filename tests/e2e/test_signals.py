"""Ctrl-C (SIGINT) or SIGTERM to `coconetc run` ends the whole job: mpirun and every rank
(they ran on under PID 1 and wrote their outputs 20 s later), one line, and the shell's
exit code for the signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.required_tools import require_cxx

COCONETC = str(Path(sys.executable).parent / "coconetc")
RUN = [COCONETC, "run", "samples/sgd.ccn", "--backend", "cpu", "-n", "2", "--random"]


def processes_naming(text: str) -> list[int]:
    """The processes whose command line holds `text`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def as_from_a_terminal() -> None:
    """The job's signal state as an interactive shell gives it: SIGINT and SIGTERM at their
    defaults and unblocked. A process of the suite (earlier in the same worker) may have
    left SIGINT ignored, which a child inherits: then coconetc, like any program started
    so (`nohup`, a background job), ignores Ctrl-C, and the test would wait in vain."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_mpirun_and_every_rank(number, tmp_path) -> None:
    require_cxx()
    built = subprocess.run([*RUN, "--size", "N=10"], cwd=REPO, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    out = tmp_path / "out"  # names the job's processes: mpirun's and each rank's arguments
    job = subprocess.Popen([*RUN, "--size", "N=100000", "--iters", "1000000", "--outputs",
                            str(out)], cwd=REPO, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONFAULTHANDLER": "1"},
                           preexec_fn=as_from_a_terminal)
    try:
        assert wait_for(lambda: len(processes_naming(str(out))) >= 3, 60), "no ranks started"
        job.send_signal(number)
        try:
            _, stderr = job.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            job.send_signal(signal.SIGABRT)
            _, stderr = job.communicate(timeout=10)
            raise AssertionError("still running: " + stderr) from None
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode == 128 + number, stderr
    assert stderr.strip().splitlines()[-1] == \
        f"coconetc: stopped by {signal.Signals(number).name}", stderr
    assert wait_for(lambda: not processes_naming(str(out)), 10), processes_naming(str(out))
    time.sleep(1)
    assert not out.exists() or not any(out.iterdir()), sorted(os.listdir(out))
