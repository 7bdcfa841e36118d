"""`coconetc run|build --backend cuda-emulated`: the CUDA backend's code on the emulated
device from the command line (the system's C++ compiler and MPI, no CUDA toolkit), with the
options, outputs and errors of the other backends, and results equal to the reference's."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from parafuse.ccn_compiler.reference.tolerances import assert_close
from parafuse.cli.coconetc import main
from tests.backend_compare import load_results, sample_module
from tests.conftest import SAMPLES


def _run(*args: str):
    return CliRunner().invoke(main, ["run", *args], catch_exceptions=False)


def test_run_matches_the_reference_from_the_command_line(tmp_path) -> None:
    module = sample_module("lamb")
    program = module.programs["lamb"]
    common = [str(SAMPLES / "lamb.ccn"), "-n", "2", "--size", "N=1021", "--random",
              "--seed", "5", "--iters", "2", "--schedule", "fused"]
    done = _run(*common, "--backend", "cuda-emulated", "--outputs", str(tmp_path / "emu"),
                "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["backend"] == "cuda-emulated" and report["schedule"] == "fused"
    done = _run(*common, "--backend", "reference", "--outputs", str(tmp_path / "ref"))
    assert done.exit_code == 0, done.output
    actual = load_results(tmp_path / "emu", program, 2)
    expected = load_results(tmp_path / "ref", program, 2)
    assert actual.keys() == expected.keys()
    for name in actual:
        for rank in range(2):
            assert_close(actual[name][rank], np.asarray(expected[name][rank]), "f32",
                         f"{name} rank {rank}")


def test_run_reports_a_bad_size_like_the_other_backends(tmp_path) -> None:
    done = _run(str(SAMPLES / "sgd.ccn"), "-n", "1", "--size", "N=x", "--random",
                "--backend", "cuda-emulated", "--outputs", str(tmp_path / "out"))
    cpu = _run(str(SAMPLES / "sgd.ccn"), "-n", "1", "--size", "N=x", "--random",
               "--backend", "cpu", "--outputs", str(tmp_path / "out"))
    assert done.exit_code == cpu.exit_code == 1

    def said(result, backend: str) -> list[str]:  # less a build's notice, when one ran
        return [line.replace(backend, "B") for line in result.output.splitlines()
                if not line.startswith("coconetc: compiling ")]

    assert said(done, "cuda-emulated") == said(cpu, "cpu")


def test_build_writes_and_builds_the_project(tmp_path) -> None:
    out = tmp_path / "sgd"
    done = CliRunner().invoke(main, ["build", str(SAMPLES / "sgd.ccn"), "--backend",
                                     "cuda-emulated", "-o", str(out)])
    assert done.exit_code == 0, done.output
    notice, built = done.output.splitlines()[:2]  # the build's one line (stderr), then ours
    assert notice.startswith(f"coconetc: compiling {out} ") and " done in " in notice, notice
    assert built.startswith(f"built {out}/build/sgd_run (CUDA on the emulated device)")
    assert (out / "build" / "sgd_run").exists()
    assert (out / "include" / "ccn" / "cuda_emulated" / "cuda_runtime.h").exists()
    refused = CliRunner().invoke(main, ["build", str(SAMPLES / "sgd.ccn"), "--backend",
                                        "cuda-emulated", "--python", "-o", str(tmp_path / "p")])
    assert refused.exit_code == 1
    assert "--python is not available with --backend cuda-emulated" in refused.output
