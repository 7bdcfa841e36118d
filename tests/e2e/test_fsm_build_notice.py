"""A `boostfsm run` that has to compile says so on stderr, in one line, as coconetc does;
its stdout (here --json) is the runner's alone. Once cached, the run is silent on stderr.
(`boostfsm compile`'s notice: test_add_subdirectory.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from parafuse.emitters.toolchain.cmake import cache_root
from tests.conftest import REPO
from tests.required_tools import require_cxx

BOOSTFSM = str(Path(sys.executable).parent / "boostfsm")


def test_a_first_run_says_it_compiles_on_stderr_only(tmp_path) -> None:
    require_cxx()
    # nothing built yet; the compiler cache of the other tests' builds is shared
    env = dict(os.environ, PARAFUSE_CACHE=str(tmp_path / "cache"),
               CCACHE_DIR=str(cache_root() / "ccache"))
    data = tmp_path / "in.txt"
    data.write_bytes(b"0101110\n1110\n")
    command = [BOOSTFSM, "run", "samples/div7.fsm", str(data), "--json"]
    first, again = (subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True,
                                   timeout=600) for _ in range(2))
    for done in (first, again):
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["counts"] == {"divisible": 5}
    assert first.stderr.startswith("boostfsm: compiling fsm-div7 "), first.stderr
    assert first.stderr.endswith(" s\n") and first.stderr.count("\n") == 1, first.stderr
    assert " (C++ with CMake and Ninja) ... done in " in first.stderr
    assert again.stderr == ""
