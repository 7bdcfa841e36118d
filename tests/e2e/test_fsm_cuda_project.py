"""A DFA's GPU project through `boostfsm`: `run --backend cuda-emulated` gives what the
reference executor (and so the CPU runner) gives: final state, counts, matches; so does its
runner in every GPU scheme, with chunk boundaries after every byte of a small input.
`compile --backend cuda|cuda-emulated` writes and builds the project and its Python
module (nvcc, where the machine has it); what the GPU does not run yet is refused in one
line, before anything is written. Pattern sets of several engines run too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parafuse.emitters.fsm.cuda_project import cached_cuda_runner
from parafuse.emitters.toolchain.nvidia import gpu_present
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.conftest import SAMPLES
from tests.property.fsm_cpp_driver import project_request
from tests.property.test_fsm_cpp_schemes import sample_machine
from tests.required_tools import require_cxx, require_nvcc

BOOSTFSM = str(Path(sys.executable).parent / "boostfsm")
COMPARED = ("machine", "bytes", "final_state", "counts", "matches")
ENGINE_SET = """options { max_states 40 }
patterns words {
    one    /first/
    river  /Tom.{3,6}river|river.{3,6}Tom$/m
    window /[ab][^x]{6}y/
}
"""


def boostfsm(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([BOOSTFSM, *args], capture_output=True, text=True, timeout=600, cwd=cwd)


def run_json(*args: str) -> dict:
    done = boostfsm("run", *args, "--matches", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_set_of_several_engines_equals_the_reference(tmp_path) -> None:
    """An NFA engine and a prefiltered one, through `run` and the runner's GPU schemes."""
    require_cxx()
    (tmp_path / "words.fsm").write_text(ENGINE_SET)
    data = tmp_path / "in"
    data.write_bytes(b"first river Tom abc river\nab12345y first\nTom. river\n" * 30)
    source = str(tmp_path / "words.fsm")
    expected = run_json(source, str(data), "--backend", "reference")
    assert len(expected["final_state"]) == 2 and len(expected["matches"]) > 60
    assert pick(run_json(source, str(data), "--backend", "cuda-emulated")) == pick(expected)
    runner = cached_cuda_runner(project_request(compile_file(SourceFile(
        source, ENGINE_SET)).machines[0], source), emulated=True)  # `run` built it
    for scheme in ("seq", "enum", "spec"):
        done = subprocess.run([str(runner), str(data), "--scheme", scheme, "--chunks", "7",
                               "--matches", "--json"], capture_output=True, text=True,
                              timeout=60)
        got = json.loads(done.stdout)
        assert pick(got) == pick(expected), got["reason"]
        assert got["scheme"] == f"nfa+{scheme}"
    done = boostfsm("compile", source, "-o", "w", "--backend", "cuda-emulated", "--python",
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    module = subprocess.run([sys.executable, "-c", SET_SCRIPT, str(data)],
                            cwd=tmp_path / "w" / "build", capture_output=True, text=True,
                            timeout=60)
    assert module.returncode == 0, module.stderr
    assert json.loads(module.stdout) == [expected["final_state"], expected["counts"],
                                         [offset for offset, _ in expected["matches"]]]


SET_SCRIPT = """
import json, sys
import words
r = words.run(open(sys.argv[1], "rb").read(), matches=True)
print(json.dumps([r["final_state"], r["counts"], r["matches"]["offset"].tolist()]))
"""


@pytest.mark.parametrize("sample", ["clexer", "weblog"])
def test_gpu_runs_equal_the_reference(sample: str, tmp_path) -> None:
    require_cxx()
    source = str(SAMPLES / f"{sample}.fsm")
    data = tmp_path / "input"
    data.write_bytes((SAMPLES / f"{sample}.fsm").read_bytes() * 40)
    expected = run_json(source, str(data), "--backend", "reference")
    assert expected["matches"] and expected["final_state"]
    assert pick(run_json(source, str(data), "--backend", "cuda-emulated")) == pick(expected)
    machine = sample_machine(sample)  # the runner `boostfsm run` built, from the cache
    runner = cached_cuda_runner(project_request(machine, source), emulated=True)
    short = tmp_path / "short"
    short.write_bytes(data.read_bytes()[:300])
    expected_short = run_json(source, str(short), "--backend", "reference")
    for scheme in ("seq", "enum", "spec", "auto"):
        for path, chunks, want in ((data, "0", expected), (data, "3", expected),
                                   (data, "200", expected), (short, "300", expected_short)):
            done = subprocess.run([str(runner), str(path), "--scheme", scheme, "--chunks",
                                   chunks, "--matches", "--json"],
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            gpu = json.loads(done.stdout)
            assert pick(gpu) == pick(want), (scheme, chunks, gpu["reason"])
            assert gpu["scheme"] == scheme or scheme == "auto"  # (auto: its own test)


def pick(result: dict) -> dict:
    return {key: result[key] for key in COMPARED}


def test_compile_for_the_emulated_device_builds_a_runner_and_a_module(tmp_path) -> None:
    require_cxx()
    done = boostfsm("compile", str(SAMPLES / "div7.fsm"), "-o", "d7", "--backend",
                    "cuda-emulated", "--python", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    build = tmp_path / "d7" / "build"
    (tmp_path / "n").write_bytes(b"0123456789" * 30)
    expected = run_json(str(SAMPLES / "div7.fsm"), str(tmp_path / "n"), "--backend", "reference")
    out = subprocess.run([str(build / "div7_run"), str(tmp_path / "n"), "--json", "--scheme",
                          "spec"], capture_output=True, text=True, timeout=60)
    result = json.loads(out.stdout)
    assert result["counts"] == expected["counts"] and result["scheme"] == "spec"
    assert "div7.cu" in {p.name for p in (tmp_path / "d7" / "src").iterdir()}
    module = subprocess.run([sys.executable, "-c", DLPACK_SCRIPT, str(tmp_path / "n")],
                            cwd=build, capture_output=True, text=True, timeout=60)
    assert module.returncode == 0, module.stderr
    for line in module.stdout.splitlines()[:2]:  # a bytes object, then a DLPack tensor
        final, counts, scheme, matches = json.loads(line)
        assert (final, counts, scheme) == (expected["final_state"], expected["counts"], "enum")
        assert matches == [[offset, 0] for offset, _ in expected["matches"]]
    assert module.stdout.splitlines()[2] == "div7.run needs a C-contiguous tensor"
    # run_device over device memory, from C++ (no framework holds emulated device memory)
    printed = run_device_program(tmp_path / "d7", "div7", DIV7_ON_DEVICE, tmp_path / "n",
                                 tmp_path)
    assert printed.split() == [str(expected["counts"]["divisible"]),
                               str(len(expected["matches"])), expected["final_state"]]


DLPACK_SCRIPT = """
import json, sys
import numpy as np
import div7

class Tensor:  # DLPack alone, no buffer protocol
    def __init__(self, array): self.array = array
    def __dlpack__(self, **kwargs): return self.array.__dlpack__(**kwargs)
    def __dlpack_device__(self): return self.array.__dlpack_device__()

data = open(sys.argv[1], "rb").read()
for given in (data, Tensor(np.frombuffer(bytearray(data), np.uint8))):
    r = div7.run(given, scheme="enum", matches=True)
    print(json.dumps([r["final_state"], r["counts"], r["scheme"], r["matches"].tolist()]))
try:
    div7.run(Tensor(np.arange(10, dtype=np.uint16)[::2]))
except ValueError as error:
    print(error)
"""

DIV7_ON_DEVICE = r"""
  options.matches = true;
  const div7::Result result = div7::run_device(device, text.size(), options);
  std::printf("%llu %zu %s\n", (unsigned long long)result.counts[0], result.matches.size(),
              div7::state_name(result.final_state));"""

DEVICE_MAIN = r"""
#include <cuda_runtime.h>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>
#include "NAME.hpp"
int main(int, char** argv) {
  std::ifstream file(argv[1], std::ios::binary);
  const std::vector<char> text((std::istreambuf_iterator<char>(file)), {});
  uint8_t* device = nullptr;
  if (cudaMalloc(&device, text.size()) != cudaSuccess) return 1;
  cudaMemcpy(device, text.data(), text.size(), cudaMemcpyHostToDevice);
  NAME::Options options;
BODY
  return cudaFree(device) != cudaSuccess;
}
"""


def run_device_program(project: Path, name: str, body: str, data: Path, work: Path) -> str:
    """A C++ program that copies `data` to emulated device memory and runs `body` (which calls
    NAME::run_device on `device`), linked with the project's library; what it prints."""
    source = work / "device.cpp"
    source.write_text(DEVICE_MAIN.replace("BODY", body).replace("NAME", name))
    subprocess.run(["c++", "-std=c++17", "-DPF_CUDA_EMULATION",
                    f"-I{project / 'runtime/ccn/cuda_emulated'}", f"-I{project / 'runtime'}",
                    f"-I{project / 'include'}", str(source),
                    str(project / "build" / f"lib{name}.a"), "-lpthread", "-o",
                    str(work / "device")], check=True, timeout=120)
    done = subprocess.run([str(work / "device"), str(data)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_runners_time_is_the_devices(tmp_path) -> None:
    """With every stream late (PF_EMU_LAZY=all: work runs only when something waits for it)
    and each operation taking 3 ms, a run's time covers its operations: the clock stops
    once the results are on the host. A run queues at least its input's copy, the tables'
    copies (8) and three kernels (speculate, mark, count)."""
    require_cxx()
    runner = cached_cuda_runner(project_request(sample_machine("div7"),
                                                str(SAMPLES / "div7.fsm")), emulated=True)
    (tmp_path / "n").write_bytes(b"0123456789" * 100)
    env = {**os.environ, "PF_EMU_LAZY": "all", "PF_EMU_OPERATION_US": "3000"}
    done = subprocess.run([str(runner), str(tmp_path / "n"), "--scheme", "spec", "--json"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["seconds"] >= 12 * 0.003, done.stdout


@pytest.mark.parametrize("name", ["weblog", "words"])
def test_compile_for_a_gpu_builds_with_nvcc(name: str, tmp_path) -> None:
    require_nvcc()
    (tmp_path / "words.fsm").write_text(ENGINE_SET)
    source = tmp_path / "words.fsm" if name == "words" else SAMPLES / f"{name}.fsm"
    done = boostfsm("compile", str(source), "-o", "out", "--backend", "cuda", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "build" / f"{name}_run").exists()


@pytest.mark.parametrize("args, message", [
    (("run", str(SAMPLES / "tokens" / "json_tokens.fsm"), "in", "--backend", "cuda-emulated",
      "--scheme", "enum"),
     "boostfsm: error: --scheme enum does not run on the GPU (its schemes: auto, seq, spec)\n"),
    (("run", str(SAMPLES / "div7.fsm"), "in", "--backend", "cuda-emulated", "--scheme", "hspec"),
     "boostfsm: error: --scheme hspec does not run on the GPU (its schemes: auto, seq, enum, "
     "spec)\n"),
])
def test_what_the_gpu_does_not_run_is_refused_before_a_build(args, message, tmp_path) -> None:
    """A scheme the GPU does not run for the machine's kind: one line, nothing built."""
    (tmp_path / "in").write_bytes(b"first river")
    done = boostfsm(*args, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", message)
    assert not (tmp_path / "out").exists()


def test_backend_cuda_without_a_gpu_says_what_runs_instead(tmp_path) -> None:
    if gpu_present():
        pytest.skip("this machine has a GPU")
    (tmp_path / "in").write_bytes(b"7")
    done = boostfsm("run", str(SAMPLES / "div7.fsm"), "in", "--backend", "cuda", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        1, "boostfsm: error: --backend cuda needs an NVIDIA GPU; --backend cuda-emulated runs "
           "the same code on the emulated device\n")
