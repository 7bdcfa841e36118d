"""Every sample and every schedule through the CPU backend (generated C++/OpenMP + MPI) at
R = 1..4 with sizes no R divides and 3 steps, against the reference interpreter."""

from __future__ import annotations

import pytest

from parafuse.ccn_compiler.schedules.tune import MOST_CHUNKS
from parafuse.emitters.ccn.chunk_policy import ChunkVariant
from parafuse.emitters.ccn.cpu.project import build_cpu_project
from parafuse.emitters.toolchain.mpirun import run_ranks
from tests.backend_compare import assert_backend_matches_reference, sample_module, sample_project
from tests.conftest import SAMPLE_SIZES, SAMPLES
from tests.e2e.ccn_programs import (
    ATTENTION,
    EPILOGUES,
    IN_PLACE,
    MULTIHEAD,
    MULTIHEAD_SIZES,
    UNPLACED,
)
from tests.e2e.transport_trace import RankCalls, TransportTrace

SIZES = SAMPLE_SIZES
PROGRAMS = sorted(p.stem for p in SAMPLES.glob("*.ccn"))


@pytest.mark.parametrize("sample", PROGRAMS)
def test_every_schedule_matches_the_reference(sample: str, tmp_path) -> None:
    module = sample_module(sample)
    default = module.programs[sample]
    project = sample_project(sample)
    sizes = {n: SIZES[n] for n in default.size_vars}
    blocks = [g.blocks for g in default.groups]
    for schedule in module.schedule_names(sample):
        scheduled = module.scheduled_program(sample, schedule)
        for ranks in range(1, 5):
            if any(ranks % k for k in blocks):
                continue
            out = tmp_path / f"{schedule}-{ranks}"
            assert_backend_matches_reference(project, default, scheduled, schedule, ranks,
                                             sizes, out)


def assert_transport(calls: list[RankCalls], transport: str, ranks: int) -> None:
    """Node-shared: a window on every rank and no MPI reduce-scatter or all-gather; MPI: no
    window, and MPI's collectives on every rank."""
    assert len(calls) == ranks, calls
    for rank_calls in calls:
        mpi_calls = rank_calls.reduce_scatters + rank_calls.all_gathers
        if transport == "shared":
            assert rank_calls.shared_windows >= 1 and mpi_calls == 0, rank_calls
        else:
            assert rank_calls.shared_windows == 0 and mpi_calls >= 1, rank_calls


@pytest.mark.parametrize("transport", ["shared", "mpi"])
@pytest.mark.parametrize("sample", ["adam", "lamb", "megatron", "sgd"])
def test_pipelined_fused_groups_match_the_reference(sample: str, transport: str, tmp_path,
                                                     monkeypatch) -> None:
    """The fused collective as a real pipeline (3 and 7 chunks, uneven), not one chunk, over
    node-shared memory (the default on one node) and over MPI's nonblocking collectives;
    which of the two ran is seen in the MPI calls of every rank."""
    if transport == "mpi":
        monkeypatch.setenv("PARAFUSE_FUSED_TRANSPORT", "mpi")
    trace = TransportTrace(monkeypatch, tmp_path / "trace")
    module = sample_module(sample)
    default = module.programs[sample]
    fused = module.scheduled_program(sample, "fused")
    variants = tuple(ChunkVariant("fused", k) for k in (3, 7))
    project = build_cpu_project(module, sample, ["default"], f"pipelines of {sample}",
                                variants=variants)
    sizes = {n: SIZES[n] for n in default.size_vars}
    for variant, ranks in zip(variants, (2, 3), strict=True):  # each count, each rank count
        assert_backend_matches_reference(project, default, fused, variant.name, ranks, sizes,
                                         tmp_path / f"{variant.name}-{ranks}")
        assert_transport(trace.take(), transport, ranks)


def test_fused_collectives_use_mpi_and_say_so_where_shared_memory_has_no_room(
        tmp_path, monkeypatch) -> None:
    """Where the shared windows' directory cannot hold them (here it does not exist; a full
    /dev/shm reads the same), the ranks agree on MPI before any window is asked for (Open
    MPI's allocation would hang the ranks that did not create the file), rank 0 warns
    once, and the results are the reference's."""
    monkeypatch.setenv("OMPI_MCA_osc_sm_backing_directory", str(tmp_path / "missing"))
    trace = TransportTrace(monkeypatch, tmp_path / "trace")
    module = sample_module("adam")
    default, fused = module.programs["adam"], module.scheduled_program("adam", "fused")
    project = sample_project("adam")
    for ranks in (2, 3):
        assert_backend_matches_reference(project, default, fused, "fused", ranks,
                                         {"N": 1021}, tmp_path / f"r{ranks}")
        assert_transport(trace.take(), "mpi", ranks)
    done = run_ranks(project, "adam", 2, ["--schedule", "fused", "--random", "--size",
                                          "N=1021"], timeout_s=120)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warned) == 1 and "missing" in warned[0] and "use MPI" in warned[0], done.stderr


