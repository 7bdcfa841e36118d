"""The reference interpreter: a program's steps for R ranks inside one process.

It is the oracle every backend and schedule is checked against, so it does the
obvious thing: each stage in order, every rank's value held explicitly, states
replaced at the end of the step (docs/ccn-language.md section 3).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .. import ir
from ..numerics import in_compute, rounded, stored
from ..types import Layout, ValueType
from .collectives import run_collective
from .expressions import evaluate
from .values import PerRank, World, broadcast_to_local, read_as


def _matmul(stage: ir.MatmulStage, world: World, env: dict[str, PerRank]) -> PerRank:
    work = np.float64 if stage.type.dtype == "f64" else np.float32
    operands = [[rounded(v, x.type.dtype).astype(work) for v in evaluate(x, world, env)]
                for x in (stage.a, stage.b)]
    if stage.batched:
        operands = [_batches_of_rank(values, x.type, stage.type, world)
                    for values, x in zip(operands, (stage.a, stage.b))]
    return [np.matmul(a, b) for a, b in zip(*operands)]


def _batches_of_rank(values: PerRank, operand: ValueType, result: ValueType, world: World
                     ) -> PerRank:
    """A batched matmul operand whole along the batch dim its result is sliced along: each
    rank's batches only (numpy multiplies the other dims as they are)."""
    lay, offset = result.layout, len(result.shape) - len(operand.shape)
    dim = lay.dim - offset if lay.kind == "sliced" else -1
    if dim < 0 or dim >= len(operand.shape) - 2 or operand.shape[dim] == 1 or \
            operand.layout == Layout("sliced", dim, lay.group):
        return values  # no such batch dim, repeated (extent 1), or the rank's batches only
    return [np.take(v, range(*world.region(result, r)[lay.dim].indices(v.shape[dim])), axis=dim)
            for r, v in enumerate(values)]


def _update(stage: ir.UpdateStage, world: World, env: dict[str, PerRank]) -> PerRank:
    values = read_as(evaluate(stage.expr, world, env), stage.expr.type, stage.type, world)
    out = []
    for rank, value in enumerate(values):
        shape = tuple(len(range(*s.indices(n))) for s, n in
                      zip(world.region(stage.type, rank), world.shape(stage.type)))
        out.append(broadcast_to_local(in_compute(value, stage.expr.type.dtype), shape))
    return out


def run_stage(stage: ir.Stage, world: World, env: dict[str, PerRank]) -> PerRank:
    """The value a stage binds on every rank, rounded to the stage's dtype."""
    if isinstance(stage, ir.CollectiveStage):
        value = run_collective(stage, evaluate(stage.operand, world, env), world)
    elif isinstance(stage, ir.MatmulStage):
        value = _matmul(stage, world, env)
    elif isinstance(stage, ir.UpdateStage):
        value = _update(stage, world, env)
    else:
        value = evaluate(stage.expr, world, env)
    with np.errstate(all="ignore"):
        return [rounded(v, stage.type.dtype) for v in value]


def run_step(program: ir.Program, world: World, env: dict[str, PerRank],
             states: dict[str, PerRank]) -> tuple[dict[str, PerRank], dict[str, PerRank]]:
    """One step: returns every bound value and the states after the step."""
    env = dict(env)
    env.update(states)
    for stage in program.flat_stages():
        env[stage.name] = run_stage(stage, world, env)
    new_states = dict(states)
    for state, value in program.state_updates:  # a replicated value stored sliced: the block
        new_states[state] = read_as(env[value], program.value_type(value),
                                    program.tensor(state).type, world)
    return env, new_states


@dataclass(frozen=True)
class RunResult:
    results: dict[str, PerRank]  # file name -> per-rank arrays in their stored dtypes
    step_ms: list[float]


def run_program(program: ir.Program, world: World, params: dict[str, np.ndarray],
                initial: dict[str, PerRank], iters: int, warmup: int) -> RunResult:
    """Run `warmup` discarded steps, then `iters` steps with states carried over."""
    fixed = {name: [value] * world.ranks for name, value in params.items()}
    fixed.update({t.name: [in_compute(v, t.type.dtype) for v in initial[t.name]]
                  for t in program.tensors if t.role == "input"})
    start_states = {t.name: [in_compute(v, t.type.dtype) for v in initial[t.name]]
                    for t in program.tensors if t.role == "state"}
    for _ in range(warmup):
        world.step = 0
        run_step(program, world, fixed, start_states)
    states, env, times = start_states, {}, []
    for step in range(iters):
        world.step = step
        begin = time.perf_counter()
        env, states = run_step(program, world, fixed, states)
        times.append((time.perf_counter() - begin) * 1e3)
    results = {name: [stored(v, program.value_type(value).dtype) for v in env[value]]
               for name, value in program.outputs}
    results.update({state: [stored(v, program.tensor(state).type.dtype) for v in states[state]]
                    for state, _ in program.state_updates})
    return RunResult(results, times)
