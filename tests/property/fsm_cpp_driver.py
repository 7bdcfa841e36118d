"""Run machines through the C++ schemes with the table-driven driver (one build for all).

`driver_results` writes the machine's blob and the input to files, runs every
configuration in one process, and returns one result per configuration;
`reference_triple` is what every configuration must equal.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import subprocess
from pathlib import Path

import numpy as np

from parafuse.emitters.fsm.blob import machine_blob
from parafuse.emitters.fsm.project import ProjectRequest, table_driver
from parafuse.fsm_compiler.analysis.project_analysis import untrained_analysis
from parafuse.fsm_compiler.compiled import CompiledMachine
from parafuse.fsm_compiler.options import MachineOptions
from parafuse.fsm_compiler.pipeline import analyse_for_project
from parafuse.fsm_compiler.reference_executor import run_reference
from parafuse.grammar.diagnostics import Location

SCHEMES = ("seq", "enum", "fused", "spec", "hspec", "auto")
THREADS = (1, 2, 3)


def project_request(machine: CompiledMachine, source_name: str, **kwargs) -> ProjectRequest:
    """A project request with the analysis `boostfsm compile` makes without --train."""
    return ProjectRequest(machine, source_name, analyse_for_project(machine, None), **kwargs)


# Chunks of one byte at most (more chunks than bytes) on inputs up to this size; longer ones
# get this many chunks, so that a 128 KiB input is not 131,000 speculations of its own.
MOST_CHUNKS = 4099


def configurations(input_bytes: int, threads=THREADS, schemes=SCHEMES) -> list[str]:
    chunk_counts = (1, 2, 7, 64, min(input_bytes + 5, MOST_CHUNKS))
    return [f"{scheme}:{count}:{chunks}" for scheme in schemes for count in threads
            for chunks in chunk_counts]


def reference_triple(machine: CompiledMachine, data: bytes) -> tuple:
    result = run_reference(machine, data, True)
    return result.final_state, list(result.counts), [list(match) for match in result.matches]


def blob_of(machine: CompiledMachine) -> bytes:
    """The machine's blob, built once per machine content (its fused DFA takes a fraction of
    a second to explore, and tests run one machine over many inputs)."""
    content = hashlib.sha256(pickle.dumps(machine)).hexdigest()
    if content not in _BLOBS:
        while len(_BLOBS) >= 8:
            _BLOBS.pop(next(iter(_BLOBS)))
        _BLOBS[content] = machine_blob(machine, untrained_analysis(machine))
    return _BLOBS[content]


_BLOBS: dict[str, bytes] = {}  # by the machine's content, the oldest dropped first


def driver_results(machine: CompiledMachine, data: bytes, configs: list[str], work: Path,
                   driver: Path | None = None, env: dict | None = None,
                   matches: bool = True, profile: bool = False) -> list[dict]:
    blob, data_path = work / f"{machine.name}.blob", work / f"{machine.name}.input"
    blob.write_bytes(blob_of(machine))
    data_path.write_bytes(data)
    done = subprocess.run([str(driver or table_driver()), str(blob), str(data_path),
                           *(["--matches"] if matches else []),
                           *(["--profile"] if profile else []), *configs],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == len(configs)
    listed = [r["matches"] for r in results if isinstance(r.get("matches"), list)]
    for result in results:  # a list equal to the first listed one is printed "as first"
        if result.get("matches") == "as first":
            result["matches"] = listed[0]
    return results


def assert_all_equal_reference(machine: CompiledMachine, data: bytes, work: Path,
                               configs: list[str] | None = None, matches: bool = True,
                               **kwargs) -> list[dict]:
    """With `matches`, the visits are counted where matches are listed; without, by the
    counting kernels (cpp_runtime/fsm/core/count.hpp), so tests should run both. Returns the
    driver's result of each configuration."""
    expected = reference_triple(machine, data)
    if not matches:
        expected = expected[:2]
    configs = configs or configurations(len(data))
    results = driver_results(machine, data, configs, work, matches=matches, **kwargs)
    for config, result in zip(configs, results, strict=True):
        got = result["final_state"], result["counts"], result.get("matches")
        assert got[:len(expected)] == expected, f"{machine.name} {config} ({result['reason']})"
        if not config.startswith("auto"):
            assert result["scheme"] == config.split(":")[0].split("/")[0]  # SCHEME[/SIMD]
    return results


def random_machine(rng: np.random.Generator, states: int, classes: int, kind: str,
                   max_fused_states: int = 65536) -> CompiledMachine:
    """A random explicit machine: 'converging' (random targets) or 'permutation' (each
    class permutes the states, so paths never merge)."""
    if kind == "permutation":
        transitions = np.stack([rng.permutation(states) for _ in range(classes)], axis=1)
    else:
        transitions = rng.integers(0, states, (states, classes))
    tag_count = int(rng.integers(1, 4))
    state_tags = tuple(tuple(sorted(set(rng.choice(tag_count, int(rng.integers(1, tag_count + 1)))
                                        .tolist()))) if rng.random() < 0.3 else ()
                       for _ in range(states))
    byte_class = np.sort(rng.integers(0, classes, 256)).astype(np.uint8)
    byte_class[:classes] = np.arange(classes)  # every class is used
    return CompiledMachine(
        name="random", kind="explicit", state_names=tuple(f"s{i}" for i in range(states)),
        start=int(rng.integers(0, states)), byte_class=byte_class,
        transitions=transitions.astype(np.int32),
        tag_names=tuple(f"t{i}" for i in range(tag_count)), state_tags=state_tags,
        options=MachineOptions(max_fused_states=max_fused_states, lookback=8),
        location=Location("random.fsm", 1, 1))
