"""Print a checked program in .ccn syntax with the dtype, shape and layout of every value."""

from __future__ import annotations

from dataclasses import replace

from . import dims, ir
from .types import ValueType

# Binding strength of operators: higher binds tighter.
PRECEDENCE = {"<": 1, "<=": 1, ">": 1, ">=": 1, "==": 1, "!=": 1,
              "+": 2, "-": 2, "*": 3, "/": 3}
UNARY_PRECEDENCE = 4
ATOM_PRECEDENCE = 5


def _number(value: float | int) -> str:
    if isinstance(value, int):
        return str(value)
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") and "e" not in text else text


def _paren(text: str, inner: int, needed: int) -> str:
    return f"({text})" if inner < needed else text


def format_expr(node: ir.Expr) -> tuple[str, int]:
    """Source text of `node` and its precedence, with only the parentheses needed."""
    if isinstance(node, ir.Const):
        return _number(node.value), ATOM_PRECEDENCE
    if isinstance(node, ir.Ref):
        return node.name, ATOM_PRECEDENCE
    if isinstance(node, ir.Unary):
        text, prec = format_expr(node.operand)
        return "-" + _paren(text, prec, UNARY_PRECEDENCE), UNARY_PRECEDENCE
    if isinstance(node, ir.Binary):
        prec = PRECEDENCE[node.op]
        left, lp = format_expr(node.left)
        right, rp = format_expr(node.right)
        # Left-associative: the right operand needs parentheses at equal precedence.
        right_needed = prec + 1 if prec > 1 else 2
        return f"{_paren(left, lp, prec if prec > 1 else 2)} {node.op} " \
               f"{_paren(right, rp, right_needed)}", prec
    return _format_call(node), ATOM_PRECEDENCE


def _format_call(node: ir.Expr) -> str:
    if isinstance(node, ir.Func):
        args = [format_expr(a)[0] for a in node.args]
        return f"{node.name}({', '.join(args)})"
    if isinstance(node, ir.Cast):
        return f"cast({format_expr(node.operand)[0]}, {node.type.dtype})"
    if isinstance(node, ir.Reduce):
        return f"{node.kind}({format_expr(node.operand)[0]})"
    if isinstance(node, ir.Dropout):
        return f"dropout({format_expr(node.operand)[0]}, {format_expr(node.p)[0]})"
    if isinstance(node, ir.Transpose):
        return f"transpose({format_expr(node.operand)[0]}, {node.dims[0]}, {node.dims[1]})"
    if isinstance(node, ir.Slice):
        stop = dims.add(node.start, node.type.shape[node.dim])
        return f"slice({format_expr(node.operand)[0]}, {node.dim}, {node.start}, {stop})"
    if isinstance(node, ir.AsSliced):
        return f"as_sliced({format_expr(node.operand)[0]}, {node.dim})"
    if isinstance(node, ir.Reshape):
        extents = ", ".join(str(d) for d in node.type.shape)
        return f"reshape({format_expr(node.operand)[0]}, {extents})"
    assert isinstance(node, ir.RowFunction)
    if node.eps is not None:  # a norm: along the last dim
        second = format_expr(node.eps)[0]
    else:
        second = "-1" if node.dim == len(node.type.shape) - 1 else str(node.dim)
    return f"{node.kind}({format_expr(node.operand)[0]}, {second})"


def format_stage_value(stage: ir.Stage) -> str:
    if isinstance(stage, ir.ElementwiseStage):
        return format_expr(stage.expr)[0]
    if isinstance(stage, ir.UpdateStage):
        return f"update({stage.state}, {format_expr(stage.expr)[0]})"
    if isinstance(stage, ir.MatmulStage):
        return f"matmul({format_expr(stage.a)[0]}, {format_expr(stage.b)[0]})"
    args = [format_expr(stage.operand)[0]]
    if stage.reduce_op:
        args.insert(0, stage.reduce_op)
    if stage.op == "broadcast":
        args.append(str(stage.root))
    if stage.op == "send":
        args += [stage.group, str(stage.shift)]
    elif stage.group:
        args.append(f"in {stage.group}")
    return f"{stage.op}({', '.join(args)})"


