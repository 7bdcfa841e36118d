"""Abstract syntax of .ccn files: what was written, with a Location on every node.

The AST is untyped; `ccn_compiler.check_program` turns it into the typed IR.
"""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import Location, SourceFile


@dataclass(frozen=True)
class Identifier:
    name: str
    location: Location


# ---- expressions -------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    text: str
    location: Location

    @property
    def is_integer(self) -> bool:
        return not any(ch in self.text for ch in ".eE")

    @property
    def value(self) -> float | int:
        return int(self.text) if self.is_integer else float(self.text)


@dataclass(frozen=True)
class NameRef:
    name: str
    location: Location


@dataclass(frozen=True)
class Negate:
    operand: Expr
    location: Location


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / < <= > >= == !=
    left: Expr
    right: Expr
    location: Location
    op_location: Location


@dataclass(frozen=True)
class InGroup:
    group: Identifier
    location: Location


@dataclass(frozen=True)
class KeywordArgument:
    name: Identifier
    value: Expr
    location: Location


@dataclass(frozen=True)
class Call:
    function: Identifier
    arguments: tuple[Expr | InGroup | KeywordArgument, ...]
    location: Location


Expr = Number | NameRef | Negate | Binary | Call


# ---- program statements -------------------------------------------------------


@dataclass(frozen=True)
class SignedNumber:
    negative: bool
    number: Number
    location: Location

    @property
    def value(self) -> float | int:
        return -self.number.value if self.negative else self.number.value


@dataclass(frozen=True)
class ParamDecl:
    name: Identifier
    dtype: Identifier
    default: SignedNumber | None
    location: Location


@dataclass(frozen=True)
class LayoutSpec:
    kind: str  # replicated | sliced | local
    dim: SignedNumber | None
    location: Location


@dataclass(frozen=True)
class TensorDecl:
    role: str  # input | state
    name: Identifier
    dtype: Identifier
    dims: tuple[Expr, ...]  # extents: integers, size variables, their sums and products
    layout: LayoutSpec
    location: Location


@dataclass(frozen=True)
class GroupDecl:
    name: Identifier
    constructor: Identifier  # must be `blocks`
    blocks: Number
    location: Location


@dataclass(frozen=True)
class OutputDecl:
    names: tuple[Identifier, ...]
    location: Location


@dataclass(frozen=True)
class Assignment:
    targets: tuple[Identifier, ...]
    value: Expr
    location: Location


@dataclass(frozen=True)
class OnBlock:
    """`on G[k] { ... }`: declarations and statements of block k of group G (a stage)."""

    group: Identifier
    block: Number
    statements: tuple[Statement, ...]  # the checker accepts tensors, outputs, assignments
    location: Location


Statement = ParamDecl | TensorDecl | GroupDecl | OutputDecl | Assignment | OnBlock


@dataclass(frozen=True)
class ProgramAst:
    name: Identifier
    size_vars: tuple[Identifier, ...]
    statements: tuple[Statement, ...]
    location: Location


# ---- schedules ----------------------------------------------------------------


@dataclass(frozen=True)
class Directive:
    targets: tuple[Identifier, ...]
    call: Call
    location: Location

    @property
    def name(self) -> str:
        return self.call.function.name


@dataclass(frozen=True)
class ScheduleAst:
    name: Identifier
    program: Identifier
    directives: tuple[Directive, ...]
    location: Location


@dataclass(frozen=True)
class ModuleAst:
    programs: tuple[ProgramAst, ...]
    schedules: tuple[ScheduleAst, ...]
    source: SourceFile
