"""The CUDA backend's generated code run on the emulated device (ccn/cuda_emulated/): every
sample and schedule, and norms whose epsilons the step computes, through `coconetc run
--backend cuda-emulated` (whose project the tests build and share through the cache), and
the fused pipelines at 3 and 7 chunks, against the reference interpreter at R = 1..3 with
sizes no R divides. At R = 2 the communication streams run as
late as stream order allows, at R = 3 the compute streams, so that a missing event between
the two streams, in either direction, reads stale or poisoned memory;
test_a_missing_event_between_the_streams_is_caught checks that it does."""

from __future__ import annotations

import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.chunk_policy import ChunkVariant
from parafuse.emitters.toolchain.cmake import Toolchain, cached_build
from tests.backend_compare import assert_backend_matches_reference, sample_module
from tests.conftest import REPO, SAMPLE_SIZES, SAMPLES
from tests.cuda_emulation.emulated_project import build_emulated, emulated_files
from tests.e2e.ccn_programs import (
    ATTENTION,
    EPILOGUES,
    IN_PLACE,
    MULTIHEAD,
    MULTIHEAD_SIZES,
    NORMS,
    UNPLACED,
)

SIZES = SAMPLE_SIZES
PROGRAMS = sorted(p.stem for p in SAMPLES.glob("*.ccn"))
# (ranks, which streams run late): the synchronous device at one rank, one order each above
CASES = [(1, "none"), (2, "odd"), (3, "even")]


def _check(project, default, program, name, sizes, tmp_path, monkeypatch, cases=CASES,
           cli=None, iters=3):
    blocks = [g.blocks for g in default.groups]
    for ranks, lazy in cases:
        if any(ranks % k for k in blocks):
            continue
        monkeypatch.setenv("PF_EMU_LAZY", lazy)
        assert_backend_matches_reference(project, default, program, f"{name}", ranks, sizes,
                                         tmp_path / f"{name}-{ranks}-{lazy}", cli=cli,
                                         iters=iters)


@pytest.mark.parametrize("sample", PROGRAMS)
def test_every_schedule_matches_the_reference(sample: str, tmp_path, monkeypatch) -> None:
    module = sample_module(sample)
    default = module.programs[sample]
    project = build_emulated(module, sample, module.schedule_names(sample))
    monkeypatch.chdir(REPO)  # the command line names the file as the module does
    sizes = {n: SIZES[n] for n in default.size_vars}
    for schedule in module.schedule_names(sample):
        _check(project, default, module.scheduled_program(sample, schedule), schedule, sizes,
               tmp_path, monkeypatch, cli=(module.filename, "cuda-emulated"))


@pytest.mark.parametrize("sample", ["adam", "lamb", "megatron", "sgd"])
def test_pipelined_fused_groups_match_the_reference(sample: str, tmp_path, monkeypatch) -> None:
    """Chunk c reduced on the communication stream, computed on the compute stream once its
    event says so, gathered while chunk c + 1 is reduced: 1, 3 and 7 uneven chunks. For
    adam also N = 1020, which 2 and 3 divide: with one chunk the reduce-scatter reads the
    gradient and the gather writes the weights in place (PaddedChunks::in_whole), with 3
    equal chunks each rank receives into and sends from its block, and at one rank the
    phase's collectives are skipped (the kernel reads the gradient and writes the gathered
    weights)."""
    module = sample_module(sample)
    default = module.programs[sample]
    fused = module.scheduled_program(sample, "fused")
    variants = tuple(ChunkVariant("fused", k) for k in (1, 3, 7))
    project = build_emulated(module, sample, ["default"], variants)
    sizes = {n: SIZES[n] for n in default.size_vars}
    for name in (variant.name for variant in variants):
        _check(project, default, fused, name, sizes, tmp_path, monkeypatch, CASES[1:])
        if sample == "adam" and name != "fused.c7":
            _check(project, default, fused, name, {"N": 1020}, tmp_path / "even", monkeypatch)


def test_states_in_place_and_values_of_other_programs(tmp_path, monkeypatch) -> None:
    """`a` keeps two buffers while `b` and `c` take their next values in place; a fused
    collective whose reduced input is an expression and whose gathered value is a state's
    next value, at 1 and 3 chunks."""
    swaps = check_source(IN_PLACE, "swaps.ccn")
    program = swaps.programs["swaps"]
    project = build_emulated(swaps, "swaps", ["default"])
    source = (project / "src" / "swaps.cu").read_text()
    assert "// b took b1 in place" in source and "v_a_.swap(v_a1_);" in source
    _check(project, program, program, "default", {"N": 1021}, tmp_path, monkeypatch)
    twin = check_source(UNPLACED, "twin.ccn")
    fused = twin.scheduled_program("twin", "fused")
    project = build_emulated(twin, "twin", ["default", "fused"], (ChunkVariant("fused", 3),))
    for name in ("fused", "fused.c3"):
        _check(project, twin.programs["twin"], fused, name, {"N": 1021}, tmp_path, monkeypatch)


