"""The GEMM epilogues of the lowering plan (emitters/ccn/epilogues.py): which element-wise
stages a matmul's GEMM applies, decided once, and both backends' printers following the
plan (a plan changed by hand changes what each prints)."""

from __future__ import annotations

import dataclasses

import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.cpu.program import lower_schedule as lower_cpu
from parafuse.emitters.ccn.cpu.project import CPU_CHUNKS, CPU_EPILOGUES
from parafuse.emitters.ccn.cuda.program import lower_schedule as lower_cuda
from parafuse.emitters.ccn.cuda.project import CUDA_CHUNKS, CUDA_EPILOGUES
from parafuse.emitters.ccn.epilogues import Epilogue, EpilogueKind
from parafuse.emitters.ccn.plan import make_plan
from tests.conftest import SAMPLES
from tests.e2e.ccn_programs import EPILOGUES


def _plan(source: str, program: str, kinds=CUDA_EPILOGUES, schedule: str = "default"):
    module = check_source(source, f"{program}.ccn")
    return make_plan(module.scheduled_program(program, schedule), schedule, CUDA_CHUNKS,
                     epilogues=kinds)


def test_each_kind_is_found_and_products_that_cannot_take_one_keep_their_stage() -> None:
    assert _plan(EPILOGUES, "epilogues").epilogues == {
        "h1": Epilogue(EpilogueKind.BIAS, "e1", "b"),
        "h2": Epilogue(EpilogueKind.GELU, "e2"),
        "h3": Epilogue(EpilogueKind.RELU, "e3"),
        "h4": Epilogue(EpilogueKind.BIAS_GELU, "e4", "bh"),
        "h5": Epilogue(EpilogueKind.BIAS_RELU, "e5", "b32"),
        "h8": Epilogue(EpilogueKind.BIAS_RELU, "e8", "b"),
    }  # h6 is scaled before its bias, h7 read twice


def test_a_backend_gets_only_the_kinds_its_gemm_has() -> None:
    assert _plan(EPILOGUES, "epilogues", frozenset()).epilogues == {}
    assert set(_plan(EPILOGUES, "epilogues", frozenset({EpilogueKind.RELU})).epilogues) == {"h3"}


PROGRAM = """
program p(B, K, H) {{
    input x: {dtype}[B, K] replicated
    input w: {dtype}[K, H] replicated
    input b: {bias}
    h = matmul(x, w)
    e = relu(h + b)
    {tail}
}}
"""

BIAS_UPDATED_IN_PLACE = """
program q(B, K, H) {
    input x: bf16[B, K] replicated
    input w: bf16[K, H] replicated
    state b: bf16[H] replicated
    h = matmul(x, w)
    e = relu(h + b)
    b1 = update(b, b * 0.5)
    output e
}
"""


@pytest.mark.parametrize(("dtype", "bias", "tail", "why"), [
    ("bf16", "bf16[H] replicated", "output e\n    output h", "the product is an output"),
    ("bf16", "bf16[H] sliced(0)", "output e", "a sliced bias"),
    ("bf16", "bf16[B, H] replicated", "output e", "a matrix added, not a bias"),
    ("bf16", "f32[H] replicated", "output e", "a bias of another dtype"),
    ("f64", "f64[H] replicated", "output e", "f64 products are no native GEMM's"),
])
def test_no_epilogue_where_it_would_change_the_program(dtype, bias, tail, why) -> None:
    source = PROGRAM.format(dtype=dtype, bias=bias, tail=tail)
    assert _plan(source, "p").epilogues == {}, why


def test_no_bias_that_a_stage_updates_in_place() -> None:
    """b1 is written into b's buffer where it stands: read later, b would be the new b."""
    plan = _plan(BIAS_UPDATED_IN_PLACE, "q")
    assert plan.in_place == {"b1": "b"} and plan.epilogues == {}


def test_the_same_program_with_a_plain_reader_takes_one() -> None:
    source = PROGRAM.format(dtype="bf16", bias="bf16[H] replicated", tail="output e")
    assert _plan(source, "p").epilogues == {"h": Epilogue(EpilogueKind.BIAS_RELU, "e", "b")}


@pytest.mark.parametrize(("lower", "chunks", "kinds"), [
    (lower_cpu, CPU_CHUNKS, CPU_EPILOGUES), (lower_cuda, CUDA_CHUNKS, CUDA_EPILOGUES)])
def test_every_backend_prints_what_the_plan_says(lower, chunks, kinds) -> None:
    """mlp's h = matmul(x, w1); a = gelu(h + b1): one GEMM computing a where the plan gives
    it the epilogue; the product stored and a kernel computing a where a changed plan
    does not."""
    module = check_source((SAMPLES / "mlp.ccn").read_text(), "samples/mlp.ccn")
    plan = make_plan(module.scheduled_program("mlp", "default"), "default", chunks,
                     epilogues=kinds)
    assert plan.epilogues == {"h": Epilogue(EpilogueKind.BIAS_GELU, "a", "b1")}
    fused = "\n".join(lower(plan).step)
    assert "pf::Epilogue::bias_gelu" in fused and "v_h" not in fused
    assert "// a: in the epilogue of h's GEMM" in fused
    plain = "\n".join(lower(dataclasses.replace(plan, epilogues={})).step)
    assert "Epilogue" not in plain and "v_h" in plain and "gelu" in plain
