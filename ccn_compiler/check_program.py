"""Check a program's AST and build its typed IR (declarations, stages, outputs)."""

from __future__ import annotations

from parafuse.grammar import ccn_ast as ast
from parafuse.grammar.diagnostics import CompileError, Note

from . import ir
from .check_dims import shape_dim
from .check_placement import check_in_block, enter_block, placed_layout, stage_placement
from .check_stages import check_collective, check_matmul, check_update
from .infer_expr import check_expr
from .numerics import dtype_range, fits_dtype
from .scope import COLLECTIVES, Binding, Scope, did_you_mean
from .types import DTYPES, REPLICATED, Layout, ValueType, is_int


def _dtype(ident: ast.Identifier) -> str:
    if ident.name not in DTYPES:
        raise CompileError(f"unknown dtype '{ident.name}'", ident.location,
                           hint=did_you_mean(ident.name, list(DTYPES)) or
                           "dtypes: " + ", ".join(DTYPES))
    return ident.name


def _param(decl: ast.ParamDecl, scope: Scope) -> ir.Param:
    dtype = _dtype(decl.dtype)
    default = None
    if decl.default is not None:
        default = decl.default.value
        if is_int(dtype) and not decl.default.number.is_integer:
            raise CompileError(f"param '{decl.name.name}' is {dtype} but its default is not an "
                               "integer", decl.default.location)
        if not fits_dtype(default, dtype):
            raise CompileError(f"the default of param '{decl.name.name}' does not fit {dtype} "
                               f"({dtype} holds {dtype_range(dtype)})", decl.default.location,
                               hint=f"use a default {dtype} can represent, or a wider dtype")
    vt = ValueType(dtype, (), REPLICATED)
    scope.define(decl.name.name, Binding("param", vt, decl.name.location))
    return ir.Param(decl.name.name, dtype, default, decl.location)


def _dims(decl: ast.TensorDecl, scope: Scope) -> tuple:
    return tuple(shape_dim(dim, scope) for dim in decl.dims)


def _layout(spec: ast.LayoutSpec, rank: int) -> Layout:
    if spec.kind != "sliced":
        return Layout(spec.kind)
    dim = 0 if spec.dim is None else spec.dim.value
    if rank == 0:
        raise CompileError("a scalar cannot be sliced", spec.location,
                           hint="declare it replicated (or local: one value per rank)")
    if not isinstance(dim, int) or not -rank <= dim < rank:
        raise CompileError(f"{spec.kind}({spec.dim.value if spec.dim else 0}) is out of range "
                           f"for a tensor with {rank} dim{'s' if rank != 1 else ''}",
                           spec.location, hint=f"use a dim in [{-rank}, {rank})")
    return Layout("sliced", dim % rank)


def _tensor(decl: ast.TensorDecl, scope: Scope, ordinal: int) -> ir.Tensor:
    dtype = _dtype(decl.dtype)
    dims = _dims(decl, scope)
    vt = ValueType(dtype, dims, placed_layout(_layout(decl.layout, len(dims)), scope.placement))
    scope.define(decl.name.name, Binding(decl.role, vt, decl.name.location, scope.placement))
    return ir.Tensor(decl.name.name, decl.role, vt, ordinal, decl.location)


def _group(decl: ast.GroupDecl, scope: Scope) -> ir.Group:
    if decl.constructor.name != "blocks":
        raise CompileError(f"unknown group constructor '{decl.constructor.name}'",
                           decl.constructor.location, hint="write group G = blocks(K)")
    if not decl.blocks.is_integer or decl.blocks.value < 1:
        raise CompileError("blocks(K) needs a positive integer K", decl.blocks.location)
    group = ir.Group(decl.name.name, decl.blocks.value, decl.location)
    scope.define(group.name, Binding("group", None, decl.name.location))
    scope.groups[group.name] = group
    return group


def _stage(stmt: ast.Assignment, scope: Scope, updated: dict) -> ir.Stage:
    if len(stmt.targets) != 1:
        raise CompileError("a program statement binds one name", stmt.targets[1].location,
                           hint="only schedule directives bind several names")
    target = stmt.targets[0]
    value = stmt.value
    fn = value.function.name if isinstance(value, ast.Call) else None
    if fn in COLLECTIVES:
        stage = check_collective(target.name, value, scope)
    elif fn == "matmul":
        stage = check_matmul(target.name, value, scope)
    elif fn == "update":
        stage = check_update(target.name, value, scope, updated)
    else:
        expr = check_expr(value, scope)
        stage = ir.ElementwiseStage(target.name, expr, expr.type, stmt.location)
    place = stage_placement(stage, scope)
    scope.define(target.name, Binding("stage", stage.type, target.location, place))
    return stage


def _outputs(decls: list[ast.OutputDecl], scope: Scope, stages: list[ir.Stage]) -> tuple:
    names: list[str] = []
    first: dict[str, ast.Identifier] = {}
    updated_states = {s.state for s in stages if isinstance(s, ir.UpdateStage)}
    for decl in decls:
        for ident in decl.names:
            binding = scope.lookup(ident.name, ident.location)
            if ident.name in first:
                raise CompileError(f"'{ident.name}' is listed as an output twice", ident.location,
                                   [Note("first listed here", first[ident.name].location)])
            if binding.role == "state" and ident.name in updated_states:
                raise CompileError(f"state '{ident.name}' is updated, so its new value is an "
                                   "output already", ident.location,
                                   hint="output the name bound to the update instead")
            if binding.role in ("size", "group"):
                raise CompileError(f"'{ident.name}' is a {binding.role}, not a value",
                                   ident.location)
            first[ident.name] = ident
            names.append((ident.name, ident.name))
    return tuple(names)


def check_program(prog: ast.ProgramAst, source) -> ir.Program:
    scope = Scope(prog.name.name)
    for size in prog.size_vars:
        scope.define(size.name, Binding("size", None, size.location))
    params, tensors, groups, stages, output_decls = [], [], [], [], []
    updated: dict = {}
    statements = [(stmt, None) for stmt in prog.statements]
    while statements:
        stmt, block = statements.pop(0)
        scope.placement = block
        if block is not None:
            check_in_block(stmt, scope)
        if isinstance(stmt, ast.OnBlock):
            placement = enter_block(stmt, scope)
            statements[:0] = [(inner, placement) for inner in stmt.statements]
        elif isinstance(stmt, ast.ParamDecl):
            params.append(_param(stmt, scope))
        elif isinstance(stmt, ast.TensorDecl):
            tensors.append(_tensor(stmt, scope, len(tensors)))
        elif isinstance(stmt, ast.GroupDecl):
            groups.append(_group(stmt, scope))
        elif isinstance(stmt, ast.OutputDecl):
            output_decls.append(stmt)
        else:
            stages.append(_stage(stmt, scope, updated))
    outputs = _outputs(output_decls, scope, stages)
    state_updates = tuple((s.state, s.name) for s in stages if isinstance(s, ir.UpdateStage))
    placements = tuple((name, b.place) for name, b in scope.bindings.items() if b.place)
    return ir.Program(prog.name.name, tuple(s.name for s in prog.size_vars), tuple(params),
                      tuple(tensors), tuple(groups), tuple(stages), outputs, state_updates,
                      prog.location, source, placements)
