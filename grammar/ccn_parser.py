"""Parse .ccn text into the AST of `ccn_ast`, with every syntax error in words."""

from __future__ import annotations

import functools
from pathlib import Path

from lark import Lark, Token, Transformer, v_args
from lark.tree import Meta

from . import ccn_ast as ast
from .diagnostics import Location, SourceFile, location_of_offsets
from .lark_errors import Vocabulary, parse_or_raise

VOCABULARY = Vocabulary(
    words={
        "NAME": "a name",
        "NUMBER": "a number",
        "COMPARE": "a comparison",
        "PLUS": "'+'",
        "MINUS": "'-'",
        "STAR": "'*'",
        "SLASH": "'/'",
    },
    phrases=(
        (frozenset({"PARAM", "INPUT", "STATE", "GROUP", "OUTPUT", "NAME", "ON"}), "a statement", 5),
        (frozenset({"NAME", "NUMBER", "LPAR", "MINUS"}), "an expression", 3),
        (frozenset({"PLUS", "MINUS", "STAR", "SLASH", "COMPARE"}), "an operator", 4),
    ),
)


@functools.cache
def _parser() -> Lark:
    grammar = (Path(__file__).parent / "ccn.lark").read_text()
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=True)


@v_args(meta=True)
class _ToAst(Transformer):
    """Lark tree -> ccn_ast dataclasses. Locations come from `meta` and tokens."""

    def __init__(self, source: SourceFile) -> None:
        super().__init__()
        self.source = source

    def _loc(self, meta: Meta) -> Location:
        return location_of_offsets(self.source, meta.start_pos, meta.end_pos)

    def _tok(self, token: Token) -> Location:
        return location_of_offsets(self.source, token.start_pos, token.end_pos)

    def _ident(self, token: Token) -> ast.Identifier:
        return ast.Identifier(str(token), self._tok(token))

    # -- expressions
    def number(self, meta: Meta, children: list) -> ast.Number:
        return ast.Number(str(children[0]), self._loc(meta))

    def name(self, meta: Meta, children: list) -> ast.NameRef:
        return ast.NameRef(str(children[0]), self._loc(meta))

    def negate(self, meta: Meta, children: list) -> ast.Negate:
        return ast.Negate(children[1], self._loc(meta))

    def binary(self, meta: Meta, children: list) -> ast.Binary:
        left, op, right = children
        return ast.Binary(str(op), left, right, self._loc(meta), self._tok(op))

    compare = binary

    def in_group(self, meta: Meta, children: list) -> ast.InGroup:
        return ast.InGroup(self._ident(children[0]), self._loc(meta))

    def keyword_argument(self, meta: Meta, children: list) -> ast.KeywordArgument:
        return ast.KeywordArgument(self._ident(children[0]), children[1], self._loc(meta))

    def call(self, meta: Meta, children: list) -> ast.Call:
        args = tuple(c for c in children[1:] if c is not None)
        return ast.Call(self._ident(children[0]), args, self._loc(meta))

    # -- declarations and statements
    def signed_number(self, meta: Meta, children: list) -> ast.SignedNumber:
        sign, number = children
        num = ast.Number(str(number), self._tok(number))
        return ast.SignedNumber(sign is not None, num, self._loc(meta))

    def param_default(self, meta: Meta, children: list) -> ast.SignedNumber:
        sign, number = children
        num = ast.Number(str(number), self._tok(number))
        negative = sign is not None and sign.type == "MINUS"
        return ast.SignedNumber(negative, num, self._loc(meta))

    def param_decl(self, meta: Meta, children: list) -> ast.ParamDecl:
        name, dtype, default = children
        return ast.ParamDecl(self._ident(name), self._ident(dtype), default, self._loc(meta))

    def dim(self, meta: Meta, children: list) -> ast.Expr:
        return children[0]

    def tensor_type(self, meta: Meta, children: list) -> tuple:
        return (self._ident(children[0]), tuple(children[1:]))

    def replicated(self, meta: Meta, children: list) -> ast.LayoutSpec:
        return ast.LayoutSpec("replicated", None, self._loc(meta))

    def local(self, meta: Meta, children: list) -> ast.LayoutSpec:
        return ast.LayoutSpec("local", None, self._loc(meta))

    def sliced(self, meta: Meta, children: list) -> ast.LayoutSpec:
        return ast.LayoutSpec("sliced", children[0], self._loc(meta))

    def _tensor_decl(self, role: str, meta: Meta, children: list) -> ast.TensorDecl:
        name, (dtype, dims), layout = children
        return ast.TensorDecl(role, self._ident(name), dtype, dims, layout, self._loc(meta))

    def input_decl(self, meta: Meta, children: list) -> ast.TensorDecl:
        return self._tensor_decl("input", meta, children)

    def state_decl(self, meta: Meta, children: list) -> ast.TensorDecl:
        return self._tensor_decl("state", meta, children)

    def group_decl(self, meta: Meta, children: list) -> ast.GroupDecl:
        name, ctor, count = children
        blocks = ast.Number(str(count), self._tok(count))
        return ast.GroupDecl(self._ident(name), self._ident(ctor), blocks, self._loc(meta))

    def output_decl(self, meta: Meta, children: list) -> ast.OutputDecl:
        return ast.OutputDecl(tuple(self._ident(t) for t in children), self._loc(meta))

    def on_block(self, meta: Meta, children: list) -> ast.OnBlock:
        group, block, *statements = children
        return ast.OnBlock(self._ident(group), ast.Number(str(block), self._tok(block)),
                           tuple(statements), self._loc(meta))

    def targets(self, meta: Meta, children: list) -> tuple[ast.Identifier, ...]:
        return tuple(self._ident(t) for t in children)

    def assignment(self, meta: Meta, children: list) -> ast.Assignment:
        return ast.Assignment(children[0], children[1], self._loc(meta))

    def program(self, meta: Meta, children: list) -> ast.ProgramAst:
        name = self._ident(children[0])
        sizes = tuple(self._ident(c) for c in children[1:] if isinstance(c, Token))
        statements = tuple(c for c in children[1:] if c is not None and not isinstance(c, Token))
        return ast.ProgramAst(name, sizes, statements, self._loc(meta))

    # -- schedules
    def directive(self, meta: Meta, children: list) -> ast.Directive:
        targets, call = children
        return ast.Directive(targets or (), call, self._loc(meta))

    def schedule(self, meta: Meta, children: list) -> ast.ScheduleAst:
        name, program, *directives = children
        return ast.ScheduleAst(self._ident(name), self._ident(program), tuple(directives),
                               self._loc(meta))

    def start(self, meta: Meta, children: list) -> tuple:
        return tuple(children)


def parse_ccn(text: str, filename: str) -> ast.ModuleAst:
    """Parse a whole .ccn file; raises CompileError on the first syntax error."""
    source = SourceFile(filename, text)
    tree = parse_or_raise(_parser(), source, VOCABULARY)
    items = _ToAst(source).transform(tree)
    programs = tuple(i for i in items if isinstance(i, ast.ProgramAst))
    schedules = tuple(i for i in items if isinstance(i, ast.ScheduleAst))
    return ast.ModuleAst(programs, schedules, source)
