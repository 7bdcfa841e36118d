"""Token sets (docs/fsm-language.md section 5): rules -> one tokenizer DFA.

The tokenizer DFA reads one token: it starts at the token's first byte (every rule
is anchored there, so no rule may start later), and a state *accepts* rule `r`
when the bytes read so far match `r` entirely and no earlier rule matches them
(the first rule in the file wins ties). Maximal munch is then: run the DFA from
the token's start until it dies, and cut the token at the last accepting state.

States are numbered for the runtime: the dead state (no rule can match any more)
is 0 when it exists, then the live non-accepting states in breadth-first order,
then the accepting states; the start state is given separately.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from parafuse.grammar.diagnostics import CompileError, CompileWarning, Location, Note
from parafuse.grammar.fsm_ast import TokenRule, TokenSet
from parafuse.grammar.regex_ast import (
    Alternation,
    Assertion,
    ByteClass,
    Concat,
    Empty,
    Regex,
    RegexNode,
    Repeat,
    is_nullable,
)

from ..automata.byte_classes import partition_by_columns
from ..automata.dfa import StateLimitExceeded, subset_construction
from ..automata.minimise import breadth_first_order, minimise, renumber
from ..automata.nfa import build_position_automaton
from ..options import MachineOptions

ERROR_KIND = "error"
NO_RULE = -1
_BYTE_NODES = (ByteClass, Empty, Concat, Alternation, Repeat)


@dataclass(frozen=True, eq=False)
class CompiledTokenSet:
    """A token set's tokenizer DFA and its kinds.

        next_state = transitions[state, byte_class[byte]]
        accept_rule[state]: the rule a token ending in `state` has (NO_RULE: none)
    """

    name: str
    rule_kinds: tuple[str, ...]  # every rule's kind, in file order
    rule_skip: tuple[bool, ...]
    start: int
    dead: int  # the state no rule can leave (NO_RULE when every state can still accept)
    byte_class: np.ndarray  # (256,) uint8
    transitions: np.ndarray  # (states, classes) int32
    accept_rule: np.ndarray  # (states,) int32
    options: MachineOptions
    location: Location

    kind = "tokens"

    @property
    def state_count(self) -> int:
        return int(self.transitions.shape[0])

    @property
    def class_count(self) -> int:
        return int(self.transitions.shape[1])

    @property
    def kind_names(self) -> tuple[str, ...]:
        """The kinds a run reports: the non-skip rules in file order, then `error`."""
        return tuple(kind for kind, skip in zip(self.rule_kinds, self.rule_skip)
                     if not skip) + (ERROR_KIND,)

    @property
    def rule_output(self) -> np.ndarray:
        """Per rule: its index in kind_names, or NO_RULE for a skip rule."""
        output, emitted = [], 0
        for skip in self.rule_skip:
            output.append(NO_RULE if skip else emitted)
            emitted += not skip
        return np.array(output, dtype=np.int32)

    @property
    def error_kind(self) -> int:
        return len(self.kind_names) - 1


def check_token_set(token_set: TokenSet) -> None:
    """The checks of section 5: rules present, kinds unique and not `error`, no assertions,
    no rule matching the empty string."""
    if not token_set.rules:
        raise CompileError(f"token set '{token_set.name.name}' has no rules",
                           token_set.name.location, hint="add lines '[skip] KIND /REGEX/'")
    seen: dict[str, TokenRule] = {}
    for rule in token_set.rules:
        kind = rule.kind
        if kind.name == ERROR_KIND:
            raise CompileError("a token kind cannot be named 'error': that kind is reserved "
                               "for bytes no rule matches", kind.location,
                               hint="rename this kind, e.g. 'error_token'")
        if kind.name == "skip":
            raise CompileError("a token kind cannot be named 'skip': it is the keyword that "
                               "marks a rule whose tokens are not emitted", kind.location,
                               hint="rename this kind, e.g. 'skipped'")
        first = seen.setdefault(kind.name, rule)
        if first is not rule:
            raise CompileError(f"token kind '{kind.name}' is used twice in token set "
                               f"'{token_set.name.name}'", kind.location,
                               notes=[Note("first used here", first.kind.location)],
                               hint="give each rule its own kind, or join the regexes "
                                    "with '|'")
        _check_rule_regex(rule.regex)


def _check_rule_regex(regex: Regex) -> None:
    _check_no_assertion(regex.body)
    if is_nullable(regex.body):
        raise CompileError("a token rule cannot match the empty string: the tokenizer "
                           "would make no progress", regex.location,
                           hint="make every alternative match at least one byte")


def _check_no_assertion(node: RegexNode) -> None:
    """Every node of a token rule consumes bytes; anything else is an assertion."""
    if not isinstance(node, _BYTE_NODES):
        raise _assertion_error(node.location)
    children = (node.items if isinstance(node, Concat) else
                node.alternatives if isinstance(node, Alternation) else
                (node.item,) if isinstance(node, Repeat) else ())
    for child in children:
        _check_no_assertion(child)


def _assertion_error(location: Location) -> CompileError:
    return CompileError("assertions (^ $ \\A \\z \\Z \\b \\B) are not allowed in token rules: "
                        "a token starts where the previous one ended", location,
                        hint="remove the assertion; write the context as bytes of the rule, "
                             "or as a rule of its own")


def compile_token_set(token_set: TokenSet, options: MachineOptions,
                      warnings: list[CompileWarning] | None = None) -> CompiledTokenSet:
    """Check the rules and build the minimal tokenizer DFA; a rule that never wins becomes
    a warning."""
    check_token_set(token_set)
    anchored = [(index, _anchored(rule.regex)) for index, rule in enumerate(token_set.rules)]
    try:
        dfa = subset_construction(build_position_automaton(anchored), options.max_states)
    except StateLimitExceeded:
        raise CompileError(f"token set '{token_set.name.name}' needs more than "
                           f"{options.max_states} DFA states (max_states)",
                           token_set.name.location,
                           hint="raise 'max_states' in an options block") from None
    winners = [frozenset({min(reports.now)}) if reports.now else frozenset()
               for reports in dfa.state_reports]
    if warnings is not None:
        warnings += _rules_that_never_win(token_set, [reports.now for reports in dfa.state_reports])
    transitions, tags, start = minimise(dfa.transitions, winners, 0)
    order = _runtime_order(transitions, tags, start)
    transitions, tags = renumber(transitions, tags, order)
    partition, class_table = partition_by_columns(transitions[:, dfa.partition.byte_class])
    accept = np.array([min(t) if t else NO_RULE for t in tags], dtype=np.int32)
    dead = _dead_state(class_table, accept)
    return CompiledTokenSet(
        name=token_set.name.name,
        rule_kinds=tuple(rule.kind.name for rule in token_set.rules),
        rule_skip=tuple(rule.skip for rule in token_set.rules),
        start=order.index(start), dead=dead,
        byte_class=partition.byte_class, transitions=class_table.astype(np.int32),
        accept_rule=accept, options=options, location=token_set.location)


def _rules_that_never_win(token_set: TokenSet, accepting: list) -> list[CompileWarning]:
    """A warning per rule that no token can have: wherever it matches, an earlier rule
    matches the same text and wins the tie (as flex's "rule cannot be matched").
    `accepting`: per DFA state, the rules whose match ends there."""
    rules = token_set.rules
    winning = {min(now) for now in accepting if now}
    found = []
    for index, rule in enumerate(rules):
        if index in winning:
            continue
        earlier = sorted({min(now) for now in accepting if index in now})
        names = ", ".join(f"'{rules[e].kind.name}'" for e in earlier)
        found.append(CompileWarning(
            f"rule '{rule.kind.name}' never makes a token: every text it matches is matched "
            f"by an earlier rule ({names}), which wins a tie", rule.kind.location))
    return found


def _anchored(regex: Regex) -> Regex:
    """The rule anchored at the token's start: `\\A` before it, so that its first byte
    can only be the first byte the tokenizer DFA reads (no unanchored prefix)."""
    start = Assertion("A", False, regex.location)
    return replace(regex, body=Concat((start, regex.body), regex.location))


def _runtime_order(transitions: np.ndarray, tags, start: int) -> list[int]:
    """Dead state first, live non-accepting states, then accepting ones (each in BFS order)."""
    reachable = breadth_first_order(transitions, start)
    dead = [s for s in reachable if not tags[s] and (transitions[s] == s).all()]
    waiting = [s for s in reachable if not tags[s] and s not in dead]
    accepting = [s for s in reachable if tags[s]]
    return dead + waiting + accepting


def _dead_state(transitions: np.ndarray, accept: np.ndarray) -> int:
    if transitions.shape[0] and accept[0] == NO_RULE and (transitions[0] == 0).all():
        return 0
    return NO_RULE
