"""CUDA backend without a GPU: every sample with all its schedules is generated for CUDA
and compiled and linked with nvcc (one architecture; every program's project in one
bundle, so that CMake detects nvcc once) against the NCCL and cuBLAS of the `cuda` extra's
wheels; the fused step of one schedule is kept as a golden file. Running the projects
needs a GPU: bench/gpu_check.sh."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from parafuse.ccn_compiler.frontend import check_source
from parafuse.cli.coconetc import main
from parafuse.emitters.ccn.cuda.program import lower_schedule
from parafuse.emitters.ccn.cuda.project import (
    CUDA_CHUNKS,
    CUDA_EPILOGUES,
    cmake_arguments,
    project_files,
)
from parafuse.emitters.ccn.plan import make_plan
from parafuse.emitters.toolchain.nvidia import cublas_library, find_nvcc, gpu_present, nccl_library
from tests.conftest import SAMPLES
from tests.e2e.random_bundle import build_bundle
from tests.required_tools import require_nvcc

TEST_ARCH = "90"  # CI compiles one architecture; users get 90;80 by default
CASES = sorted(SAMPLES.glob("*.ccn"))
needs_nvcc = pytest.mark.usefixtures("nvcc_required")


@pytest.fixture
def nvcc_required() -> None:
    require_nvcc()


def _programs():
    for sample in CASES:
        module = check_source(sample.read_text(), f"samples/{sample.name}")
        for program in module.programs:
            yield pytest.param(sample, program, id=f"{sample.stem}.{program}")


def test_wheels_provide_nccl_and_cublas() -> None:
    assert nccl_library().library.endswith("libnccl.so.2"), "install the `cuda` extra"
    assert cublas_library().library.endswith("libcublas.so.13"), "install the `cuda` extra"


ROW_FUNCTIONS = ["NORMS", "ATTENTION", "MULTIHEAD"]  # programs of tests/e2e/ccn_programs.py


def _row_function_module(name: str):
    from tests.e2e import ccn_programs

    return check_source(getattr(ccn_programs, name), "rows.ccn")


def _files(module, program: str) -> dict[str, str | bytes]:
    """A program's CUDA project: every schedule of a sample, `default` of the others."""
    if module.filename.startswith("samples/"):
        return project_files(module, program, module.schedule_names(program),
                             f"coconetc build {module.filename} --backend cuda", TEST_ARCH)
    return project_files(module, program, ["default"], program, TEST_ARCH)


@pytest.fixture(scope="module")
def bundle() -> Path:
    """Every sample program and row-function program, built as one bundle."""
    require_nvcc()
    modules = [(program, check_source(sample.read_text(), f"samples/{sample.name}"))
               for sample, program in (param.values for param in _programs())]
    for name in ROW_FUNCTIONS:
        module = _row_function_module(name)
        [program] = module.programs
        modules.append((program, module))
    # compiled and linked, never run here: -O0 (52 -> 46 s on 2 cores)
    return build_bundle("samples-cuda", modules, _files,
                        cmake_arguments(find_nvcc()) + ["-DPARAFUSE_OPTIMIZE=-O0"])


# The bundle's build is the suite's longest single item (about 80 s): its tests go first.
@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize("name", ROW_FUNCTIONS)
def test_row_functions_compile(name: str, bundle: Path) -> None:
    """norms.cuh: row norms whose epsilon the step computes (read in device memory),
    softmax's kernel, and batched matmuls."""
    [program] = _row_function_module(name).programs
    assert (bundle / "build" / f"{program}_run").exists()


@pytest.mark.slow
@needs_nvcc
@pytest.mark.parametrize(("sample", "program"), list(_programs()))
def test_every_schedule_compiles_and_links(sample, program, bundle: Path) -> None:
    module = check_source(sample.read_text(), f"samples/{sample.name}")
    runner = bundle / "build" / f"{program}_run"
    assert runner.exists()
    linked = subprocess.run(["ldd", str(runner)], capture_output=True, text=True).stdout
    assert "libnccl.so.2" in linked and "libcublas.so.13" in linked
    assert "not found" not in linked, linked
    source = _files(module, program)[f"src/{program}.cu"]
    for schedule in module.schedule_names(program):
        assert f'schedule == "{schedule}"' in source


def test_fused_step_golden(golden) -> None:
    module = check_source((SAMPLES / "adam.ccn").read_text(), "samples/adam.ccn")
    cls = lower_schedule(make_plan(module.scheduled_program("adam", "fused"), "fused", CUDA_CHUNKS))
    golden.check("golden/cuda/adam.fused.step.cu",
                 "coconetc build samples/adam.ccn --backend cuda --schedule fused "
                 "(the step of src/adam.cu)", "\n".join(cls.step))


def _step(sample: str, schedule: str) -> str:
    module = check_source((SAMPLES / f"{sample}.ccn").read_text(), f"samples/{sample}.ccn")
    plan = make_plan(module.scheduled_program(sample, schedule), schedule, CUDA_CHUNKS,
                     epilogues=CUDA_EPILOGUES)
    cls = lower_schedule(plan)
    return "\n".join(cls.step)


