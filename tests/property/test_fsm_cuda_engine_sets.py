"""Pattern sets of several engines on the GPU (cpp_runtime/fsm/cuda/engine_set_run.cuh) on the
emulated device give the reference executor's final states, counts and matches, as the CPU
engine-set runs do (test_fsm_engine_sets.py): DFA engines under every GPU scheme and NFA
engines bit-parallel (bounded ones in chunks from their lookback, unbounded in one), chunk
counts 1, 2, 7, 64 and more than the input's bytes, inputs in host and in device memory
(with every stream late), prefiltered engines (hits, ranges, confirmations). The driver
also compiles with nvcc (test_fsm_cuda_schemes.py)."""

from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from parafuse.emitters.fsm.cuda_driver import cuda_engine_set_driver
from parafuse.fsm_compiler.engines import nfa_engine
from parafuse.fsm_compiler.engines.engines import EngineSet, engine_kind
from parafuse.fsm_compiler.engines.nfa_engine import BLOCK_WIDTHS
from tests.property.conftest import DATA, sources
from tests.property.fsm_cpp_driver import configurations
from tests.property.fsm_engine_set_checks import assert_engine_set_equal_reference
from tests.property.fsm_regex_strategies import HAYSTACK_BYTES, hyperscan_refusal
from tests.property.test_fsm_engine_sets import SETTINGS, compile_set, pattern_lists
from tests.property.test_fsm_real_rulesets import planted_examples
from tests.required_tools import require_module

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


# Random draws (SETTINGS): Hyperscan refuses or one DFA holds many pattern lists, and one
# run filtered 50 of 59 draws, which is no fault of the code under test.
@settings(SETTINGS, max_examples=10,
          suppress_health_check=[*SETTINGS.suppress_health_check, HealthCheck.filter_too_much])
@given(patterns=pattern_lists, data=st.lists(st.sampled_from(HAYSTACK_BYTES), max_size=300),
       max_states=st.sampled_from([3, 8, 30, 60]), block_width=st.sampled_from(BLOCK_WIDTHS))
def test_split_sets_on_the_gpu_equal_the_reference(patterns, data, max_states, block_width,
                                                   tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(nfa_engine, "BLOCK_WIDTHS", (block_width,))
    assume(hyperscan_refusal(patterns) is None)
    machine = compile_set(patterns, max_states)
    assume(isinstance(machine, EngineSet))
    event("+".join(sorted({engine_kind(engine) for engine in machine.engines})))
    check_on_gpu(machine, bytes(data), tmp_path)


def test_prefiltered_engines_equal_the_reference(tmp_path) -> None:
    """Patterns with literal factors behind a prefilter: hits everywhere, hits that merge into
    one range, hits whose confirmation fails, none at all, and a pattern's ranges in
    several jobs that each find the same match (listed once)."""
    patterns = [("secret_[a-z0-9]{6,20}", ""), ("tok(en)?_[A-F0-9]{4}x", ""), ("k[0-9]{4}", ""),
                ("key=[^ \\n]+;", ""), ("ab", "")]
    engine_set = compile_set(patterns, 8)
    assert "prefilter" in [engine_kind(engine) for engine in engine_set.engines]
    rng = np.random.default_rng(4)
    planted = b"".join(rng.choice([b"secret_abc123 ", b"token_0A1Fx", b"k12345 ", b"key=v;",
                                   b"key=x y;", b"secret_", b"tok_ABCDx", b"zz ", b"\n"], 400))
    chained = b"key=" * 200 + b";"  # 200 ranges, 4 jobs, each finding the one match
    for data in (b"", b"secret_abcdef", planted, b"secret_" * 300 + b"abcdefg",
                 b"no factor here " * 50, chained):
        check_on_gpu(engine_set, data, tmp_path)



def test_real_rule_sets_on_the_gpu(rebar_set, nosey_set, tmp_path) -> None:
    """rebar's regexes over sherlock.txt (DFA, NFA and prefiltered engines) and Nosey Parker's
    first rules over prose with their examples planted (prefiltered, with assertions)."""
    require_module("hyperscan")
    configs = [f"{scheme}:1:{chunks}" for scheme in GPU_SCHEMES for chunks in (1, 7, 64)]
    rules, machine = rebar_set
    data = (DATA / "rebar" / "sherlock_head.txt").read_bytes()[:12_000]
    _, _, matches = assert_engine_set_equal_reference(
        machine, data, tmp_path, configs, train=data, driver=cuda_engine_set_driver())
    assert [tuple(match) for match in matches] == sources.hyperscan_matches(rules, data)
    rules, machine = nosey_set
    data = planted_examples(rules)
    _, _, matches = assert_engine_set_equal_reference(
        machine, data, tmp_path, configs, driver=cuda_engine_set_driver())
    assert [tuple(match) for match in matches] == sources.hyperscan_matches(rules, data)


def test_an_nfa_wider_than_a_threads_own_sets_equals_the_reference(tmp_path) -> None:
    """602 positions (10 words, past the 8 a thread keeps in arrays of its own): the sets
    live in the scratch array."""
    engine_set = compile_set([("ab", ""), ("q[^x]{600}z", "")], 8)
    widths = [(engine.position_count + 63) // 64 for engine in engine_set.engines
              if engine_kind(engine) == "nfa"]
    assert widths and max(widths) > 8, widths
    data = b"ab q" + b"y" * 600 + b"z q" + b"y" * 300 + b"x" + b"y" * 299 + b"z ab"
    _, counts, _ = check_on_gpu(engine_set, data, tmp_path)
    assert counts == [2, 1], counts
