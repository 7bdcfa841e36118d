"""The ring formulas are written once (comm_volume) and printed as C++ (emitters/ccn/volume).

Each test evaluates the printed C++ with numbers in place of the schedule class's
members (`ranks_`, `parts_G_`, `blocks_G_`, `sizes_.N`) and compares the result,
exactly, with what the reference interpreter computes from the same formulas.
"""

from __future__ import annotations

import re
from dataclasses import replace
from types import SimpleNamespace

import pytest

from parafuse.ccn_compiler import ir
from parafuse.ccn_compiler.comm_volume import bytes_per_rank, bytes_per_rank_exact
from parafuse.ccn_compiler.frontend import check_source
from parafuse.ccn_compiler.ranks import Topology
from parafuse.emitters.ccn.volume import volume_lines
from tests.conftest import SAMPLES
from tests.e2e.ccn_programs import STAGED

# Every kind of term: nested and hierarchical allreduces, broadcasts in and out of
# groups, sends with negative and positive shifts, literal dims, scalar reductions
# with 4- and 8-byte accumulators across the world and within groups, extents written
# as polynomials.
EVERY_TERM = """
program every_term(N, M) {
    group node = blocks(2)
    group pair = blocks(4)
    input g: f32[N, 3] local
    input h: f64[N] local
    input k: i32[M] local
    input poly: f32[2 * N + M * M, 3 * M] local
    inner = allreduce(sum, g, in pair)
    outer = allreduce(sum, inner, in node)
    top = allreduce(sum, outer)
    b = broadcast(h, 0)
    bn = broadcast(h, 1, in node)
    s = send(k, node, -1)
    s2 = send(k, pair, 2)
    rsn = reducescatter(sum, g, in node)
    agn = allgather(rsn, in node)
    hs = reducescatter(sum, h)
    ks = reducescatter(sum, k, in pair)
    q = sum(h) + norm(b) + amax(h) + norm(rsn)
    q2 = sum(hs) + amax(ks)
    ps = allreduce(sum, poly)
    output top
    output ps
    output bn
    output s
    output s2
    output agn
    output q
    output q2
}
program scalar_dims() {
    input x: f16[5] local
    y = allreduce(sum, x)
    output y
}
"""

SIZES = {"N": 1000, "M": 37, "B": 12, "H": 20, "D": 24, "F": 40, "T": 9, "E": 6}


def _programs() -> list[tuple[str, ir.Program]]:
    sources = [(p.name, p.read_text()) for p in sorted(SAMPLES.glob("*.ccn"))]
    found = []
    for filename, text in sources + [("every_term.ccn", EVERY_TERM)]:
        module = check_source(text, filename)
        for name in module.programs:
            for schedule in module.schedule_names(name):
                found.append((f"{name}.{schedule}", module.scheduled_program(name, schedule)))
    return found


PROGRAMS = _programs()


def _cpp_as_python(lines: list[str]) -> str:
    """The printed body of `bytes_per_rank()` as Python (`/` of integers stays integral)."""
    body = []
    for line in lines:
        line = re.sub(r"double\((\w+) / (\w+)\)", r"double(\1 // \2)", line.rstrip(";"))
        line = re.sub(r"\(([^()?]*(?:\([^()]*\))?[^()?]*) \? ([\d.]+) : ([\d.]+)\)",
                      r"(\2 if \1 else \3)", line)
        line = re.sub(r"^if \((.*)\) (bytes \+= .*)$", r"if \1: \2", line)
        body.append(line.replace("double bytes = 0", "bytes = 0.0"))
    return "\n".join(line for line in body if not line.startswith("return"))


def _run_cpp(program: ir.Program, topo: Topology) -> float:
    members = {"ranks_": topo.ranks, "double": float, "sizes_": SimpleNamespace(**SIZES)}
    for group in program.groups:
        members[f"blocks_{group.name}_"] = topo.group_blocks[group.name]
        members[f"parts_{group.name}_"] = topo.block_size(group.name)
    exec(_cpp_as_python(volume_lines(program)), members)  # noqa: S102
    return members["bytes"]


def _topologies(program: ir.Program) -> list[Topology]:
    blocks = {g.name: g.blocks for g in program.groups}
    multiple = max(blocks.values(), default=1)
    return [Topology(multiple * k, blocks) for k in (1, 2, 3, 4)]


@pytest.mark.parametrize("name,program", PROGRAMS, ids=[n for n, _ in PROGRAMS])
def test_printed_cpp_computes_what_the_interpreter_computes(name: str,
                                                            program: ir.Program) -> None:
    for topo in _topologies(program):
        assert _run_cpp(program, topo) == bytes_per_rank_exact(program, topo, SIZES), topo


def test_every_kind_of_term_is_printed() -> None:
    program = check_source(EVERY_TERM, "every_term.ccn").programs["every_term"]
    text = "\n".join(volume_lines(program))
    for expected in ("double(blocks_pair_ / blocks_node_)", "double(blocks_node_ / 1)",
                     "? 1.0 : 0.0", "if ((-1) % blocks_node_ != 0)", "3.0 * 4",
                     "/ double(parts_pair_) * 8;", "/ double(ranks_) * 8;", "* 4;",
                     "((1.0 * double(sizes_.M) * double(sizes_.M) + 2.0 * double(sizes_.N)) "
                     "* (3.0 * double(sizes_.M)) * 4)"):
        assert expected in text, expected


def test_allreduce_by_the_ring_formula() -> None:
    """adam at 4 ranks, N = 1000: one f16 allreduce sends 2 * 3/4 * 2000 bytes."""
    program = check_source((SAMPLES / "adam.ccn").read_text(), "adam.ccn").programs["adam"]
    assert volume_lines(program) == [
        "double bytes = 0;",
        "bytes += 2 * (double(ranks_) - 1) / double(ranks_) * (double(sizes_.N) * 2);",
        "return bytes;",
    ]
    assert bytes_per_rank(program, Topology(4, {}), {"N": 1000}) == 3000


def test_send_counts_only_across_blocks() -> None:
    """A shift that is a multiple of the group's blocks sends to the rank itself."""
    program = check_source(EVERY_TERM, "every_term.ccn").programs["every_term"]
    send = next(s for s in program.flat_stages() if s.name == "s2")
    alone = replace(program, stages=(send,), outputs=())  # s2 = send(k, pair, 2)
    assert bytes_per_rank(alone, Topology(8, {"node": 2, "pair": 2}), SIZES) == 0
    assert bytes_per_rank(alone, Topology(8, {"node": 2, "pair": 4}), SIZES) == 37 * 4
    for blocks in (2, 4):
        topo = Topology(8, {"node": 2, "pair": blocks})
        assert _run_cpp(alone, topo) == bytes_per_rank_exact(alone, topo, SIZES)


def test_pipeline_stages_send_their_blocks_and_add_up() -> None:
    """STAGED at R = 4 (two stages of two ranks; B = 5, H = 7, f32 so 140 bytes a tensor):
    stage 0's allreduce 2 (n-1)/n 140 = 140, the send of its sliced(1) result a rank's
    block, 140 / 2 = 70, stage 1's allgather (n-1)/n 140 = 70, the send of a replicated
    value 140: the stages' terms added up, 420; the printed C++ agrees (at SIZES)."""
    program = check_source(STAGED, "staged.ccn").programs["staged"]
    topo = Topology(4, {"stage": 2})
    assert bytes_per_rank(program, topo, {"B": 5, "H": 7}) == 420
    assert _run_cpp(program, topo) == bytes_per_rank_exact(program, topo, SIZES)
