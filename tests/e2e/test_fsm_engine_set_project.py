"""A pattern set of several engines as a generated project: `boostfsm run --backend cpp`
prints the reference's JSON (final_state a list, null for the NFA and prefiltered
engines), under every
scheme, and so does the Python module; `boostfsm analyze` lists the engines."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from parafuse.emitters.fsm.project import cached_project
from parafuse.fsm_compiler.analysis.simd_fit import cpu_simd_paths
from parafuse.fsm_compiler.pipeline import compile_file
from parafuse.grammar.diagnostics import SourceFile
from tests.property.fsm_cpp_driver import project_request
from tests.required_tools import require_cxx

BOOSTFSM = str(Path(sys.executable).parent / "boostfsm")
SOURCE = """options { max_states 40 }
patterns words {
    one    /first/
    two    /sec[a-z]nd\\b/
    river  /Tom.{3,6}river|river.{3,6}Tom$/m
    three  /thi?rd/i
    window /[ab][^x]{6}y/
    short  /[a-c]{2}x/
}
"""
COMPARED = ("machine", "bytes", "final_state", "counts", "matches")


def boostfsm(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([BOOSTFSM, *args], capture_output=True, text=True, timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("engine_set")
    (folder / "words.fsm").write_text(SOURCE)
    text = b"first second secxnd2 THIRD Tom rides river,  Tom\nTom---river b123456y cax " * 200
    (folder / "words.txt").write_bytes(text + b"river--Tom\n")
    return folder / "words.fsm", folder / "words.txt"


@pytest.mark.slow
def test_engine_set_project_runs_like_the_reference(files) -> None:
    require_cxx()
    source, data = files
    reference = json.loads(boostfsm("run", str(source), str(data), "--backend", "reference",
                                    "--matches", "--json").stdout)
    assert len(reference["final_state"]) > 2 and reference["final_state"][-1] is None
    assert all(reference["counts"].values())
    machine = compile_file(SourceFile(str(source), source.read_text())).machines[0]
    # the build of test_fsm_mpi_sets (same name, M::M_mpi included): one build for both,
    # and for `boostfsm run`, which finds it
    project = cached_project(project_request(machine, source.name, python=True), mpi=True)
    done = boostfsm("run", source.name, str(data), "--matches", "--json", cwd=source.parent)
    assert json.loads(done.stdout)["final_state"] == reference["final_state"], done.stderr
    runner = project / "build" / "words_run"
    for scheme in ("seq", "enum", "fused", "spec", "hspec", "auto"):
        done = subprocess.run([str(runner), str(data), "--scheme", scheme, "--threads", "2",
                               "--chunks", "9", "--matches", "--json"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert {key: result[key] for key in COMPARED} == \
            {key: reference[key] for key in COMPARED}, scheme
        assert "engine 0 (dfa" in result["reason"] and "(nfa, nfa)" in result["reason"]
        assert "(prefilter, " in result["reason"]
    # Counting alone, the DFA engine (4 states) and the prefilter's literal DFA (20 states)
    # run SIMD enumeration with the kernels the library compiled for each of their fits
    # (20 states: AVX2's composed shuffles or VBMI).
    if "avx2" in cpu_simd_paths():
        done = subprocess.run([str(runner), str(data), "--scheme", "enum", "--threads", "2",
                               "--json"], capture_output=True, text=True, timeout=60)
        reason = json.loads(done.stdout)["reason"]
        assert reason.count("SIMD enumeration (") == 2, reason
        assert "compiled for" not in reason, reason
    sys.path.insert(0, str(project / "build"))
    try:
        module = importlib.import_module("words")
    finally:
        sys.path.pop(0)
    result = module.run(data.read_bytes(), threads=2, scheme="spec", matches=True)
    assert result["final_state"] == reference["final_state"]
    assert [[int(m["offset"]), module.tags[m["tag"]]]
            for m in result["matches"]] == reference["matches"]


def test_analyze_lists_the_engines(files) -> None:
    source, data = files
    done = boostfsm("analyze", str(source), "--input", str(data), "--json")
    assert done.returncode == 0, done.stderr
    (analysis,) = json.loads(done.stdout)
    kinds = [engine["kind"] for engine in analysis["engines"]]
    assert kinds == ["dfa", "nfa", "prefilter"]
    assert analysis["engines"][1]["patterns"] == ["window"]
    assert analysis["engines"][2]["patterns"] == ["one", "two", "river", "three"]
    assert analysis["engines"][2]["literals"] >= 4
    # `sec[a-z]nd\b` checks `nd` near each `sec` (a guard); `first` and `thi?rd` are
    # compared in place
    assert (analysis["engines"][2]["guarded_patterns"],
            analysis["engines"][2]["literal_patterns"]) == (1, 2)
    assert "near each factor end (a guard): 1;" in analysis["engines"][2]["auto_reason"]
    assert analysis["table_bytes"] == sum(e["table_bytes"] for e in analysis["engines"])
    # the DFA engine's row holds its own part of the set runner's reason
    assert analysis["engines"][0]["auto_scheme"] in ("seq", "enum", "fused", "spec", "hspec")
    assert "engine 1" not in analysis["engines"][0]["auto_reason"]
    text = boostfsm("analyze", str(source), "--input", str(data)).stdout
    assert "engine 0: dfa" in text and "auto picks:    nfa:" in text
    assert "engine 2: prefilter, 4 patterns" in text and "auto picks:    prefilter:" in text
