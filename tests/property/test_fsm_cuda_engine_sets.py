"""Pattern sets of several engines on the GPU (cpp_runtime/fsm/cuda/engine_set_run.cuh) on the
emulated device give the reference executor's final states, counts and matches, as the CPU
engine-set runs do (test_fsm_engine_sets.py): DFA engines under every GPU scheme and NFA
engines bit-parallel (bounded ones in chunks from their lookback, unbounded in one), chunk
counts 1, 2, 7, 64 and more than the input's bytes, inputs in host and in device memory
(with every stream late). Sets with a prefiltered engine are refused in one line. The
driver also compiles with nvcc."""

from __future__ import annotations

import os
import subprocess

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from parafuse.emitters.fsm.cuda_driver import cuda_engine_set_driver
from parafuse.emitters.fsm.engine_set_blob import engine_set_blob
from parafuse.fsm_compiler.engines import nfa_engine
from parafuse.fsm_compiler.engines.engines import EngineSet, engine_kind
from parafuse.fsm_compiler.engines.nfa_engine import BLOCK_WIDTHS
from parafuse.fsm_compiler.pipeline import analyse_for_project
from tests.property.fsm_cpp_driver import configurations
from tests.property.fsm_engine_set_checks import assert_engine_set_equal_reference
from tests.property.fsm_regex_strategies import HAYSTACK_BYTES, hyperscan_refusal
from tests.property.test_fsm_engine_sets import SETTINGS, compile_set, pattern_lists
from tests.required_tools import require_nvcc

GPU_SCHEMES = ("seq", "enum", "spec", "auto")
# With max_states 8: DFA engines, a bounded NFA (windows) and an unbounded one whose
# assertions are at its start, in its middle (conditional edges) and at its end
MIXED = [("ab", ""), ("cd", ""), ("ef", ""), ("[a-f]{3}x", ""), ("[ab][^x]{3}y", ""),
         ("a.{3,9}b", ""), ("\\bc[^q]*d$", "m"), ("^$", "m"), ("e\\b[ a-z]{2,9}\\bf[a-z]*$", "")]


def check_on_gpu(engine_set: EngineSet, data: bytes, work, flags: tuple[str, ...] = (),
                 env_lazy: bool = False) -> tuple:
    configs = configurations(len(data), (1,), GPU_SCHEMES)
    if env_lazy:
        os.environ["PF_EMU_LAZY"] = "all"
    try:
        return assert_engine_set_equal_reference(engine_set, data, work, configs,
                                                 driver=cuda_engine_set_driver(), flags=flags)
    finally:
        os.environ.pop("PF_EMU_LAZY", None)


def mixed_input(length: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    return bytes(rng.choice(list(b"abcdefxyq \n-"), length))


def test_a_set_of_every_gpu_engine_kind_equals_the_reference(tmp_path) -> None:
    engine_set = compile_set(MIXED, 8)
    kinds = [engine_kind(engine) for engine in engine_set.engines]
    assert "dfa" in kinds and "nfa" in kinds, kinds
    assert {e.max_length is None for e in engine_set.engines if engine_kind(e) == "nfa"} == \
        {True, False}
    reported = set()
    for data in (b"", b"a", mixed_input(3000, 1), b"ab\ncd\n" * 50 + b"c" + b"x" * 500 + b"d",
                 b"xe abf e  f\ne yz fz", b"e  fz e xyfq"):
        _, _, matches = check_on_gpu(engine_set, data, tmp_path)
        reported |= {tag for _, tag in matches}
    assert len(reported) >= 6, reported  # DFA and NFA engines report


def test_device_memory_input_with_late_streams(tmp_path) -> None:
    engine_set = compile_set(MIXED, 8)
    check_on_gpu(engine_set, mixed_input(2000, 2), tmp_path, ("--on-device",), env_lazy=True)


@settings(SETTINGS, max_examples=10)
@given(patterns=pattern_lists, data=st.lists(st.sampled_from(HAYSTACK_BYTES), max_size=300),
       max_states=st.sampled_from([3, 8, 30, 60]), block_width=st.sampled_from(BLOCK_WIDTHS))
def test_split_sets_on_the_gpu_equal_the_reference(patterns, data, max_states, block_width,
                                                   tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(nfa_engine, "BLOCK_WIDTHS", (block_width,))
    assume(hyperscan_refusal(patterns) is None)
    machine = compile_set(patterns, max_states)
    assume(isinstance(machine, EngineSet))
    assume(all(engine_kind(engine) != "prefilter" for engine in machine.engines))
    check_on_gpu(machine, bytes(data), tmp_path)


def test_a_prefiltered_engine_is_refused_in_one_line(tmp_path) -> None:
    engine_set = compile_set([("secret_[a-z0-9]{20}", ""), ("token_[A-F0-9]{30}x", ""),
                              ("k[0-9]{4}", "")], 8)
    kinds = [engine_kind(engine) for engine in engine_set.engines]
    assert "prefilter" in kinds, kinds
    index = kinds.index("prefilter")
    blob, data = tmp_path / "set.blob", tmp_path / "in"
    blob.write_bytes(engine_set_blob(engine_set, analyse_for_project(engine_set, None)))
    data.write_bytes(b"secret_x")
    done = subprocess.run([str(cuda_engine_set_driver()), str(blob), "3", str(data), "seq:1:1"],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"fsm_cuda_engine_set_driver: error: engine {index} of this pattern "
                           "set is prefiltered, which does not run on the GPU yet\n")


def test_the_engine_set_driver_compiles_with_nvcc() -> None:
    require_nvcc()
    from parafuse.emitters.toolchain.nvidia import find_nvcc

    assert cuda_engine_set_driver(emulated=False, nvcc=str(find_nvcc())).exists()
