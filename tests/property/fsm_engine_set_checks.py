"""Check pattern sets compiled to several engines: the reference executor against
Hyperscan, and the C++ engine-set driver (one build for every set) against the
reference under every scheme, thread count and chunking, with the matches listed and
counted only (a run that only counts may take other paths)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from parafuse.emitters.fsm.engine_set_blob import engine_set_blob
from parafuse.emitters.fsm.project import engine_set_driver
from parafuse.fsm_compiler.engines.engine_set_reference import run_engine_set
from parafuse.fsm_compiler.engines.engines import EngineSet
from parafuse.fsm_compiler.pipeline import analyse_for_project
from tests.property.fsm_cpp_driver import configurations


def reference_triple(engine_set: EngineSet, data: bytes) -> tuple:
    result = run_engine_set(engine_set, data, True)
    return result.final_state, list(result.counts), [list(match) for match in result.matches]


def driver_results(engine_set: EngineSet, data: bytes, configs: list[str], work: Path,
                   train: bytes | None = None, runs: tuple[bool, ...] = (True,),
                   driver: Path | None = None, flags: tuple[str, ...] = ()
                   ) -> list[list[dict]]:
    """The driver's results for every configuration, once per entry of `runs` (True:
    with --matches, False: counts only); the blob is written once. `driver`: another
    driver of the same command line (the GPU's), with its `flags`."""
    blob, data_path = work / "set.blob", work / "set.input"
    blob.write_bytes(engine_set_blob(engine_set, analyse_for_project(engine_set, train)))
    data_path.write_bytes(data)
    all_results = []
    for matches in runs:
        done = subprocess.run([str(driver or engine_set_driver()), str(blob),
                               str(len(engine_set.tag_names)), str(data_path),
                               *(["--matches"] if matches else []), *flags, *configs],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        results = [json.loads(line) for line in done.stdout.splitlines()]
        assert len(results) == len(configs)
        all_results.append(results)
    return all_results


def assert_engine_set_equal_reference(engine_set: EngineSet, data: bytes, work: Path,
                                      configs: list[str] | None = None,
                                      train: bytes | None = None, driver: Path | None = None,
                                      flags: tuple[str, ...] = ()) -> tuple:
    """Every configuration's (final states, counts, matches) equal the reference's."""
    expected = reference_triple(engine_set, data)
    configs = configs or configurations(len(data))
    listed, counted = driver_results(engine_set, data, configs, work, train, (True, False),
                                     driver, flags)
    for config, result in zip(configs, listed, strict=True):
        got = result["final_state"], result["counts"], result["matches"]
        assert got == expected, f"{config} ({result['reason']})"
        if not config.startswith("auto"):
            assert set(result["scheme"].split("+")) <= {config.split(":")[0], "nfa"}, result
    for config, result in zip(configs, counted, strict=True):
        got = result["final_state"], result["counts"]
        assert got == expected[:2], f"{config}, counts only ({result['reason']})"
    return expected
