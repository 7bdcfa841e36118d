"""Hypothesis strategies: random well-typed .ccn programs and random schedules for them.

Programs are element-wise DAGs over local, replicated and sliced 1-D tensors of
size N, with params, allreduce / reducescatter / allgather, scalar reductions
(`norm`, `sum`, `amax`), dropout and state updates. They are written as source
text, so the front end checks them exactly as it checks a user's file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hypothesis import strategies as st

UNARY = ["tanh({})", "relu({})", "abs({})", "sqrt(abs({}) + 1)", "-{}"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "max({}, {})", "min({}, {})"]
REDUCTIONS = ["norm({})", "abs(sum({}))", "abs(amax({}))"]


@dataclass
class ProgramBuilder:
    lines: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)  # name -> replicated|sliced|local
    stages: list[str] = field(default_factory=list)
    allreduces: list[str] = field(default_factory=list)
    gathers: list[str] = field(default_factory=list)
    states: list[str] = field(default_factory=list)
    updated: set[str] = field(default_factory=set)
    reads: dict[str, set[str]] = field(default_factory=dict)
    elementwise: set[str] = field(default_factory=set)
    code: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, layout: str, code: str) -> None:
        self.lines.append(f"    {name} = {code}")
        self.reads[name] = set(re.findall(r"[A-Za-z_]\w*", code)) & set(self.values)
        self.values[name] = layout
        self.code[name] = code
        self.stages.append(name)
        if not re.match(r"(allreduce|reducescatter|allgather)\(", code):
            self.elementwise.add(name)

    def of(self, layouts: tuple[str, ...]) -> list[str]:
        return [n for n, lay in self.values.items() if lay in layouts]


def _declarations(b: ProgramBuilder, draw) -> None:
    b.lines += ["    param a: f32 = 0.5", "    param p: f32 = 0.25"]
    dtype = draw(st.sampled_from(["f32", "f32", "f16", "bf16"]))
    b.lines.append(f"    input g: {dtype}[N] local")
    b.lines.append("    input h: f32[N] local")
    b.lines.append("    input r: f32[N] replicated")
    b.lines.append("    input s: f32[N] sliced")
    b.values.update({"g": "local", "h": "local", "r": "replicated", "s": "sliced"})
    for name in ("w", "m"):
        b.lines.append(f"    state {name}: f32[N] replicated")
        b.values[name] = "replicated"
        b.states.append(name)


def _join(*layouts: str) -> str:
    if "sliced" in layouts:
        return "sliced"
    return "local" if "local" in layouts else "replicated"


def _elementwise(b: ProgramBuilder, draw, name: str) -> None:
    layout = draw(st.sampled_from(["replicated", "sliced", "local"]))
    compatible = {"replicated": ("replicated",), "sliced": ("replicated", "sliced"),
                  "local": ("replicated", "local")}[layout]
    pool = b.of(compatible)
    recent = [n for n in b.stages[-2:] if b.values[n] in compatible]
    if recent and draw(st.booleans()):  # chains make reorder and fuse meaningful
        first = draw(st.sampled_from(recent))
    else:
        first = draw(st.sampled_from(b.of((layout,)) or pool))
    second = draw(st.sampled_from(pool + ["a", "2"]))
    result = _join(b.values[first], b.values.get(second, "replicated"))
    code = draw(st.sampled_from(BINARY)).format(first, second)
    if draw(st.booleans()):
        code = draw(st.sampled_from(UNARY)).format(f"({code})")
    if draw(st.integers(0, 4)) == 0:
        sources = ("replicated", "sliced", "local") if result == "local" else ("replicated",
                                                                                "sliced")
        reduced = draw(st.sampled_from(b.of(sources)))
        code = f"({code}) / (1 + {draw(st.sampled_from(REDUCTIONS)).format(reduced)})"
    if draw(st.integers(0, 5)) == 0:
        code = f"dropout({code}, p)"
    b.add(name, result, code)


def _collective(b: ProgramBuilder, draw, name: str) -> None:
    kind = draw(st.sampled_from(["allreduce", "reducescatter", "allgather"]))
    if kind == "allgather" and b.of(("sliced",)):
        b.add(name, "replicated", f"allgather({draw(st.sampled_from(b.of(('sliced',))))})")
        b.gathers.append(name)
        return
    source = draw(st.sampled_from(b.of(("local",))))
    if kind == "reducescatter":
        b.add(name, "sliced", f"reducescatter(sum, {source})")
        return
    op = draw(st.sampled_from(["sum", "sum", "max", "avg"]))
    b.add(name, "replicated", f"allreduce({op}, {source})")
    b.allreduces.append(name)


def _update(b: ProgramBuilder, draw, name: str) -> bool:
    free = [s for s in b.states if s not in b.updated]
    if not free:
        return False
    state = draw(st.sampled_from(free))
    recent = [n for n in b.stages[-2:] if b.values[n] == "replicated"]
    other = draw(st.sampled_from(recent if recent and draw(st.booleans())
                                 else b.of(("replicated",))))
    b.add(name, "replicated", f"update({state}, {state} * a + {other})")
    b.updated.add(state)
    return True


@st.composite
def programs(draw) -> tuple[str, ProgramBuilder]:
    """(source text of `program rand(N)`, what it declared)."""
    b = ProgramBuilder()
    _declarations(b, draw)
    for index in range(draw(st.integers(2, 8))):
        name = f"t{index}"
        kind = draw(st.sampled_from(["elementwise", "elementwise", "collective", "update",
                                     "allreduce"]))
        if kind == "allreduce" or (index == 0 and draw(st.booleans())):
            b.add(name, "replicated", f"allreduce(sum, {draw(st.sampled_from(b.of(('local',))))})")
            b.allreduces.append(name)
            continue
        if kind == "update" and _update(b, draw, name):
            continue
        (_collective if kind == "collective" else _elementwise)(b, draw, name)
    outputs = draw(st.lists(st.sampled_from(b.stages), unique=True, max_size=3))
    body = "\n".join(b.lines + ([f"    output {', '.join(outputs)}"] if outputs else []))
    return f"program rand(N) {{\n{body}\n}}\n", b


def _fresh(count: int, taken: set[str]) -> list[str]:
    names = [f"n{len(taken) + i}" for i in range(count)]
    taken.update(names)
    return names


@dataclass
class ScheduleState:
    """What the generated directives have done so far, to pick plausible arguments."""

    b: ProgramBuilder
    stages: list[str]
    reads: dict[str, set[str]]
    gathers: list[str]
    allreduces: list[str]
    grouped: list[str] = field(default_factory=list)
    taken: set[str] = field(default_factory=set)


def _split(state: ScheduleState, draw) -> str:
    target = draw(st.sampled_from(state.allreduces))
    state.allreduces.remove(target)
    state.stages.remove(target)
    rs, ag = _fresh(2, state.taken)
    for read in state.reads.values():
        if target in read:
            read.add(ag)
    state.gathers.append(ag)
    state.stages += [rs, ag]
    return f"{rs}, {ag} = split({target})"


def _reorder(state: ScheduleState, draw) -> str | None:
    gather = draw(st.sampled_from(state.gathers))
    state.gathers.remove(gather)  # it may be gone after the reorder
    reached, listed = {gather}, []
    for name in state.stages:
        local = any(state.b.values.get(r) == "local" for r in state.reads.get(name, ()))
        if name in state.b.elementwise and state.reads.get(name, set()) & reached and \
                not local and (not listed or draw(st.booleans())):
            listed.append(name)
            reached.add(name)
    if not listed:
        return None
    names = _fresh(draw(st.integers(0, len(listed))), state.taken)
    state.stages += names
    left = f"{', '.join(names)} = " if names else ""
    return f"{left}reorder({gather}, {', '.join(listed)})"


def _fuse(state: ScheduleState, draw) -> str:
    start = draw(st.integers(0, len(state.stages) - 2))
    group = state.stages[start:start + draw(st.integers(2, 5))]
    state.grouped.extend(group)
    return f"fuse({', '.join(group)})"


def _overlap(state: ScheduleState, draw) -> str | None:
    """A producer and its consumer, neither grouped yet (None where there is none)."""
    edges = [(p, c) for c, read in state.reads.items() for p in read
             if p in state.stages and c in state.stages and not {p, c} & set(state.grouped)]
    if not edges:
        return None
    p, c = draw(st.sampled_from(edges))
    state.grouped += [p, c]
    return f"overlap({p}, {c})"


def _tune(state: ScheduleState, draw) -> str:
    target = draw(st.sampled_from(state.grouped or state.stages))
    return f"tune({target}, chunks = {draw(st.integers(1, 5))})"


def _shardable(state: ScheduleState) -> list[str]:
    """States that no stage but their own update reads (the others are read whole)."""
    return [s for s in state.b.states
            if all(s not in read or code.startswith(f"update({s},")
                   for name, read in state.reads.items()
                   for code in [state.b.code.get(name, "")])]


DIRECTIVE_ORDER = ["split", "reorder", "shard", "fuse", "overlap", "tune"]


@st.composite
def schedules(draw, b: ProgramBuilder) -> str:
    """A schedule of 1 to 5 directives whose arguments are plausible for the program."""
    state = ScheduleState(b, list(b.stages), {k: set(v) for k, v in b.reads.items()},
                          list(b.gathers), list(b.allreduces))
    lines = []
    kinds = draw(st.lists(st.sampled_from(DIRECTIVE_ORDER), min_size=1, max_size=5))
    if b.allreduces and draw(st.booleans()):
        kinds = ["split", "reorder"] + kinds
    if "tune" in kinds and not {"fuse", "overlap"} & set(kinds):  # tune needs a group
        kinds.insert(kinds.index("tune"), draw(st.sampled_from(["fuse", "overlap"])))
    if draw(st.integers(0, 4)):  # mostly in the order a performance engineer writes them
        kinds.sort(key=DIRECTIVE_ORDER.index)
    for kind in kinds:
        if kind == "split" and state.allreduces:
            lines.append(_split(state, draw))
        elif kind == "reorder" and state.gathers:
            line = _reorder(state, draw)
            lines += [line] if line else []
        elif kind == "shard":
            lines.append(f"shard({draw(st.sampled_from(_shardable(state) or b.states))})")
        elif kind == "fuse" and len(state.stages) >= 2:
            lines.append(_fuse(state, draw))
        elif kind == "overlap" and len(state.stages) >= 2:
            line = _overlap(state, draw)
            lines += [line] if line else []
        elif kind == "tune" and (state.grouped or not draw(st.integers(0, 4))):
            lines.append(_tune(state, draw))
    body = "\n".join(f"    {line}" for line in lines)
    return f"schedule random for rand {{\n{body}\n}}\n"
