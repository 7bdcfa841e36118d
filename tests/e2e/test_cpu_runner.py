"""The CPU runner's contract: .npy inputs, bad input found before any step (one line from
rank 0, non-zero exit, nothing written), and an abort rather than a hang on a failure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from parafuse.ccn_compiler.reference.tolerances import assert_close
from parafuse.emitters.toolchain.mpirun import launch_environment, mpirun_command, run_ranks
from tests.backend_compare import (
    load_results,
    sample_module,
    sample_project,
)
from tests.conftest import SAMPLES
from tests.schedule_compare import logical_values

N = 1001
COCONETC = Path(sys.executable).parent / "coconetc"


@pytest.fixture(scope="module")
def sgd():
    return sample_module("sgd"), sample_project("sgd")


def write_sgd_inputs(folder, ranks: int) -> None:
    folder.mkdir()
    rng = np.random.default_rng(3)
    for r in range(ranks):  # bf16 local gradients, stored as V2 bits
        g = rng.uniform(-1, 1, N).astype(ml_dtypes.bfloat16)
        np.save(folder / f"g.rank{r}.npy", g.view(np.dtype("V2")))
    np.save(folder / "w.npy", rng.uniform(-1, 1, N).astype(np.float32))
    np.save(folder / "buf.npy", rng.uniform(-1, 1, N).astype(np.float32))


def run_sgd(project, ranks: int, *args: str):
    return run_ranks(project, "sgd", ranks, ["--size", f"N={N}", *args])


@pytest.mark.parametrize("schedule", ["default", "zero", "fused"])
def test_npy_inputs_give_the_reference_results(sgd, schedule, tmp_path) -> None:
    module, project = sgd
    write_sgd_inputs(tmp_path / "in", 3)
    done = run_sgd(project, 3, "--schedule", schedule, "--inputs", str(tmp_path / "in"),
                   "--outputs", str(tmp_path / "cpu"), "--iters", "2", "--param", "lr=0.05")
    assert done.returncode == 0, done.stderr
    reference = subprocess.run(
        [str(COCONETC), "run", "samples/sgd.ccn", "--schedule", schedule, "-n", "3",
         "--size", f"N={N}", "--inputs", str(tmp_path / "in"), "--outputs",
         str(tmp_path / "ref"), "--iters", "2", "--param", "lr=0.05"],
        cwd=SAMPLES.parent, capture_output=True, text=True, env=launch_environment(1))
    assert reference.returncode == 0, reference.stderr
    program = module.scheduled_program("sgd", schedule)
    for name, _, _ in program.result_types():
        for r in range(3):
            cpu = np.load(tmp_path / "cpu" / f"{name}.rank{r}.npy")
            ref = np.load(tmp_path / "ref" / f"{name}.rank{r}.npy")
            assert_close(cpu, ref, "bf16", f"{schedule} {name} rank {r}")
    cpu_manifest, ref_manifest = (json.loads((tmp_path / side / "manifest.json").read_text())
                                  for side in ("cpu", "ref"))
    assert cpu_manifest["outputs"] == ref_manifest["outputs"]
    for entry, (name, _, value_type) in zip(cpu_manifest["outputs"], program.result_types(),
                                            strict=True):
        assert (entry["name"], entry["dtype"], entry["shape"]) == (name, value_type.dtype, [N])
        assert entry["files"] == [f"{name}.rank{r}.npy" for r in range(3)]
    written = sorted(path.name for path in (tmp_path / "cpu").iterdir())
    assert written == sorted(["manifest.json", *(f for e in cpu_manifest["outputs"]
                                                 for f in e["files"])])


BAD_INPUTS = {
    "missing file of one rank": (lambda d: (d / "g.rank2.npy").unlink(), [], "g.rank2.npy"),
    "wrong shape": (lambda d: np.save(d / "w.npy", np.zeros(N - 1, np.float32)), [],
                    "shape [1000]"),
    "wrong dtype": (lambda d: np.save(d / "w.npy", np.zeros(N, np.float64)), [], "dtype <f8"),
    "unknown size": (None, ["--size", "M=3"], "no size variable 'M'"),
    "size given twice": (None, ["--size", " N = 7"], f"--size N given twice (N={N} and N=7)"),
    "param given twice": (None, ["--param", "lr=0.1", "--param", "lr =0.2"],
                          "--param lr given twice (lr=0.1 and lr=0.2)"),
    "bad param": (None, ["--param", "lr=fast"], "lr=fast"),
    "unknown param": (None, ["--param", "alpha=1"], "no param 'alpha'"),
    "param beyond its dtype": (None, ["--param", "lr=1e39"],
                               "lr=1e39: not a f32 number (out of range: f32 holds finite"),
    "unknown schedule": (None, ["--schedule", "turbo"], "turbo"),
    "zero steps": (None, ["--iters", "0"], "--iters"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_and_writes_nothing(sgd, case, tmp_path) -> None:
    _, project = sgd
    spoil, extra, needle = BAD_INPUTS[case]
    write_sgd_inputs(tmp_path / "in", 3)
    if spoil:
        spoil(tmp_path / "in")
    done = run_sgd(project, 3, "--inputs", str(tmp_path / "in"), "--outputs",
                   str(tmp_path / "out"), *extra)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode != 0
    assert len(lines) == 1 and lines[0].startswith("sgd_run: error: "), lines
    assert needle in lines[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


RUNNER_OPTION_ERRORS = {
    "size with an underscore": (["--size", "N=10_0", "--random"], "--size N=10_0: not an integer"),
    "size beyond int64": (["--size", "N=99999999999999999999", "--random"],
                          "--size N=99999999999999999999: not an integer"),
    "empty outputs": (["--size", "N=8", "--random", "--outputs", ""], "--outputs: an empty path"),
    "empty inputs": (["--size", "N=8", "--inputs", ""], "--inputs: an empty path"),
    "inputs and random": (["--size", "N=8", "--random", "--inputs", "IN"],
                          "--inputs and --random: give one (--random fills every input)"),
}


@pytest.mark.parametrize("case", sorted(RUNNER_OPTION_ERRORS))
def test_runner_options_are_refused_as_coconetc_run_refuses_them(sgd, case, tmp_path) -> None:
    """The same one line as the reference (tests/unit/test_ccn_param_values.py)."""
    _, project = sgd
    write_sgd_inputs(tmp_path / "in", 2)
    args, message = RUNNER_OPTION_ERRORS[case]
    args = [str(tmp_path / "in") if a == "IN" else a for a in args]
    if "--outputs" not in args:
        args += ["--outputs", str(tmp_path / "out")]
    done = run_ranks(project, "sgd", 2, args)
    assert done.returncode != 0
    assert done.stderr.strip() == f"sgd_run: error: {message}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_rank_count_that_a_group_does_not_divide(tmp_path) -> None:
    project = sample_project("send_ring")
    done = run_ranks(project, "send_ring", 3, ["--size", "B=4", "--size", "H=5", "--random",
                                              "--outputs", str(tmp_path / "out")])
    assert done.returncode != 0
    assert done.stderr.strip() == ("send_ring_run: error: 3 ranks cannot be split into 2 equal "
                                   "blocks for group 'stage'")
    assert not (tmp_path / "out").exists()


def test_a_failure_during_a_step_aborts_every_rank(sgd, tmp_path) -> None:
    _, project = sgd
    env = launch_environment(3)
    env["PARAFUSE_FAIL_RANK"] = "1"
    command = mpirun_command(project, "sgd", 3, ["--size", f"N={N}", "--random",
                                                 "--outputs", str(tmp_path / "out")])
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "failure injected" in done.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").glob("*.npy"))


def test_random_inputs_are_the_reference_ones(sgd, tmp_path) -> None:
    module, project = sgd
    done = run_sgd(project, 2, "--random", "--seed", "11", "--outputs", str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr
    from tests.schedule_compare import run_schedule
    program = module.programs["sgd"]
    world, expected = run_schedule(program, 2, {"N": N}, iters=1, seed=11)
    actual = logical_values(program, world, load_results(tmp_path / "o", program, 2))
    expected = logical_values(program, world, expected)
    for name in expected:
        assert_close(actual[name][0], expected[name][0], "bf16", name)


def test_a_run_prints_its_own_lines_only(sgd, tmp_path) -> None:
    """Open MPI's components are chosen by the runner itself (one node: shared-memory
    windows, ob1 over sm), not filtered afterwards: launched by a bare mpirun, without
    the launcher's environment, a fused schedule (which opens shared windows) prints its
    summary line and nothing else."""
    _, project = sgd
    env = {k: v for k, v in launch_environment(2).items() if not k.startswith("OMPI_MCA_")}
    command = mpirun_command(project, "sgd", 2, ["--size", f"N={N}", "--schedule", "fused",
                                                 "--random", "--iters", "2"])
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout.startswith("sgd [fused] on 2 rank(s)"), done


def test_help_prints_the_usage_and_exits_0(sgd) -> None:
    """Alone or under mpirun (printed by rank 0 only), with the program's own names."""
    _, project = sgd
    alone = subprocess.run([str(project / "build" / "sgd_run"), "--help"], capture_output=True,
                           text=True, timeout=60)
    launched = run_ranks(project, "sgd", 2, ["--size", "N=8", "-h"])
    for done in (alone, launched):
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert done.stdout.startswith("usage: mpirun -np R sgd_run --size N=... "), done.stdout
        assert done.stdout.count("usage:") == 1
        assert ("--schedule S        one of default, split_only, sliced, zero, fused "
                "(default: default)") in done.stdout, done.stdout
        assert "--json" in done.stdout and "--warmup W" in done.stdout