def test_gemm_epilogues_match_the_reference(tmp_path, monkeypatch) -> None:
    """Every epilogue kind in cuBLASLt's calls (bias, gelu, relu; bf16, f16, f32; a column
    block's bias offset; a rank with an empty K block at R = 3, which cuBLASLt does not
    take: the runtime's kernel writes the epilogue of 0), and products that take none."""
    module = check_source(EPILOGUES, "epilogues.ccn")
    program = module.programs["epilogues"]
    project = build_emulated(module, "epilogues", ["default"])
    _check(project, program, program, "default", {"B": 7, "K": 2, "H": 11}, tmp_path,
           monkeypatch)


def test_softmax_of_attention_rows_matches_the_reference(tmp_path, monkeypatch) -> None:
    """softmax's kernel (one block per row: the largest element, then the sum of
    exponentials) on rows sliced across ranks, R = 1..3."""
    module = check_source(ATTENTION, "attention.ccn")
    program = module.programs["attention"]
    project = build_emulated(module, "attention", ["default"])
    _check(project, program, program, "default", {"T": 7, "D": 5}, tmp_path, monkeypatch)


def test_batched_matmuls_match_the_reference(tmp_path, monkeypatch) -> None:
    """One cuBLASLt (or, widened, cuBLAS) GEMM a batch, every layout pair of the batched
    table, the epilogue included."""
    module = check_source(MULTIHEAD, "multihead.ccn")
    program = module.programs["multihead"]
    project = build_emulated(module, "multihead", ["default"])
    _check(project, program, program, "default", MULTIHEAD_SIZES, tmp_path, monkeypatch)


def test_norms_whose_epsilon_is_computed_in_the_step(tmp_path, monkeypatch) -> None:
    """An epsilon that is a value or a reduction of the step lives in device memory: the
    norm kernels read it there (the emulated device faults on a host dereference)."""
    module = check_source(NORMS, "norms.ccn")
    program = module.programs["norms"]
    project = build_emulated(module, "norms", ["default"])
    (tmp_path / "norms.ccn").write_text(NORMS)
    monkeypatch.chdir(tmp_path)
    _check(project, program, program, "default", {"B": 7, "H": 13}, tmp_path, monkeypatch,
           cli=("norms.ccn", "cuda-emulated"))


def test_a_missing_event_between_the_streams_is_caught(tmp_path, monkeypatch) -> None:
    """Without the compute stream's wait for the allreduce, Adam's update reads the sum
    before it is written when the communication stream runs late (and only then)."""
    module = sample_module("adam")
    default = module.programs["adam"]
    files = emulated_files(module, "adam", ["default"])
    source = files["src/adam.cu"]
    assert source.count("streams_.to_compute();") == 1
    files["src/adam.cu"] = source.replace("streams_.to_compute();", "")
    project = cached_build("adam-cuda-emulated-mutant", files,
                           Toolchain.current().cmake_args(mpi=True))
    _check(project, default, default, "default", {"N": 1021}, tmp_path, monkeypatch,
           [(2, "even")])
    with pytest.raises(AssertionError, match="max\\|a - b\\|"):
        _check(project, default, default, "default", {"N": 1021}, tmp_path, monkeypatch,
               [(2, "odd")])


def test_a_missing_barrier_in_a_block_reduction_is_caught(tmp_path, monkeypatch) -> None:
    """Without the barrier between writing the block's partial sums and combining them,
    `sum(b1)` of the `swaps` program reads partial sums that are not yet written."""
    module = check_source(IN_PLACE, "swaps.ccn")
    program = module.programs["swaps"]
    files = emulated_files(module, "swaps", ["default"])
    header = files["include/ccn/cuda/reduce.cuh"].decode()
    barrier = "  partial[threadIdx.x] = mine;\n  __syncthreads();\n"
    assert header.count(barrier) == 1
    files["include/ccn/cuda/reduce.cuh"] = header.replace(
        barrier, "  partial[threadIdx.x] = mine;\n")
    project = cached_build("swaps-cuda-emulated-mutant", files,
                           Toolchain.current().cmake_args(mpi=True))
    with pytest.raises(AssertionError, match="max\\|a - b\\|"):
        _check(project, program, program, "default", {"N": 1021}, tmp_path, monkeypatch,
               [(1, "none")])


