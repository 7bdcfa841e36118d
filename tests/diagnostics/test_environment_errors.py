"""A build cache or HOME that cannot be written (read-only, full) is one `error:` line that
names the folder, the system's reason and the setting that moves it, exit 1 (it was
"internal error: OSError ... this is a bug in parafuse", exit 2); two builds into one `-o`
folder at once wait for each other (one failed, with a log tail that held no error)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tests.required_tools import require_cxx

BIN = Path(sys.executable).parent
BUILDS = {"coconetc": ["build", str(SAMPLES / "sgd.ccn"), "-o", "out"],
          "boostfsm": ["compile", str(SAMPLES / "div7.fsm"), "-o", "out"]}
RUNS = {"coconetc": ["run", str(SAMPLES / "sgd.ccn"), "--backend", "cpu", "-n", "1", "--size",
                     "N=4", "--random"],
        "boostfsm": ["run", str(SAMPLES / "div7.fsm"), str(SAMPLES / "div7.fsm")]}
HINT = "(set PARAFUSE_CACHE to a writable folder with free space)"


def one_error_line(tool: str, args: list[str], cwd: Path, **environment: str | None) -> str:
    env = {**os.environ, **{k: v for k, v in environment.items() if v is not None}}
    for name in (k for k, v in environment.items() if v is None):
        env.pop(name, None)
    done = subprocess.run([str(BIN / tool), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    lines = [line for line in done.stderr.splitlines()
             if not line.startswith(f"{tool}: compiling")]
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and lines[0].startswith(f"{tool}: error: "), done.stderr
    return lines[0]


@pytest.mark.parametrize("tool", sorted(BUILDS))
def test_a_read_only_cache_is_one_line(tool, tmp_path, read_only_folder) -> None:
    cache = read_only_folder / "cache"
    line = one_error_line(tool, BUILDS[tool], tmp_path, PARAFUSE_CACHE=str(cache))
    assert line == (f"{tool}: error: cannot use the build cache '{cache}': Read-only file "
                    f"system {HINT}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("tool", sorted(BUILDS))
def test_a_read_only_home_without_parafuse_cache_is_one_line(tool, tmp_path,
                                                             read_only_folder) -> None:
    line = one_error_line(tool, BUILDS[tool], tmp_path, HOME=str(read_only_folder),
                          PARAFUSE_CACHE=None)
    assert line == (f"{tool}: error: cannot use the build cache "
                    f"'{read_only_folder}/.cache/parafuse': Read-only file system {HINT}")


@pytest.mark.parametrize("tool", sorted(RUNS))
def test_a_full_cache_is_one_line(tool, tmp_path, full_disk) -> None:
    require_cxx()
    line = one_error_line(tool, RUNS[tool], tmp_path, PARAFUSE_CACHE=str(full_disk))
    assert line == (f"{tool}: error: cannot use the build cache '{full_disk}': No space left "
                    f"on device {HINT}")


def test_two_builds_into_one_folder_wait_for_each_other(tmp_path) -> None:
    require_cxx()
    builds = [subprocess.Popen([str(BIN / "boostfsm"), *BUILDS["boostfsm"]], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(2)]
    for build in builds:
        _, stderr = build.communicate(timeout=600)
        assert build.returncode == 0, stderr
    ran = subprocess.run([str(tmp_path / "out" / "build" / "div7_run"),
                          str(SAMPLES / "div7.fsm")], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr


@pytest.mark.parametrize("backend", ["reference", "cpu", "cuda-emulated"])
def test_a_read_only_outputs_folder_is_the_references_line(backend, tmp_path,
                                                           read_only_folder) -> None:
    """Checked by the CLI before any build, on every backend (the C++ runners said
    `filesystem error: ...` or named no reason; the reference, "Permission denied")."""
    out = read_only_folder / "out"
    line = one_error_line("coconetc", [*RUNS["coconetc"][:3], backend, "-n", "2", "--size",
                                       "N=4", "--random", "--outputs", str(out)], tmp_path)
    assert line == (f"coconetc: error: --outputs {out}: cannot write the output folder: "
                    f"Read-only file system ('{read_only_folder}' is on one)")