def test_fused_collective_is_a_pipeline_with_one_kernel() -> None:
    step = _step("adam", "fused")
    assert step.count("pf::launch_vectorized<") == 1 and "pf::launch(" not in step, step
    assert "pf::launch_vectorized<8>(lo, hi, pf::aligned16(lo, " in step  # on chunk c
    assert "pf::load_vec<8>(v_rs + i0)" in step  # the f16 gradient: 8 per 16 bytes
    assert "plan.scatter<" in step and "plan.gather<" in step
    assert "cudaStreamWaitEvent(streams_.compute, plan.reduced[c], 0)" in step
    assert "cudaStreamWaitEvent(streams_.comm, plan.computed[c], 0)" in step


def test_only_a_phase_that_gathers_holds_the_communication_stream() -> None:
    """lamb's fused group: a phase that reduce-scatters and computes (no gather) and one
    that computes and gathers; the communication stream waits for computed chunks only in
    the second (it waited in both, issue 17 defect 8)."""
    step = _step("lamb", "fused")
    assert step.count("cudaStreamWaitEvent(streams_.comm, plan.computed[c], 0)") == 1, step


def test_two_collectives_on_different_communicators_overlap_on_two_streams() -> None:
    """send_ring's overlap(h, recv): the allreduce in the stage's communicator on the
    communication stream, the send on the world's on the second one (both ran on one
    stream, so nothing overlapped: issue 17 defect 8)."""
    step = _step("send_ring", "overlapped")
    assert "nccl_stage_, streams_.comm);" in step
    assert "blocks_stage_, 1, nccl_, streams_.comm2);" in step
    assert "cudaStreamWaitEvent(streams_.comm2, produced.done[k], 0)" in step
    assert "streams_.to_comm2();" in step and "streams_.comm2_to_compute();" in step


def test_overlap_runs_cublaslt_chunks_against_nccl() -> None:
    step = _step("megatron", "overlapped")
    assert "lt_.gemm(streams_.compute, " in step
    assert "cudaStreamWaitEvent(streams_.comm, produced.done[k], 0)" in step
    assert "pf::allreduce<pf::f16>(v_partial + lo, v_y + lo, hi - lo" in step


@pytest.mark.parametrize("sample", ["mlp", "mlp_sp", "megatron", "transformer"])
def test_16_bit_matmuls_run_on_cublaslt_as_they_are(sample) -> None:
    """bf16 and f16 operands go to cuBLASLt as they are (tensor cores, f32 accumulation):
    no widening copy to float and no cublasSgemm in any schedule."""
    module = check_source((SAMPLES / f"{sample}.ccn").read_text(), f"samples/{sample}.ccn")
    source = project_files(module, sample, module.schedule_names(sample), "t")[
        f"src/{sample}.cu"]
    assert "lt_.gemm(streams_.compute, " in source
    assert "pf::matmul(" not in source and not re.search(r"float\* const mm\d+ = ", source)


def test_mlp_gemm_applies_bias_and_gelu_in_its_epilogue() -> None:
    """h = matmul(x, w1); a = gelu(h + b1): one GEMM writes a (no kernel reads h back) in
    every schedule of the sample."""
    for schedule in ("default", "fused", "overlapped"):
        step = _step("mlp", schedule)
        assert "pf::Epilogue::bias_gelu, v_b1 + L_a.start[1]);" in step, schedule
        assert "v_h" not in step, schedule


@pytest.mark.slow
@needs_nvcc
def test_cli_build_cuda_with_python_module(tmp_path) -> None:
    out = tmp_path / "sgd_cuda"
    args = ["build", str(SAMPLES / "sgd.ccn"), "--backend", "cuda", "--schedule", "default",
            "--cuda-arch", TEST_ARCH, "--python", "-o", str(out)]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (out / "build" / "sgd_run").exists()
    assert '"cuda"' in (out / "CMakeLists.txt").read_text()
    # the module imports without a GPU (constructing a Program needs one)
    probe = "import sgd; print(sgd.schedules, 'step' in dir(sgd.Program))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=out / "build", capture_output=True,
                          text=True)
    assert done.stdout.strip() == "['default'] True", done.stderr


def test_cli_cuda_autotune_needs_ranks_and_sizes(tmp_path) -> None:
    args = ["build", str(SAMPLES / "sgd.ccn"), "--backend", "cuda", "--autotune",
            "-o", str(tmp_path / "x")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert "--autotune needs -n R and --size" in result.output


@pytest.mark.skipif(gpu_present(), reason="this machine has a GPU")
def test_cli_run_cuda_without_a_gpu_says_so(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["run", str(SAMPLES / "sgd.ccn"), "--backend", "cuda", "-n", "1", "--size", "N=8",
            "--random"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "needs" in lines[0] and "found none" in lines[0], result.output
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_cli_build_cuda_without_nvcc_writes_the_sources_and_says_so(tmp_path,
                                                                     monkeypatch) -> None:
    monkeypatch.setattr("parafuse.cli.ccn_backends.find_nvcc", lambda: None)
    out = tmp_path / "sgd_cuda"
    result = CliRunner().invoke(main, ["build", str(SAMPLES / "sgd.ccn"), "--backend", "cuda",
                                       "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"no nvcc found: wrote the CUDA sources to {out}/")
    assert (out / "CMakeLists.txt").exists() and (out / "src" / "sgd.cu").exists()
    assert not (out / "build").exists()
