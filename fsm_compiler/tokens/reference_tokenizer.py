"""The reference tokenizer: maximal munch in plain Python, the oracle of token sets.

    tokenize(token_set, data) -> [(kind, start, end), ...]   kind indexes kind_names

At position p the token is the longest non-empty b[p..q) some rule matches (the
DFA's last accepting state, which names the first rule in the file among those
matching); skip rules consume without emitting; where no rule matches at p, one
`error` token runs to the next position where some rule matches (or the end).
Slow on purpose (one Python step per byte read, re-reading after every back-up):
it is easy to check by eye, and C++ is tested against it.
"""

from __future__ import annotations

from collections.abc import Iterator

from .token_sets import NO_RULE, CompiledTokenSet

Token = tuple[int, int, int]  # (kind, start, end)


class LongestMatches:
    """Longest matches of one input, memoised by start position."""

    def __init__(self, token_set: CompiledTokenSet, data: bytes) -> None:
        self.table = token_set.transitions[:, token_set.byte_class].tolist()
        self.accept = token_set.accept_rule.tolist()
        self.start, self.dead = token_set.start, token_set.dead
        self.data = bytes(data)
        self.memo: dict[int, tuple[int, int] | None] = {}

    def longest(self, position: int) -> tuple[int, int] | None:
        """(end, rule) of the longest match at `position`, None when no rule matches."""
        if position not in self.memo:
            state, best = self.start, None
            for offset in range(position, len(self.data)):
                state = self.table[state][self.data[offset]]
                if state == self.dead:
                    break
                if self.accept[state] != NO_RULE:
                    best = (offset + 1, self.accept[state])
            self.memo[position] = best
        return self.memo[position]


def token_steps(
    token_set: CompiledTokenSet, data: bytes, begin: int = 0,
    matches: LongestMatches | None = None,
) -> Iterator[Token]:
    """Every token from `begin` on, skip tokens included (their kind is NO_RULE); `matches`
    shares the memo of longest matches between runs over the same data."""
    munch = matches or LongestMatches(token_set, data)
    output = token_set.rule_output.tolist()
    position = begin
    while position < len(data):
        match = munch.longest(position)
        if match is not None:
            end, rule = match
            yield (output[rule], position, end)
        else:
            end = position + 1
            while end < len(data) and munch.longest(end) is None:
                end += 1
            yield (token_set.error_kind, position, end)
        position = end


def tokenize(token_set: CompiledTokenSet, data: bytes) -> list[Token]:
    """The token list of a sequential run (skip tokens left out)."""
    return [token for token in token_steps(token_set, data) if token[0] != NO_RULE]


def kind_counts(token_set: CompiledTokenSet, tokens: list[Token]) -> dict[str, int]:
    counts = dict.fromkeys(token_set.kind_names, 0)
    for kind, _, _ in tokens:
        counts[token_set.kind_names[kind]] += 1
    return counts


def tokens_json(
    token_set: CompiledTokenSet, data: bytes, with_tokens: bool, seconds: float,
    requested_scheme: str,
) -> dict:
    """The runner's JSON object for a reference run of a token set."""
    tokens = tokenize(token_set, data)
    payload: dict = {"machine": token_set.name, "bytes": len(data), "final_state": None,
                     "end": len(data),
                     "counts": kind_counts(token_set, tokens)}
    if with_tokens:
        payload["tokens"] = [[start, end, token_set.kind_names[kind]]
                             for kind, start, end in tokens]
    payload.update({
        "scheme": "reference", "requested_scheme": requested_scheme,
        "reason": "the reference backend tokenizes sequentially in Python",
        "threads": 1, "seconds": seconds,
        "gbps": len(data) / seconds / 1e9 if seconds > 0 else 0.0,
    })
    return payload