@pytest.mark.slow
def test_autotune_times_the_cuda_candidates(tmp_path, monkeypatch) -> None:
    """The autotuner with the CUDA backend's projects (on the emulated device): every
    candidate timed and recorded, the final project's runner defaults to the choice."""
    import json

    from parafuse.emitters.autotune import CHUNK_CHOICES, autotune
    from parafuse.emitters.toolchain.mpirun import run_ranks
    from tests.cuda_emulation.emulated_project import tuning_builder

    monkeypatch.setattr("parafuse.emitters.autotune.ROUNDS", 1)
    module = sample_module("sgd")
    out = tmp_path / "sgd"
    chosen = autotune(module, "sgd", 2, ("N=2011",), out, "tuning test", lambda line: None,
                      tuning_builder)
    tuning = json.loads((out / "tuning.json").read_text())
    assert tuning["chosen"] == chosen
    assert {"default", "fused"} | {f"fused.c{k}" for k in CHUNK_CHOICES} <= set(
        tuning["candidates"])
    done = run_ranks(out, "sgd", 2, ["--size", "N=101", "--random", "--json"])
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["schedule"] == chosen and report["backend"] == "cuda-emulated"


@pytest.mark.parametrize("missing", ["nvcc", "an NVIDIA GPU"])
def test_cuda_autotune_without_nvcc_or_gpu_says_what_it_needs(missing, tmp_path,
                                                              monkeypatch) -> None:
    from click.testing import CliRunner

    from parafuse.cli.coconetc import main

    monkeypatch.setattr("parafuse.cli.ccn_backends.find_nvcc",
                        lambda: None if missing == "nvcc" else "/usr/local/bin/nvcc")
    monkeypatch.setattr("parafuse.cli.ccn_backends.gpu_present", lambda: False)
    result = CliRunner().invoke(main, ["build", str(SAMPLES / "sgd.ccn"), "--backend", "cuda",
                                       "--autotune", "-n", "2", "--size", "N=64", "-o",
                                       str(tmp_path / "x")])
    assert result.exit_code == 1
    assert f"--autotune with --backend cuda needs {missing} on this machine" in result.output
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("sample", ["adam", "lamb", "megatron"])
def test_bound_tensors_give_the_same_bits(sample: str) -> None:
    """Program::bind (the Python module's zero-copy path): every schedule stepped three
    times on the caller's device memory equals the program stepping on its own buffers,
    bit for bit, states updated in place or swapped, at 2 ranks, with the compute streams
    run late: step() returns with its work queued, and what reads results waits for it."""
    import subprocess

    from parafuse.emitters.toolchain.mpirun import launch_environment

    module = sample_module(sample)
    sizes = {n: SIZES[n] for n in module.programs[sample].size_vars}
    project = build_emulated(module, sample, module.schedule_names(sample), bound_check=sizes)
    mpirun = Toolchain.current().tool("mpirun")
    for schedule in module.schedule_names(sample):
        for ranks in (2,):
            done = subprocess.run([mpirun, "--oversubscribe", "-np", str(ranks),
                                   str(project / "build" / f"{sample}_bound_check"), schedule],
                                  capture_output=True, text=True, timeout=300,
                                  env={**launch_environment(ranks), "PF_EMU_LAZY": "even"})
            assert done.returncode == 0 and "bound steps match" in done.stdout, (
                f"{schedule} R={ranks}: {done.stdout}{done.stderr}")
            assert "steps return with their work queued" in done.stdout, schedule


FLASH = """
program flash(T, H, E) {
    param scale: f32 = 15.0
    input q: bf16[H, T, E] sliced(0)
    input k: bf16[H, T, E] sliced(0)
    input v: bf16[H, T, E] sliced(0)
    input mask: f32[T, T] replicated
    s = matmul(q, transpose(k, 1, 2))
    p = softmax(cast(s, f32) * scale + mask, -1)
    o = matmul(cast(p, bf16), v)
    output o
}
"""


def test_fused_attention_matches_the_reference(tmp_path, monkeypatch) -> None:
    """Attention fused into one kernel (emitters/ccn/attention.py), both kernels: 300 keys,
    in tiles of 16 (the tiled kernel) or of 256 and 44 (the row kernel), so the running
    softmax rescales what earlier tiles summed; logits of magnitude up to about 30 stay
    finite; heads split unevenly over 2 and 3 ranks; rows of v of 2,100 columns, two
    kernels."""
    module = check_source(FLASH, "flash.ccn")
    program = module.programs["flash"]
    files = emulated_files(module, "flash", ["default"])
    assert "pf::attention_rows(" in files["src/flash.cu"]
    project = build_emulated(module, "flash", ["default"])
    _check(project, program, program, "default", {"T": 300, "H": 3, "E": 5}, tmp_path,
           monkeypatch, cases=[(1, "none"), (2, "all"), (3, "none")], iters=1)
    # rows of q and v longer than the tiled kernel's 128: the row kernel, two tiles of keys;
    # rows of v longer than its columns (2,048): a kernel a group of columns
    for sizes in ({"T": 300, "H": 1, "E": 200}, {"T": 3, "H": 1, "E": 2100}):
        _check(project, program, program, "default", sizes, tmp_path, monkeypatch,
               cases=[(1, "none")], iters=1)
