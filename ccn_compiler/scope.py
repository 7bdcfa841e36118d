"""What names mean while a program is checked: params, tensors, stages, groups, sizes."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from parafuse.grammar.diagnostics import CompileError, Location, Note

from . import ir
from .types import ALL_DTYPES, ValueType

ELEMENTWISE_UNARY = ("sqrt", "rsqrt", "exp", "log", "tanh", "abs", "relu", "gelu", "sigmoid")
ELEMENTWISE_BINARY = ("max", "min", "pow")
REDUCTIONS = ("sum", "norm", "amax")
ROW_NORMS = ("layernorm", "rmsnorm")
ROW_FUNCTIONS = ROW_NORMS + ("softmax", "mean")  # functions of each row: ir.RowFunction
COLLECTIVES = ("allreduce", "reducescatter", "allgather", "broadcast", "send")
STAGE_FUNCTIONS = COLLECTIVES + ("matmul", "update")
BUILTINS = (ELEMENTWISE_UNARY + ELEMENTWISE_BINARY + REDUCTIONS + ROW_FUNCTIONS + STAGE_FUNCTIONS
            + ("where", "cast", "dropout", "transpose", "reshape", "slice", "as_sliced",
               "blocks"))
REDUCE_OPS = ("sum", "prod", "max", "min", "avg")
KEYWORDS = ("program", "param", "input", "state", "group", "output", "schedule", "for", "in", "on",
            "replicated", "sliced", "local")
RESERVED = set(KEYWORDS) | set(ALL_DTYPES) | set(REDUCE_OPS) | set(BUILTINS)


def reserved_kind(name: str) -> str | None:
    if name in KEYWORDS:
        return "a keyword"
    if name in ALL_DTYPES:
        return "a dtype name"
    if name in BUILTINS:
        return "a built-in function"
    if name in REDUCE_OPS:
        return "a reduction op"
    return None


def did_you_mean(name: str, candidates: list[str]) -> str | None:
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


@dataclass(frozen=True)
class Binding:
    role: str  # size | param | input | state | stage | group
    type: ValueType | None
    location: Location
    place: ir.Placement | None = None  # the pipeline stage holding it; None: every rank


@dataclass
class Scope:
    """Names defined so far, in source order, and the program-wide counters."""

    program: str
    bindings: dict[str, Binding] = field(default_factory=dict)
    groups: dict[str, ir.Group] = field(default_factory=dict)
    dropout_sites: int = 0
    placement: ir.Placement | None = None  # the `on G[k]` block being checked

    def define(self, name: str, binding: Binding) -> None:
        kind = reserved_kind(name)
        if kind:
            raise CompileError(f"'{name}' is {kind} and cannot name a value", binding.location,
                               hint="choose another name")
        previous = self.bindings.get(name)
        if previous is not None:
            raise CompileError(
                f"'{name}' is already defined in program '{self.program}'", binding.location,
                [Note(f"'{name}' was first defined here", previous.location)],
                hint="names are single-assignment; bind the new value to a new name")
        self.bindings[name] = binding

    def lookup(self, name: str, location: Location) -> Binding:
        binding = self.bindings.get(name)
        if binding is not None:
            return binding
        kind = reserved_kind(name)
        if kind:
            raise CompileError(f"'{name}' is {kind}, not a value", location)
        values = [n for n, b in self.bindings.items() if b.role != "group"]
        raise CompileError(f"unknown name '{name}' in program '{self.program}'", location,
                           hint=did_you_mean(name, values))

    def next_dropout_site(self) -> int:
        self.dropout_sites += 1
        return self.dropout_sites - 1
