"""A launch that hangs is killed at its time limit, with every rank it started, and the
error names the command; the limit comes from the caller, else $PARAFUSE_RUN_TIMEOUT."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from parafuse.emitters.toolchain import mpirun
from parafuse.emitters.toolchain.cmake import Toolchain

HANG_S = "61.25"  # a duration no other process on the machine sleeps for


def _sleepers() -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if words[:2] == [b"sleep", HANG_S.encode()]:
            found.append(cmdline.parent.name)
    return found


def test_hanging_ranks_are_killed_and_named(monkeypatch: pytest.MonkeyPatch) -> None:
    hang = [Toolchain.current().tool("mpirun"), "--oversubscribe", "-np", "2", "sleep", HANG_S]
    monkeypatch.setattr(mpirun, "mpirun_command", lambda *_: hang)
    started = time.monotonic()
    with pytest.raises(mpirun.LaunchTimeout) as raised:
        mpirun.run_ranks(Path("unused"), "sgd", 2, [], timeout_s=3)
    assert time.monotonic() - started < 30
    assert f"-np 2 sleep {HANG_S}" in raised.value.message
    assert "timed out after 3 s" in raised.value.message
    deadline = time.monotonic() + 10
    while _sleepers() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _sleepers() == []


def test_the_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(mpirun.TIMEOUT_VARIABLE, "0.5")
    with pytest.raises(mpirun.LaunchTimeout, match="after 0.5 s"):
        mpirun.run_bounded(["sleep", HANG_S], {})
    assert mpirun.launch_timeout(7) == 7
    monkeypatch.delenv(mpirun.TIMEOUT_VARIABLE)
    assert mpirun.launch_timeout(None) == mpirun.DEFAULT_TIMEOUT_S


def test_a_launch_within_its_limit_returns_its_output() -> None:
    done = mpirun.run_bounded(["sh", "-c", "echo out; echo err >&2; exit 3"], {}, 30)
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")
