"""Evaluate typed IR expressions over all simulated ranks at once.

Results are held in the node's compute dtype (f32 for f16/bf16) and are not
rounded: inside one statement intermediates stay in the computation dtype. The
rounding points of docs/ccn-language.md section 4 (binding, collectives, matmul, reductions,
dropout,
update) are applied where they occur.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dims, ir
from ..numerics import NUMPY_DTYPES, in_compute, rounded, stored
from ..types import compute_dtype, is_int, promote
from . import philox
from .values import PerRank, World, read_as

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)

UNARY = {
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "exp": np.exp,
    "log": np.log,
    "tanh": np.tanh,
    "abs": np.abs,
    "relu": lambda x: np.maximum(x, x.dtype.type(0)),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(x.dtype.type(SQRT_2_OVER_PI)
                                              * (x + x.dtype.type(0.044715) * x * x * x))),
}
BINARY = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide,
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "==": np.equal, "!=": np.not_equal, "max": np.maximum, "min": np.minimum,
}


def _pow(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        return np.power(a.astype(np.float64), c.astype(np.float64)).astype(a.dtype)
    return np.power(a, c)


def _operands(node: ir.Expr, args: tuple[ir.Expr, ...], world: World, env) -> list[PerRank]:
    """Evaluate arguments and give each rank its block of replicated operands."""
    return [read_as(evaluate(a, world, env), a.type, node.type, world) for a in args]


def _arith(node: ir.Expr, op, args: tuple[ir.Expr, ...], world: World, env) -> PerRank:
    """Apply `op` per rank with the operands in the computation dtype."""
    if node.type.dtype == "bool":  # comparisons compute in the operands' common dtype
        dtypes = [a.type.dtype for a in args]
        work = dtypes[0] if dtypes[0] == dtypes[-1] else promote(dtypes[0], dtypes[-1])
    else:
        work = node.type.dtype
    values = _operands(node, args, world, env)
    out = []
    for per_rank in zip(*values):
        converted = [in_compute(v, work) if work != "bool" else v for v in per_rank]
        out.append(np.asarray(op(*converted)))
    return out


def _func(node: ir.Func, world: World, env) -> PerRank:
    if node.name == "where":
        cond, a, b = _operands(node, node.args, world, env)
        work = node.type.dtype
        return [np.where(c, in_compute(x, work), in_compute(y, work))
                for c, x, y in zip(cond, a, b)]
    if node.name == "pow":
        return _arith(node, _pow, node.args, world, env)
    if node.name in BINARY:
        return _arith(node, BINARY[node.name], node.args, world, env)
    return _arith(node, UNARY[node.name], node.args, world, env)


def _reduce(node: ir.Reduce, world: World, env) -> PerRank:
    operand = node.operand
    values = [rounded(v, operand.type.dtype) for v in evaluate(operand, world, env)]
    acc = "f64" if operand.type.dtype == "f64" else ("i64" if is_int(operand.type.dtype)
                                                      else "f32")
    acc_np = NUMPY_DTYPES[acc]
    partials = [_partial(node.kind, v.astype(acc_np), acc_np) for v in values]
    if node.cross_rank:
        group = operand.type.layout.group
        partials = [_combine(node.kind, [partials[m] for m in world.topology.members(group, r)])
                    for r in range(world.ranks)]
    results = [np.sqrt(p) if node.kind == "norm" else p for p in partials]
    return [rounded(r, node.type.dtype) for r in results]


def _partial(kind: str, value: np.ndarray, acc: np.dtype) -> np.ndarray:
    if kind == "sum":
        return np.asarray(np.sum(value, dtype=acc))
    if kind == "norm":
        return np.asarray(np.sum(value * value, dtype=acc))
    identity = np.iinfo(acc).min if np.issubdtype(acc, np.integer) else -np.inf
    return np.asarray(np.max(value, initial=identity)).astype(acc)


def _combine(kind: str, partials: list[np.ndarray]) -> np.ndarray:
    total = partials[0]
    for p in partials[1:]:
        total = np.maximum(total, p) if kind == "amax" else total + p
    return np.asarray(total)


def _dropout(node: ir.Dropout, world: World, env) -> PerRank:
    xs = evaluate(node.operand, world, env)
    p = float(evaluate(node.p, world, env)[0].astype(np.float32))
    out = []
    for rank, x in enumerate(xs):
        region = world.region(node.type, rank)
        indices = philox.logical_indices(world.shape(node.type), region)
        rank_or_0 = rank if node.type.layout.kind == "local" else 0
        kept = philox.dropout(stored(x, node.type.dtype), p, indices, rank_or_0, node.site,
                              world.seed + world.step)
        out.append(in_compute(kept, node.type.dtype))
    return out


ROW_REDUCERS = {
    "sum": lambda x, d, work: x.sum(axis=d, keepdims=True, dtype=work),
    "amax": lambda x, d, work: x.max(axis=d, keepdims=True, initial=-np.inf),
    "mean": lambda x, d, work: x.sum(axis=d, keepdims=True, dtype=work) / work(x.shape[d]),
}


def _row_norm(node: ir.RowFunction, world: World, env) -> PerRank:
    dtype = node.operand.type.dtype
    work = np.float64 if dtype == "f64" else np.float32
    eps = evaluate(node.eps, world, env) if node.eps is not None else [None] * world.ranks
    out = []
    for x, e in zip(evaluate(node.operand, world, env), eps):
        x = rounded(x, dtype).astype(work)
        if node.kind in ir.ROW_REDUCTIONS:  # the dim kept with extent 1; a rank's block of
            out.append(ROW_REDUCERS[node.kind](x, node.dim, work))  # a sliced one: partial
            continue
        if node.kind == "softmax":  # max-subtracted: finite for any finite logits
            exp = np.exp(x - x.max(axis=-1, keepdims=True, initial=-np.inf))
            out.append(exp / exp.sum(axis=-1, keepdims=True, dtype=work))
            continue
        if node.kind == "layernorm":
            mean = x.mean(axis=-1, keepdims=True, dtype=work)
            var = ((x - mean) ** 2).mean(axis=-1, keepdims=True, dtype=work)
            out.append((x - mean) / np.sqrt(var + work(e)))
        else:
            out.append(x / np.sqrt((x * x).mean(axis=-1, keepdims=True, dtype=work) + work(e)))
    return out


def evaluate(node: ir.Expr, world: World, env: dict[str, PerRank]) -> PerRank:
    """The value of `node` on every rank, in its compute dtype."""
    with np.errstate(all="ignore"):
        if isinstance(node, ir.Const):
            value = np.asarray(node.value, NUMPY_DTYPES[compute_dtype(node.type.dtype)])
            return [value] * world.ranks
        if isinstance(node, ir.Ref):
            return env[node.name]
        if isinstance(node, ir.Unary):
            return _arith(node, np.negative, (node.operand,), world, env)
        if isinstance(node, ir.Binary):
            return _arith(node, BINARY[node.op], (node.left, node.right), world, env)
        if isinstance(node, ir.Cast):
            return [rounded(v, node.type.dtype) if node.type.dtype != "bool" else v != 0
                    for v in evaluate(node.operand, world, env)]
        if isinstance(node, ir.Func):
            return _func(node, world, env)
        if isinstance(node, ir.Reduce):
            return _reduce(node, world, env)
        if isinstance(node, ir.Dropout):
            return _dropout(node, world, env)
        if isinstance(node, ir.Transpose):  # a rank's block is the transposed block
            return [np.swapaxes(x, *node.dims) for x in evaluate(node.operand, world, env)]
        if isinstance(node, ir.Slice):  # the dim is whole in every rank's block
            start = dims.value(node.start, world.sizes)
            stop = start + dims.value(node.type.shape[node.dim], world.sizes)
            return [np.take(x, range(start, stop), axis=node.dim)
                    for x in evaluate(node.operand, world, env)]
        if isinstance(node, ir.AsSliced):  # each rank's block of its own value
            return [np.array(x[world.region(node.type, rank)])
                    for rank, x in enumerate(evaluate(node.operand, world, env))]
        if isinstance(node, ir.Reshape):  # a rank's block holds the same elements
            return [x.reshape(world.block_shape(node.type, rank))
                    for rank, x in enumerate(evaluate(node.operand, world, env))]
        return _row_norm(node, world, env)
