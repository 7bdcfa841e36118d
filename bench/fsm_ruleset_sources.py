"""The real rule sets of bench/fsm_rulesets.py as .fsm text: rebar's 53 regexes, Nosey
Parker's 189 secret-detection rules (with their examples), and uap-core's user-agent
parsing regexes.

rebar and Nosey Parker: data beside the repository (<repo>/../shared/data), or
$RULESET_DATA. uap-core: Debian's `uap-core` package (installed by the bench target),
or $UAP_CORE.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("RULESET_DATA", REPO.parent / "shared" / "data"))
UAP_CORE = Path(os.environ.get("UAP_CORE", "/usr/share/uap-core"))


@dataclass(frozen=True)
class Rule:
    tag: str
    regex: str
    flags: str = ""
    examples: tuple[str, ...] = field(default=())
    negative_examples: tuple[str, ...] = field(default=())


def rebar_rules(folder: Path = DATA / "rebar") -> list[Rule]:
    """rebar's single-regex benchmarks that Hyperscan accepts (not the empty-matching `.*`)."""
    with open(folder / "regexes.tsv", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    rules, seen = [], set()
    for row in rows:
        if row["regex"] in (".*", "(?s).*"):  # Hyperscan: matches the empty buffer
            continue
        tag = "r_" + row["name"].replace("/", "_").replace("-", "_")
        while tag in seen:
            tag += "_"
        seen.add(tag)
        rules.append(Rule(tag, row["regex"], "" if row["flags"] == "-" else row["flags"]))
    return rules


def noseyparker_rules(folder: Path = DATA / "noseyparker" / "rules") -> list[Rule]:
    """Every Nosey Parker rule, in file order (files sorted by name); tags from the ids."""
    import yaml

    rules = []
    for path in sorted(folder.glob("*.yml")):
        for entry in yaml.safe_load(path.read_text())["rules"]:
            tag = entry["id"].replace(".", "_").replace("-", "_")
            rules.append(Rule(tag, entry["pattern"], "",
                              tuple(entry.get("examples") or ()),
                              tuple(entry.get("negative_examples") or ())))
    return rules


def uap_rules(folder: Path = UAP_CORE) -> list[Rule]:
    """Every regex of uap-core's regexes.yaml: user agents, then operating systems, then
    devices, in file order (`regex_flag: 'i'` is the `i` flag)."""
    import yaml

    document = yaml.safe_load((folder / "regexes.yaml").read_text())
    rules = []
    for section in ("user_agent_parsers", "os_parsers", "device_parsers"):
        for index, entry in enumerate(document[section]):
            rules.append(Rule(f"{section.split('_')[0]}_{index}", entry["regex"],
                              "i" if entry.get("regex_flag") == "i" else ""))
    return rules


def uap_agents(folder: Path = UAP_CORE) -> list[bytes]:
    """uap-core's test user agents (its two plain-text lists), one a line."""
    texts = [(folder / "test_resources" / name).read_bytes()
             for name in ("pgts_browser_list.txt", "firefox_user_agent_strings.txt")]
    return [line for text in texts for line in text.splitlines() if line.strip()]


def hyperscan_flags(rule: Rule) -> int:
    import hyperscan

    return ((hyperscan.HS_FLAG_CASELESS if "i" in rule.flags else 0)
            | (hyperscan.HS_FLAG_DOTALL if "s" in rule.flags else 0)
            | (hyperscan.HS_FLAG_MULTILINE if "m" in rule.flags else 0))


def hyperscan_matches(rules: list[Rule], data: bytes) -> list[tuple[int, int]]:
    """Every (end offset, rule index) Hyperscan reports in block mode, sorted."""
    import hyperscan

    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(expressions=[rule.regex.encode() for rule in rules],
                     ids=list(range(len(rules))), elements=len(rules),
                     flags=[hyperscan_flags(rule) for rule in rules])
    found: list[tuple[int, int]] = []
    database.scan(data, match_event_handler=lambda i, s, e, f, c: found.append((e, i)))
    return sorted(set(found))


def _slashes_escaped(regex: str) -> str:
    """`/` as `\\/` where the regex has not escaped it yet."""
    out, escaped = [], False
    for char in regex:
        out.append("\\/" if char == "/" and not escaped else char)
        escaped = char == "\\" and not escaped
    return "".join(out)


def hyperscan_accepted(rules: list[Rule]) -> list[Rule]:
    """The rules Hyperscan compiles, each alone (it refuses a few of uap-core's as too
    large); both sides then run the same rules."""
    import hyperscan

    kept = []
    for rule in rules:
        database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        try:
            database.compile(expressions=[rule.regex.encode()], ids=[0], elements=1,
                             flags=[hyperscan_flags(rule)])
        except hyperscan.error:
            continue
        kept.append(rule)
    return kept


def fsm_source(name: str, rules: list[Rule]) -> str:
    """A `patterns` block, as the text boostfsm reads from a file (every byte one Latin-1
    character: a regex's UTF-8 bytes stand for themselves, as Hyperscan reads them);
    slashes escaped (those already escaped kept); multi-line (x-mode) regexes keep their lines."""
    lines = []
    for rule in rules:
        regex = _slashes_escaped(rule.regex.encode().decode("latin-1")).rstrip("\n")
        lines.append(f"    {rule.tag} /{regex}/{rule.flags}")
    return f"patterns {name} {{\n" + "\n".join(lines) + "\n}\n"


def parsable(rules: list[Rule]) -> list[Rule]:
    """The rules boostfsm parses, each alone (the others are counted, not run)."""
    from parafuse.fsm_compiler.pipeline import parse_file
    from parafuse.grammar.diagnostics import CompileError, SourceFile

    kept = []
    for rule in rules:
        try:
            parse_file(SourceFile("rule.fsm", fsm_source("one", [rule])))
        except CompileError:
            continue
        kept.append(rule)
    return kept
