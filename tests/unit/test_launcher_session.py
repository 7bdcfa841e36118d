"""Stopping a launch kills its whole session, even a rank the launcher forked after a scan."""

from __future__ import annotations

import subprocess
import time

from parafuse.emitters.toolchain import mpirun


def test_a_child_forked_after_the_scan_is_killed_too(monkeypatch) -> None:
    launcher = subprocess.Popen(["sh", "-c", "sleep 300 & sleep 300 & wait"],
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while len(mpirun.session_members(launcher.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        members = mpirun.session_members(launcher.pid)
        assert len(members) == 3
        scans = []

        def first_scan_misses_a_child(session: int) -> list[int]:
            scans.append(session)
            found = members_now(session)
            return found[:-1] if len(scans) == 1 else found

        members_now = mpirun.session_members
        monkeypatch.setattr(mpirun, "session_members", first_scan_misses_a_child)
        mpirun.kill_session(launcher.pid)
        launcher.wait(timeout=10)
        assert members_now(launcher.pid) == []
    finally:
        launcher.kill()
        launcher.wait()