def test_states_updated_in_place_only_where_nothing_reads_the_old_value(tmp_path) -> None:
    """`b1` reads the old `a` after `a1` exists, so `a` keeps two buffers; `b` and `c`
    (whose own reduction reads `c` before its loop) are updated in place."""
    from parafuse.ccn_compiler.frontend import check_source
    from parafuse.emitters.ccn.in_place import in_place_values

    module = check_source(IN_PLACE, "swaps.ccn")
    program = module.programs["swaps"]
    assert in_place_values(program) == {"b1": "b", "c1": "c"}
    project = build_cpu_project(module, "swaps", ["default"], "in-place test")
    for ranks in (1, 3):
        assert_backend_matches_reference(project, program, program, "default", ranks,
                                         {"N": 1021}, tmp_path / f"r{ranks}")


def test_gemm_epilogues_match_the_reference(tmp_path) -> None:
    """Every epilogue kind as oneDNN's post-ops (bias, gelu, relu; bf16, f16, f32; a column
    block's bias offset; a rank with an empty K block at R = 3), and products that take
    none, at R = 1..3."""
    from parafuse.ccn_compiler.frontend import check_source

    module = check_source(EPILOGUES, "epilogues.ccn")
    program = module.programs["epilogues"]
    project = build_cpu_project(module, "epilogues", ["default"], "epilogue test")
    assert "pf::Epilogue::bias_relu" in (project / "src" / "epilogues.cpp").read_text()
    for ranks in (1, 2, 3):
        assert_backend_matches_reference(project, program, program, "default", ranks,
                                         {"B": 7, "K": 2, "H": 11}, tmp_path / f"r{ranks}")


def test_softmax_of_attention_rows_matches_the_reference(tmp_path) -> None:
    """softmax over each row of scaled, masked scores whose rows are sliced across ranks,
    at R = 1..3 (T = 7 leaves uneven blocks), and at a scale that makes logits of magnitude
    30 (max-subtracted: finite, each row summing to 1)."""
    import numpy as np

    from parafuse.ccn_compiler.frontend import check_source

    module = check_source(ATTENTION, "attention.ccn")
    program = module.programs["attention"]
    project = build_cpu_project(module, "attention", ["default"], "softmax test")
    for ranks in (1, 2, 3):
        assert_backend_matches_reference(project, program, program, "default", ranks,
                                         {"T": 7, "D": 5}, tmp_path / f"r{ranks}")
    done = run_ranks(project, "attention", 1, ["--random", "--param", "scale=30", "--size",
                                               "T=9", "--size", "D=64", "--outputs",
                                               str(tmp_path / "large")])
    assert done.returncode == 0, done.stderr
    p = np.load(tmp_path / "large" / "p.rank0.npy")
    assert np.isfinite(p).all() and np.allclose(p.sum(-1), 1, atol=1e-5), p.sum(-1)


def test_transformer_layer_stays_finite_with_large_logits(tmp_path) -> None:
    """samples/transformer.ccn with its attention's scale at 30 (logits in the hundreds:
    exp() of them overflows unless softmax subtracts each row's largest), at R = 2: every
    output element finite."""
    import ml_dtypes
    import numpy as np

    sizes = {"T": 9, "D": 16, "H": 3, "E": 8, "F": 16}
    args = ["--random", "--param", "scale=30", "--outputs", str(tmp_path)]
    args += [a for name, n in sizes.items() for a in ("--size", f"{name}={n}")]
    done = run_ranks(sample_project("transformer"), "transformer", 2, args)
    assert done.returncode == 0, done.stderr
    for rank in (0, 1):
        out = np.load(tmp_path / f"out.rank{rank}.npy").view(ml_dtypes.bfloat16)
        assert out.shape == (9, 16) and np.isfinite(out.astype(np.float32)).all(), out


def test_batched_matmuls_match_the_reference(tmp_path) -> None:
    """Multi-head attention's batched matmuls, every layout pair, R = 1..3; the bias-and-gelu
    epilogue is applied by each batch's GEMM."""
    from parafuse.ccn_compiler.frontend import check_source

    module = check_source(MULTIHEAD, "multihead.ccn")
    program = module.programs["multihead"]
    project = build_cpu_project(module, "multihead", ["default"], "batched matmul test")
    assert "hb = matmul(...): pf::matmul in bf16, its epilogue" in \
        (project / "src" / "multihead.cpp").read_text()
    for ranks in (1, 2, 3):
        assert_backend_matches_reference(project, program, program, "default", ranks,
                                         MULTIHEAD_SIZES, tmp_path / f"r{ranks}")


