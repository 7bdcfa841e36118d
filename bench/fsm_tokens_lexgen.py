"""The rules of a token set as a flex (.l) or re2c (.re) lexer, for bench/fsm_tokens.py.

Written from the parsed regexes (flags applied, every class a byte set), so the three
lexers match the same bytes: each byte class becomes `[\\xHH-\\xHH...]` without byte 0
(the inputs hold no NUL; both lexers use it as the end sentinel). Each lexer appends
(start, end, kind) records to a vector, kinds numbered as boostfsm's kind_name; bytes no
rule matches are one-byte errors, merged with an error token ending where they start.
"""

from __future__ import annotations

from parafuse.grammar.fsm_ast import TokenSet
from parafuse.grammar.regex_ast import Alternation, ByteClass, Concat, Empty, RegexNode, Repeat


def _ranges(mask: int) -> list[tuple[int, int]]:
    ranges, byte = [], 1
    while byte < 256:
        if (mask >> byte) & 1:
            low = byte
            while byte + 1 < 256 and (mask >> (byte + 1)) & 1:
                byte += 1
            ranges.append((low, byte))
        byte += 1
    return ranges


def _class(mask: int) -> str:
    parts = "".join(f"\\x{low:02x}" if low == high else f"\\x{low:02x}-\\x{high:02x}"
                    for low, high in _ranges(mask))
    return f"[{parts}]"


def regex_text(node: RegexNode) -> str:
    """flex and re2c share this syntax: classes, juxtaposition, |, (), {m,n}."""
    if isinstance(node, ByteClass):
        return _class(node.byte_mask)
    if isinstance(node, Empty):
        raise ValueError("an empty alternative has no flex/re2c spelling here")
    if isinstance(node, Concat):
        return "".join(regex_text(item) for item in node.items)
    if isinstance(node, Alternation):
        return "(" + "|".join(regex_text(alt) for alt in node.alternatives) + ")"
    assert isinstance(node, Repeat)
    high = "" if node.max_count is None else str(node.max_count)
    count = {(0, ""): "*", (1, ""): "+", (0, "1"): "?"}.get((node.min_count, high),
                                                             f"{{{node.min_count},{high}}}")
    if node.max_count == node.min_count:
        count = f"{{{node.min_count}}}"
    return f"({regex_text(node.item)}){count}"


def _rules(token_set: TokenSet) -> list[tuple[str, str]]:
    """(pattern, action) per rule, kinds numbered as kind_name (non-skip rules in order)."""
    rules, kind = [], 0
    for rule in token_set.rules:
        pattern = "(" + regex_text(rule.regex.body) + ")"
        rules.append((pattern, "pf_skip(LEN);" if rule.skip else f"pf_emit({kind}, LEN);"))
        kind += not rule.skip
    return rules


def error_kind(token_set: TokenSet) -> int:
    return sum(not rule.skip for rule in token_set.rules)


def flex_source(token_set: TokenSet) -> str:
    lines = ["%option noyywrap nounput noinput never-interactive 8bit",
             '%{\n#include "bench_lexer.hpp"\n%}', "%%"]
    for pattern, action in _rules(token_set):
        lines.append(f"{pattern}\t{{ {action.replace('LEN', 'yyleng')} }}")
    lines.append(f".|\\n\t{{ pf_error({error_kind(token_set)}); }}")
    lines.append("%%")
    return "\n".join(lines) + "\n"


def re2c_source(token_set: TokenSet) -> str:
    rules = "\n".join(f"    {pattern} {{ {action.replace('LEN', 'size_t(YYCURSOR - start)')} "
                      "continue; }" for pattern, action in _rules(token_set))
    return f"""#include "bench_lexer.hpp"

void pf_lex(const unsigned char* YYCURSOR, const unsigned char* limit) {{
  const unsigned char* YYMARKER = nullptr;
  for (;;) {{
    const unsigned char* start = YYCURSOR;
    /*!re2c
    re2c:define:YYCTYPE = "unsigned char";
    re2c:yyfill:enable = 0;
{rules}
    [\\x00] {{ if (start == limit) return; pf_error({error_kind(token_set)}); continue; }}
    * {{ pf_error({error_kind(token_set)}); continue; }}
    */
  }}
}}
"""
