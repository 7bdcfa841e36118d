"""Parse `.fsm` text into the AST of `fsm_ast.py` (docs/fsm-language.md).

Syntax errors come from Lark, translated into words by `lark_errors`; the contents
of byte literals, regexes and option values are checked here, each error at its
own location. Semantic checks (states, coverage, reachability) are in fsm_compiler.
"""

from __future__ import annotations

import functools
from pathlib import Path

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import VisitError

from .diagnostics import CompileError, Location, SourceFile, location_of_offsets, raise_all
from .fsm_ast import (
    ByteRange,
    ByteSet,
    ExplicitMachine,
    FsmFile,
    NameRef,
    OptionsBlock,
    OptionSetting,
    PatternDecl,
    PatternSet,
    StateDecl,
    TokenRule,
    TokenSet,
    Transition,
)
from .fsm_literals import (
    closing_slash,
    is_closed_quote,
    offset_location,
    parse_byte_literal,
    split_regex_literal,
)
from .lark_errors import Vocabulary, parse_or_raise, token_location
from .regex_parser import parse_regex, spans_lines_allowed

FSM_VOCABULARY = Vocabulary(
    words={
        "NAME": "a name",
        "CHAR": "a quoted byte such as 'a'",
        "HEX": "a hex byte such as 0x41",
        "INT": "a number",
        "REGEX": "a regex /.../",
        "ANY_BYTE": "'_'",
    },
)


class _UnterminatedLiteral(Exception):
    """Raised while lexing, before the parser trips over what an unclosed literal swallowed."""

    def __init__(self, token: Token, message: str) -> None:
        super().__init__(message)
        self.token = token
        self.message = message


def _check_char_closed(token: Token) -> Token:
    if not is_closed_quote(str(token)):
        raise _UnterminatedLiteral(token, "unterminated byte literal: add the closing quote")
    return token


def _check_regex_closed(token: Token) -> Token:
    if closing_slash(str(token)) is None:
        raise _UnterminatedLiteral(token, "unterminated regex: add the closing '/' (write "
                                          "'\\/' for a slash inside the regex)")
    return token


@functools.cache
def fsm_lark_parser() -> Lark:
    grammar = (Path(__file__).parent / "fsm.lark").read_text()
    return Lark(grammar, parser="lalr", lexer="contextual", propagate_positions=True,
                lexer_callbacks={"CHAR": _check_char_closed, "REGEX": _check_regex_closed})


def parse_fsm(source: SourceFile) -> FsmFile:
    """Parse a whole `.fsm` file (regexes included); raise a located CompileError."""
    try:
        tree = parse_or_raise(fsm_lark_parser(), source, FSM_VOCABULARY)
        transformer = _FsmTransformer(source)
        items = transformer.transform(tree)
        raise_all(transformer.regex_errors)
    except _UnterminatedLiteral as problem:
        start = problem.token.start_pos
        raise CompileError(problem.message,
                           location_of_offsets(source, start, start + 1)) from None
    except VisitError as wrapped:  # Lark wraps what the transformer raises
        if isinstance(wrapped.orig_exc, CompileError):
            raise wrapped.orig_exc from None
        raise
    return FsmFile(source, tuple(items))


