"""emitters/ccn/param_outputs.py: an output that names a param is read from a scalar copy,
on both backends, under the param's file and value names (the e2e colliding-names test
builds and runs one; this checks the printed slots without a build)."""

from __future__ import annotations

from parafuse.ccn_compiler.frontend import check_source
from parafuse.emitters.ccn.cpu.project import project_files as cpu_files
from parafuse.emitters.ccn.param_outputs import with_param_outputs_copied
from tests.cuda_emulation.emulated_project import emulated_files

SOURCE = """
program pout(N) {
    param lr: f32 = 0.5
    input x: f32[N] replicated
    lr_as_output = x * lr
    output lr_as_output, lr
}
"""


def test_a_param_output_reads_a_copy_named_apart_from_the_programs_names() -> None:
    program = check_source(SOURCE, "pout.ccn").programs["pout"]
    copied, copies = with_param_outputs_copied(program)
    assert copies == {"lr_as_output2": "lr"}  # the plain name is a stage already
    assert copied.outputs == (("lr_as_output", "lr_as_output"), ("lr", "lr_as_output2"))
    stage = copied.stages[-1]
    assert stage.name == "lr_as_output2" and stage.type.shape == ()
    unchanged, none = with_param_outputs_copied(copied)
    assert unchanged is copied and none == {}


def test_both_backends_print_the_param_output_slot_on_the_copy() -> None:
    module = check_source(SOURCE, "pout.ccn")
    cpu = cpu_files(module, "pout", ["default"], "test")["src/pout.cpp"]
    assert ('{"lr", "lr", pf::DType::f32, "replicated", L_lr_as_output2, false, -1, '
            'v_lr_as_output2.data()}') in cpu
    cuda = emulated_files(module, "pout", ["default"])["src/pout.cu"]
    for buffer in ("h_lr_as_output2_", "v_lr_as_output2_"):  # the host mirror, the device
        assert ('{"lr", "lr", pf::DType::f32, "replicated", pf::host_local(L_lr_as_output2_), '
                f'false, -1, {buffer}.data()}}') in cuda
