"""A token set's GPU project through `boostfsm`: `run --backend cuda-emulated` gives the
reference tokenizer's counts and tokens, for every token-set sample; so does its runner in
every GPU scheme, with chunk boundaries after every byte of a small input. `compile
--backend cuda-emulated --python` builds the library, runner and module (host buffers and
DLPack tensors in, numpy records out; run_device from C++), and `cmake --install` gives a
package an application finds with find_package; nvcc builds the project for a GPU where the
machine has it, and an application in C++ alone links it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from parafuse.emitters.fsm.cuda_token_project import cached_cuda_token_runner
from parafuse.emitters.toolchain.cmake import Toolchain, build
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.conftest import SAMPLES
from tests.e2e.test_fsm_cuda_project import boostfsm, run_device_program
from tests.required_tools import require_cxx, require_nvcc

TOKEN_SAMPLES = ("clexer_tokens", "json_tokens", "log_tokens")
COMPARED = ("machine", "bytes", "end", "counts", "tokens")


def sample_input(name: str, size: int) -> bytes:
    sys.path.insert(0, str(SAMPLES / "tokens"))
    import token_inputs

    return token_inputs.GENERATORS[name](size)


def run_json(*args: str) -> dict:
    done = boostfsm("run", *args, "--tokens", "--json")
    assert done.returncode == 0, done.stderr
    return {key: value for key, value in json.loads(done.stdout).items() if key in COMPARED}


@pytest.mark.parametrize("sample", TOKEN_SAMPLES)
def test_gpu_runs_equal_the_reference(sample: str, tmp_path) -> None:
    require_cxx()
    source = str(SAMPLES / "tokens" / f"{sample}.fsm")
    data, short = tmp_path / "input", tmp_path / "short"
    data.write_bytes(sample_input(sample, 20000))
    short.write_bytes(data.read_bytes()[:300])
    expected = run_json(source, str(data), "--backend", "reference")
    assert expected["tokens"]
    assert run_json(source, str(data), "--backend", "cuda-emulated") == expected
    expected_short = run_json(source, str(short), "--backend", "reference")
    token_set = compile_file(SourceFile(source, open(source).read())).machines[0]
    runner = cached_cuda_token_runner(token_set, source, emulated=True)  # `run` built it
    for scheme in ("seq", "spec", "auto"):
        for path, chunks, want in ((data, "0", expected), (data, "7", expected),
                                   (short, "305", expected_short)):
            done = subprocess.run([str(runner), str(path), "--scheme", scheme, "--chunks",
                                   chunks, "--tokens", "--json"],
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            gpu = json.loads(done.stdout)
            assert {key: gpu[key] for key in COMPARED} == want, (scheme, chunks, gpu["reason"])
            assert gpu["scheme"] == (scheme if scheme != "auto" else "spec")


def test_compile_for_the_emulated_device_builds_a_runner_and_a_module(tmp_path) -> None:
    require_cxx()
    source = str(SAMPLES / "tokens" / "json_tokens.fsm")
    done = boostfsm("compile", source, "-o", "js", "--backend", "cuda-emulated", "--python",
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    build = tmp_path / "js" / "build"
    (tmp_path / "n").write_bytes(sample_input("json_tokens", 5000))
    expected = run_json(source, str(tmp_path / "n"), "--backend", "reference")
    kinds = list(expected["counts"])
    want = [[start, end, kinds.index(kind)] for start, end, kind in expected["tokens"]]
    assert "json_tokens.cu" in {p.name for p in (tmp_path / "js" / "src").iterdir()}
    module = subprocess.run([sys.executable, "-c", DLPACK_SCRIPT, str(tmp_path / "n")],
                            cwd=build, capture_output=True, text=True, timeout=60)
    assert module.returncode == 0, module.stderr
    for line in module.stdout.splitlines()[:2]:  # a bytes object, then a DLPack tensor
        counts, scheme, tokens = json.loads(line)
        assert (counts, scheme, tokens) == (expected["counts"], "spec", want)
    printed = run_device_program(tmp_path / "js", "json_tokens", TOKENS_ON_DEVICE,
                                 tmp_path / "n", tmp_path)
    assert printed.split() == [str(len(want)), str(want[-1][1]), "spec"]


DLPACK_SCRIPT = """
import json, sys
import numpy as np
import json_tokens

