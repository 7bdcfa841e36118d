"""AST of a `.fsm` file (docs/fsm-language.md). Every node has a `location`."""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import Location, SourceFile
from .regex_ast import Regex


@dataclass(frozen=True)
class NameRef:
    """A name as written: a state, tag or machine name."""

    name: str
    location: Location


@dataclass(frozen=True)
class ByteRange:
    """Bytes `low..high` inclusive (a single byte has low == high)."""

    low: int
    high: int
    location: Location


@dataclass(frozen=True)
class ByteSet:
    """The left side of a transition; `is_rest` is `_` (every byte not listed otherwise)."""

    ranges: tuple[ByteRange, ...]
    is_rest: bool
    location: Location


@dataclass(frozen=True)
class Transition:
    byte_set: ByteSet
    target: NameRef
    location: Location


@dataclass(frozen=True)
class StateDecl:
    name: NameRef
    tags: tuple[NameRef, ...]
    transitions: tuple[Transition, ...]
    location: Location


@dataclass(frozen=True)
class ExplicitMachine:
    """`machine NAME { ... }`; `starts`/`defaults` keep every occurrence for the checks."""

    name: NameRef
    starts: tuple[NameRef, ...]
    defaults: tuple[NameRef, ...]
    states: tuple[StateDecl, ...]
    location: Location


@dataclass(frozen=True)
class PatternDecl:
    """`TAG /REGEX/FLAGS`, with the regex already parsed."""

    tag: NameRef
    regex: Regex
    text: str
    flags: str
    location: Location


@dataclass(frozen=True)
class PatternSet:
    name: NameRef
    patterns: tuple[PatternDecl, ...]
    location: Location


@dataclass(frozen=True)
class TokenRule:
    """`[skip] KIND /REGEX/FLAGS` of a token set, with the regex already parsed."""

    kind: NameRef
    skip: bool
    regex: Regex
    text: str
    flags: str
    location: Location


@dataclass(frozen=True)
class TokenSet:
    """`tokens NAME { ... }`: a maximal-munch lexer (fsm_compiler/tokens/token_sets.py)."""

    name: NameRef
    rules: tuple[TokenRule, ...]
    location: Location


@dataclass(frozen=True)
class OptionSetting:
    """`KEY VALUE` as written; fsm_compiler/options.py checks both."""

    key: NameRef
    value: str
    value_location: Location
    location: Location


@dataclass(frozen=True)
class OptionsBlock:
    settings: tuple[OptionSetting, ...]
    location: Location


Machine = ExplicitMachine | PatternSet | TokenSet
FileItem = ExplicitMachine | PatternSet | TokenSet | OptionsBlock


@dataclass(frozen=True)
class FsmFile:
    source: SourceFile
    items: tuple[FileItem, ...]

    @property
    def machines(self) -> list[Machine]:
        return [item for item in self.items if not isinstance(item, OptionsBlock)]