def test_json_is_the_references_with_times_to_6_decimals(sgd, tmp_path) -> None:
    """The same keys and bytes_per_rank as `coconetc run --backend reference --json`, and
    on both, times in ms rounded to 6 decimals (nanoseconds)."""
    _, project = sgd
    args = ["--size", f"N={N}", "--random", "--schedule", "fused", "--iters", "3", "--json"]
    done = run_ranks(project, "sgd", 2, args)
    assert done.returncode == 0, done.stderr
    reference = subprocess.run([str(COCONETC), "run", str(SAMPLES / "sgd.ccn"), "-n", "2", *args],
                               capture_output=True, text=True, timeout=300)
    assert reference.returncode == 0, reference.stderr
    cpu, ref = json.loads(done.stdout), json.loads(reference.stdout)
    assert list(cpu) == list(ref) and cpu["bytes_per_rank"] == ref["bytes_per_rank"]
    assert (cpu["backend"], ref["backend"]) == ("cpu", "reference")
    for summary in (cpu, ref):
        for key in ("median_ms", "min_ms"):
            assert summary[key] == round(summary[key], 6), (key, summary)


@pytest.mark.parametrize("backend", ["cpu", "cuda-emulated"])
def test_a_full_disk_keeps_no_output_and_says_why(full_disk, backend) -> None:
    """Every rank's files are removed where any could not be written, the manifest is not
    written, no temporary file is left, and the one line names the reason (before: 0-byte
    files, manifest included, and exit 0)."""
    done = subprocess.run([str(COCONETC), "run", str(SAMPLES / "sgd.ccn"), "-n", "2", "--size",
                           f"N={N}", "--random", "--outputs", str(full_disk / "out"),
                           "--backend", backend], capture_output=True, text=True)
    lines = [line for line in done.stderr.splitlines()
             if line.strip() and not line.startswith("coconetc: compiling")]
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and lines[0].startswith("sgd_run: error: cannot write "), lines
    assert lines[0].endswith(": No space left on device"), lines
    assert sorted(p.name for p in (full_disk / "out").iterdir()) == []
    assert done.stdout == ""


def test_a_read_only_outputs_folder_is_one_line_with_the_reason(sgd, read_only_folder) -> None:
    """The runner alone (was: `filesystem error: cannot create directories: ...`)."""
    _, project = sgd
    out = read_only_folder / "out"
    done = run_sgd(project, 2, "--random", "--outputs", str(out))
    assert done.returncode == 1, done.stderr
    assert done.stderr == (f"sgd_run: error: cannot create the output folder {out}: "
                           "Read-only file system\n")