class Tensor:  # DLPack alone, no buffer protocol
    def __init__(self, array): self.array = array
    def __dlpack__(self, **kwargs): return self.array.__dlpack__(**kwargs)
    def __dlpack_device__(self): return self.array.__dlpack_device__()

data = open(sys.argv[1], "rb").read()
for given in (data, Tensor(np.frombuffer(bytearray(data), np.uint8))):
    r = json_tokens.run(given, tokens=True)
    t = r["tokens"]
    rows = [[int(s), int(e), int(k)] for s, e, k in zip(t["start"], t["end"], t["kind"])]
    print(json.dumps([r["counts"], r["scheme"], rows]))
"""

TOKENS_ON_DEVICE = r"""
  options.tokens = true;
  const json_tokens::Result result = json_tokens::run_device(device, text.size(), options);
  std::printf("%zu %llu %s\n", result.tokens.size(),
              (unsigned long long)result.tokens.back().end, result.scheme.c_str());"""


def test_compile_for_a_gpu_builds_with_nvcc(tmp_path) -> None:
    require_nvcc()
    done = boostfsm("compile", str(SAMPLES / "tokens" / "log_tokens.fsm"), "-o", "lt",
                    "--backend", "cuda", "--python", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "lt" / "build" / "log_tokens_run").exists()


APP = r"""
#include <cstdio>
#include <string>
#include "NAME.hpp"
int main() {
  const std::string text = "{\"a\": [1, true, \"x\"]}";
  NAME::Options options;
  options.tokens = true;
  const NAME::Result result =
      NAME::run(reinterpret_cast<const uint8_t*>(text.data()), text.size(), options);
  std::printf("%zu %s\n", result.tokens.size(), result.scheme.c_str());
  return 0;
}
"""


def _install_and_build_app(project: Path, name: str, tmp_path: Path) -> Path:
    """`cmake --install` of the project, then an application in C++ alone that finds it with
    find_package(NAME CONFIG) and links it; returns the application's path."""
    prefix, app = tmp_path / "prefix", tmp_path / "app"
    subprocess.run([Toolchain.current().tool("cmake"), "--install", str(project / "build"),
                    "--prefix", str(prefix)], check=True, capture_output=True, timeout=120)
    assert (prefix / "include" / f"{name}.hpp").exists()
    app.mkdir()
    (app / "main.cpp").write_text(APP.replace("NAME", name))
    (app / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(app LANGUAGES CXX)\n"
        f"find_package({name} CONFIG REQUIRED)\nadd_executable(app main.cpp)\n"
        f"target_link_libraries(app PRIVATE {name}::{name})\n")
    build(app, tmp_path / "app-build", Toolchain.current().cmake_args(mpi=False) +
          [f"-DCMAKE_PREFIX_PATH={prefix}"])
    return tmp_path / "app-build" / "app"


def test_an_installed_gpu_project_is_found_by_find_package(tmp_path) -> None:
    """On the emulated device the application runs: 11 tokens, by spec."""
    require_cxx()
    source = str(SAMPLES / "tokens" / "json_tokens.fsm")
    done = boostfsm("compile", source, "-o", "js", "--backend", "cuda-emulated", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    app = _install_and_build_app(tmp_path / "js", "json_tokens", tmp_path)
    ran = subprocess.run([str(app)], capture_output=True, text=True, timeout=60)
    assert (ran.returncode, ran.stdout) == (0, "11 spec\n"), ran.stderr


def test_an_installed_cuda_project_links_into_an_application(tmp_path) -> None:
    """Built by nvcc: the application (C++ alone) links the CUDA runtime through the package."""
    require_nvcc()
    source = str(SAMPLES / "tokens" / "json_tokens.fsm")
    done = boostfsm("compile", source, "-o", "js", "--backend", "cuda", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _install_and_build_app(tmp_path / "js", "json_tokens", tmp_path).exists()