@pytest.mark.parametrize("transport", ["shared", "mpi"])
def test_fused_collectives_copy_values_they_cannot_hold(transport: str, tmp_path,
                                                        monkeypatch) -> None:
    """The reduced input is an expression and the gathered value is a state's next value:
    neither lives in the shared segment, so the collectives copy them in."""
    from parafuse.ccn_compiler.frontend import check_source

    if transport == "mpi":
        monkeypatch.setenv("PARAFUSE_FUSED_TRANSPORT", "mpi")
    trace = TransportTrace(monkeypatch, tmp_path / "trace")
    module = check_source(UNPLACED, "twin.ccn")
    default = module.programs["twin"]
    fused = module.scheduled_program("twin", "fused")
    project = build_cpu_project(module, "twin", ["default", "fused"], "unplaced test",
                                variants=(ChunkVariant("fused", 3),))
    source = next((project / "src").glob("twin.cpp")).read_text()
    assert ".place(" not in source
    for name in ("fused", "fused.c3"):
        for ranks in (1, 2, 3):
            assert_backend_matches_reference(project, default, fused, name, ranks,
                                             {"N": 1021}, tmp_path / f"{name}-{ranks}")
            assert_transport(trace.take(), transport, ranks)


def test_overlap_chunks_chosen_at_run_time_keep_the_results(tmp_path) -> None:
    """An overlap whose chunks `tune` left open runs 1, 2 and 4 chunks twice each over its
    first 6 steps, the ranks agree on the fastest and keep it: 8 steps at R = 2 and 3 run
    every candidate and then the choice, with the reference's results."""
    module = sample_module("mlp")
    default = module.programs["mlp"]
    scheduled = module.scheduled_program("mlp", "overlapped")
    project = sample_project("mlp")
    assert "pf::OverlapChunks" in (project / "src" / "mlp.cpp").read_text()
    sizes = {n: SIZES[n] for n in default.size_vars}
    for ranks in (2, 3):
        assert_backend_matches_reference(project, default, scheduled, "overlapped", ranks,
                                         sizes, tmp_path / f"r{ranks}", iters=8)


@pytest.mark.slow
def test_overlapped_sends_at_the_most_chunks_tune_accepts(tmp_path) -> None:
    """65536 chunks of send_ring's overlapped send: its MPI tags repeat every 15000
    chunks to stay below 32767 (pf::chunk_tag), and with 15007 rows the first chunks and
    those 15000 later, which share their tags, are in flight together, yet each is
    received where it belongs."""
    module = sample_module("send_ring")
    default = module.programs["send_ring"]
    most = ChunkVariant("overlapped", MOST_CHUNKS)
    project = build_cpu_project(module, "send_ring", ["default"], "most chunks test",
                                variants=(most,))
    overlapped = module.scheduled_program("send_ring", "overlapped")
    assert_backend_matches_reference(project, default, overlapped, most.name, 2,
                                     {"B": 15007, "H": 3}, tmp_path, iters=1)


@pytest.mark.parametrize("transport", ["shared", "mpi"])
def test_unfused_collectives_take_either_transport(transport: str, tmp_path,
                                                   monkeypatch) -> None:
    """The collectives of unfused stages (pf::NodeCollective): mlp_sp's `default` (an
    allgather along dim 0, then a reduce-scatter) and mlp's overlapped allreduce chunks,
    over node-shared memory (no MPI reduce-scatter or all-gather on any rank) and over
    MPI (no window), against the reference."""
    if transport == "mpi":
        monkeypatch.setenv("PARAFUSE_FUSED_TRANSPORT", "mpi")
    trace = TransportTrace(monkeypatch, tmp_path / "trace")
    for sample, schedule in (("mlp_sp", "default"), ("mlp", "overlapped")):
        module = sample_module(sample)
        default = module.programs[sample]
        sizes = {n: SIZES[n] for n in default.size_vars}
        for ranks in (2, 3):
            assert_backend_matches_reference(
                sample_project(sample), default, module.scheduled_program(sample, schedule),
                schedule, ranks, sizes, tmp_path / f"{sample}-{ranks}")
            calls = trace.take()
            if sample == "mlp_sp":
                assert_transport(calls, transport, ranks)
            else:
                assert all((c.shared_windows >= 1) == (transport == "shared") for c in calls)