def _cross_rank_notes(stage: ir.Stage) -> list[str]:
    return [f"{node.kind} across ranks" for expr in ir.stage_exprs(stage)
            for node in ir.walk(expr) if isinstance(node, ir.Reduce) and node.cross_rank]


def _annotated(code: str, vt: ValueType, notes: list[str], width: int) -> str:
    comment = f"# {vt}" + (f"  ({'; '.join(notes)})" if notes else "")
    return f"    {code.ljust(width)}  {comment}"


def format_program(program: ir.Program, schedule: str = "default") -> str:
    """The program as .ccn text; a pipeline stage's tensors and statements in `on G[k]`
    blocks, each layout written as declared there (without the implied `in G`)."""
    lines = [f"# schedule: {schedule}",
             f"program {program.name}({', '.join(program.size_vars)}) {{"]
    for group in program.groups:
        lines.append(f"    group {group.name} = blocks({group.blocks})")
    for param in program.params:
        default = "" if param.default is None else f" = {_number(param.default)}"
        lines.append(f"    param {param.name}: {param.dtype}{default}")
    for place, tensors in _runs(program.tensors, lambda t: program.placement(t.name)):
        lines += _in_block(place, [f"    {t.role} {t.name}: {_declared_type(t.type, place)}"
                                   for t in tensors])
    if program.stages:
        lines.append("")
    flat = program.flat_stages()
    width = min(max((len(f"{s.name} = {format_stage_value(s)}") for s in flat), default=0), 60)
    for place, stages in _runs(program.stages, program.stage_placement):
        lines += _in_block(place, [line for stage in stages
                                   for line in _format_stage(stage, width, program)])
    lines += _format_results(program)
    lines.append("}")
    return "\n".join(lines)


def _runs(items, place_of) -> list[tuple[ir.Placement | None, list]]:
    """Consecutive items with the same placement, in order."""
    runs: list[tuple[ir.Placement | None, list]] = []
    for item in items:
        place = place_of(item)
        if runs and runs[-1][0] == place:
            runs[-1][1].append(item)
        else:
            runs.append((place, [item]))
    return runs


def _in_block(place: ir.Placement | None, lines: list[str]) -> list[str]:
    if place is None:
        return lines
    return [f"    on {place} {{"] + ["    " + line for line in lines] + ["    }"]


def _declared_type(vt: ValueType, place: ir.Placement | None) -> ValueType:
    if place is None or vt.layout.group != place.group:
        return vt
    return replace(vt, layout=replace(vt.layout, group=None))


def _format_stage(stage: ir.Stage, width: int, program: ir.Program) -> list[str]:
    if isinstance(stage, ir.MicroBatchStage):
        head = (f"    # {stage.name} = microbatch({stage.parts[0].name}, ..., "
                f"{stage.parts[-1].name}), chunks {stage.chunks}")
        place_of = program.stage_placement if program.stage_placement(stage) is None \
            else (lambda part: None)
        return [head] + [line for place, parts in _runs(stage.parts, place_of)
                         for line in _in_block(place, [
                             line for part in parts
                             for line in _format_stage(part, width, program)])]
    if isinstance(stage, ir.GROUPS):
        kind = "fuse" if isinstance(stage, ir.FusedStage) else "overlap"
        chunks = stage.chunks if stage.chunks is not None else "auto"
        members = ", ".join(p.name for p in stage.parts)
        head = f"    # {stage.name} = {kind}({members}), chunks {chunks}"
        return [head] + [line for part in stage.parts
                         for line in _format_stage(part, width, program)]
    code = f"{stage.name} = {format_stage_value(stage)}"
    return [_annotated(code, stage.type, _cross_rank_notes(stage), width)]


def _format_results(program: ir.Program) -> list[str]:
    lines = []
    if program.outputs:
        renamed = [f"{name} from {value}" for name, value in program.outputs if name != value]
        note = f"  # written as {', '.join(renamed)}" if renamed else ""
        lines.append(f"    output {', '.join(name for name, _ in program.outputs)}{note}")
    moved = [f"{state} <- {value}" for state, value in program.state_updates
             if (program.stage(value) is None or
                 getattr(program.stage(value), "state", None) != state)]
    if moved:
        lines.append(f"    # next state values: {', '.join(moved)}")
    return lines
