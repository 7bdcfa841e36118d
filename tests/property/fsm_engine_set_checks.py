"""Check pattern sets compiled to several engines: the reference executor against
Hyperscan, and the C++ engine-set driver (one build for every set) against the
reference under every scheme, thread count and chunking."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from parafuse.emitters.fsm.engine_set_blob import engine_set_blob
from parafuse.emitters.fsm.project import engine_set_driver
from parafuse.fsm_compiler.engine_set_reference import run_engine_set
from parafuse.fsm_compiler.engines import EngineSet
from parafuse.fsm_compiler.pipeline import analyse_for_project
from tests.property.fsm_cpp_driver import configurations


def reference_triple(engine_set: EngineSet, data: bytes) -> tuple:
    result = run_engine_set(engine_set, data, True)
    return result.final_state, list(result.counts), [list(match) for match in result.matches]


def driver_results(engine_set: EngineSet, data: bytes, configs: list[str], work: Path,
                   train: bytes | None = None) -> list[dict]:
    blob, data_path = work / "set.blob", work / "set.input"
    blob.write_bytes(engine_set_blob(engine_set, analyse_for_project(engine_set, train)))
    data_path.write_bytes(data)
    done = subprocess.run([str(engine_set_driver()), str(blob), str(len(engine_set.tag_names)),
                           str(data_path), "--matches", *configs],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == len(configs)
    return results


def assert_engine_set_equal_reference(engine_set: EngineSet, data: bytes, work: Path,
                                      configs: list[str] | None = None,
                                      train: bytes | None = None) -> tuple:
    """Every configuration's (final states, counts, matches) equal the reference's."""
    expected = reference_triple(engine_set, data)
    configs = configs or configurations(len(data))
    for config, result in zip(configs, driver_results(engine_set, data, configs, work, train),
                              strict=True):
        got = result["final_state"], result["counts"], result["matches"]
        assert got == expected, f"{config} ({result['reason']})"
        if not config.startswith("auto"):
            assert set(result["scheme"].split("+")) <= {config.split(":")[0], "nfa"}, result
    return expected
