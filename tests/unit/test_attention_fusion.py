"""Attention fused into one kernel by the lowering plan (emitters/ccn/attention.py): which
programs fuse, and which keep their three stages (a score or weight read elsewhere, kept as
an output, a reduction inside the softmax's operand, mixed dtypes); the CPU backend fuses
none, and the CUDA printer follows the plan."""

from __future__ import annotations

import pytest

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.cuda.program import lower_schedule
from parafuse.emitters.ccn.cuda.project import CUDA_CHUNKS
from parafuse.emitters.ccn.plan import make_plan
from tests.conftest import SAMPLES

HEAD = """
program a(T, H, E) {
    input q: bf16[H, T, E] sliced(0)
    input k: bf16[H, T, E] sliced(0)
    input v: bf16[H, T, E] sliced(0)
    input v32: f32[H, T, E] sliced(0)
    input mask: f32[T, T] replicated
    s = matmul(q, transpose(k, 1, 2))
"""
FUSED = HEAD + """    p = softmax(cast(s, f32) * 0.5 + mask, -1)
    o = matmul(cast(p, bf16), v)
    output o
}
"""
SOFTMAX = "    p = softmax(cast(s, f32) + mask, -1)\n"
PRODUCT = "    o = matmul(cast(p, bf16), v)\n"
KEPT = {
    "scores read again": SOFTMAX + PRODUCT + "    t = s * 2.0\n    output o\n    output t\n",
    "weights an output": SOFTMAX + PRODUCT + "    output o\n    output p\n",
    "weights read again": SOFTMAX + PRODUCT + "    w = p + 1.0\n    output o\n    output w\n",
    "a reduction inside": "    p = softmax(cast(s, f32) - sum(mask), -1)\n" + PRODUCT +
                          "    output o\n",
    "mixed dtypes": SOFTMAX + "    o = matmul(p, v32)\n    output o\n",
}


def _plan(source: str, attention: bool = True, schedule: str = "default"):
    module = check_source(source, "a.ccn")
    [name] = module.programs
    return make_plan(module.scheduled_program(name, schedule), schedule, CUDA_CHUNKS,
                     attention=attention)


def test_attention_fuses_and_the_cuda_printer_follows() -> None:
    plan = _plan(FUSED)
    [(output, fusion)] = plan.attentions.items()
    assert (output, fusion.q, fusion.k, fusion.v, fusion.absorbed) == ("o", "q", "k", "v",
                                                                       ("s", "p"))
    step = "\n".join(lower_schedule(plan).step)
    assert step.count("pf::attention_rows(") == 1
    assert "// s: in the fused attention of o" in step and "lt_.gemm" not in step
    assert not _plan(FUSED, attention=False).attentions  # the CPU backend's plan


@pytest.mark.parametrize("why", sorted(KEPT))
def test_attention_that_does_not_match_keeps_its_stages(why: str) -> None:
    assert _plan(HEAD + KEPT[why] + "}\n").attentions == {}, why


def test_the_transformer_samples_fuse_in_every_schedule() -> None:
    for sample in ("transformer", "transformer_sp"):
        module = check_source((SAMPLES / f"{sample}.ccn").read_text(), f"samples/{sample}.ccn")
        for schedule in module.schedule_names(sample):
            plan = make_plan(module.scheduled_program(sample, schedule), schedule, CUDA_CHUNKS,
                             attention=True)
            assert list(plan.attentions) == ["o"], (sample, schedule)


def test_keys_overwritten_before_the_output_keep_the_stages() -> None:
    """A state's next value written into its buffer between the scores and the product: the
    kernel would read the new keys where the product stands."""
    source = """
program a(T, H, E) {
    input q: bf16[H, T, E] sliced(0)
    state k: bf16[H, T, E] sliced(0)
    input v: bf16[H, T, E] sliced(0)
    s = matmul(q, transpose(k, 1, 2))
    k2 = update(k, k * 2.0)
    p = softmax(cast(s, f32), -1)
    o = matmul(cast(p, bf16), v)
    output o
}
"""
    plan = _plan(source)
    assert plan.in_place.get("k2") == "k", plan.in_place
    assert plan.attentions == {}