@v_args(meta=True)
class _FsmTransformer(Transformer):
    def __init__(self, source: SourceFile) -> None:
        super().__init__()
        self.source = source
        self.regex_errors: list[CompileError] = []  # every bad regex, reported together

    def loc(self, meta) -> Location:
        return token_location(self.source, meta)

    def name(self, token: Token) -> NameRef:
        location = token_location(self.source, token)
        if str(token) == "_":
            raise CompileError("'_' alone is not a name (it means 'every other byte')",
                               location)
        return NameRef(str(token), location)

    def start(self, meta, items):
        return items

    def machine(self, meta, children) -> ExplicitMachine:
        name, *body = children
        starts = tuple(ref for kind, ref in body if kind == "start")
        defaults = tuple(ref for kind, ref in body if kind == "default")
        states = tuple(ref for kind, ref in body if kind == "state")
        return ExplicitMachine(self.name(name), starts, defaults, states, self.loc(meta))

    def start_decl(self, meta, children):
        return ("start", self.name(children[0]))

    def default_decl(self, meta, children):
        return ("default", self.name(children[0]))

    def state_decl(self, meta, children):
        name, *rest = children
        tags: tuple[NameRef, ...] = ()
        if rest and isinstance(rest[0], tuple):
            tags, rest = rest[0], rest[1:]
        return ("state", StateDecl(self.name(name), tags, tuple(rest), self.loc(meta)))

    def report_clause(self, meta, children) -> tuple[NameRef, ...]:
        return tuple(self.name(token) for token in children)

    def transition(self, meta, children) -> Transition:
        byte_set, target = children
        return Transition(byte_set, self.name(target), self.loc(meta))

    def byte_range(self, meta, children) -> ByteSet:
        values = [parse_byte_literal(token, token_location(self.source, token))
                  for token in children]
        location = self.loc(meta)
        if values[0] > values[-1]:
            raise CompileError(f"byte range out of order: 0x{values[0]:02x} is after "
                               f"0x{values[-1]:02x}", location)
        return ByteSet((ByteRange(values[0], values[-1], location),), False, location)

    def union_range(self, meta, children) -> ByteSet:
        return self.byte_range(meta, children)

    def byte_union(self, meta, children) -> ByteSet:
        ranges = tuple(r for byte_set in children for r in byte_set.ranges)
        return ByteSet(ranges, False, self.loc(meta))

    def rest_of_bytes(self, meta, children) -> ByteSet:
        return ByteSet((), True, self.loc(meta))

    def patterns(self, meta, children) -> PatternSet:
        name, *patterns = children
        return PatternSet(self.name(name), tuple(patterns), self.loc(meta))

    def pattern(self, meta, children) -> PatternDecl:
        tag_token, regex_token = children
        regex_location = token_location(self.source, regex_token)
        text, flags = split_regex_literal(str(regex_token), regex_location)
        try:
            if "\n" in text and not spans_lines_allowed(text, flags):
                raise CompileError(
                    "this regex runs onto the next line: only an extended regex (flag 'x', or "
                    "a leading '(?x)') may span lines", offset_location(
                        str(regex_token), regex_location, 1 + text.index("\n")),
                    hint="close the regex with '/' on its line, or add the flag x")
            regex = parse_regex(text, flags, regex_location.shifted(1))
        except CompileError as error:  # the file's other regexes are still parsed
            self.regex_errors.append(error)
            regex = None
        return PatternDecl(self.name(tag_token), regex, text, flags, self.loc(meta))

    def tokens(self, meta, children) -> TokenSet:
        name, *rules = children
        return TokenSet(self.name(name), tuple(rules), self.loc(meta))

    def skip_mark(self, meta, children) -> bool:
        return True

    def token_rule(self, meta, children) -> TokenRule:
        skip = children[0] is True
        kind_token, regex_token = children[1:] if skip else children
        regex_location = token_location(self.source, regex_token)
        text, flags = split_regex_literal(str(regex_token), regex_location)
        try:
            regex = parse_regex(text, flags, regex_location.shifted(1))
        except CompileError as error:  # the file's other regexes are still parsed
            if "can match the empty string" in error.message:
                error = CompileError("a token rule cannot match the empty string: the "
                                     "tokenizer would make no progress", error.location,
                                     hint="make every alternative match at least one byte, "
                                          "e.g. '+' instead of '*'")
            self.regex_errors.append(error)
            regex = None
        return TokenRule(self.name(kind_token), skip, regex, text, flags, self.loc(meta))

    def options(self, meta, children) -> OptionsBlock:
        return OptionsBlock(tuple(children), self.loc(meta))

    def option(self, meta, children) -> OptionSetting:
        key, value = children
        value_location = token_location(self.source, value)
        return OptionSetting(self.name(key), str(value), value_location, self.loc(meta))
