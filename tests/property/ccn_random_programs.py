"""Hypothesis strategies: random well-typed .ccn programs and random schedules for them.

Programs are element-wise DAGs over local, replicated and sliced 1-D tensors of
size N, with params, every element-wise function and dtype of docs/ccn-language.md
section 3.2 (integers and f64 inputs, comparisons giving `bool`, `where`, `cast`),
allreduce / reducescatter / allgather / broadcast, scalar reductions (`norm`, `sum`,
`amax`), dropout and state updates; some add an [N, 3] x [3, 4] `matmul` in one of the
layouts of the matmul table, its allreduce where it gives partial sums, a row-wise
`layernorm` / `rmsnorm`, and reductions of the [N, 4] values along either dim (local
partials along a sliced one, then allreduced) and of their reshapes. They are written as
source text, so the front end checks them exactly as it checks a user's file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hypothesis import strategies as st

UNARY = ["tanh({})", "relu({})", "abs({})", "sqrt(abs({}) + 1)", "-{}", "exp(tanh({}))",
         "log(abs({}) + 1)", "sigmoid({})", "rsqrt(abs({}) + 1)", "pow(abs({}) + 1, 1.5)",
         "gelu({})", "cast({}, f16)", "cast({}, bf16)", "cast({}, f64)"]
BINARY = ["{0} + {1}", "{0} - {1}", "{0} * {1}", "max({0}, {1})", "min({0}, {1})",
          "where({0} < {1}, {0}, {1} * 2)", "{0} / (abs({1}) + 1)"]
REDUCTIONS = ["norm({})", "abs(sum({}))", "abs(amax({}))"]
# The matmul table of section 3.3: (x2 layout, w2 layout, result layout).
MATMULS = [("replicated", "replicated", "replicated"), ("sliced(0)", "replicated", "sliced"),
           ("replicated", "sliced(-1)", "columns"), ("sliced(-1)", "sliced(0)", "local"),
           ("local", "replicated", "local")]
INTEGER = ["{0} * 3 + {1}", "max({0}, {1}) - 1", "min({0}, {1} * 2)", "abs({0}) + {1}"]

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
    special: set[str] = field(default_factory=set)  # integer, bool and [N, 4] values
    integers: dict[str, str] = field(default_factory=dict)  # name -> layout
    booleans: dict[str, str] = field(default_factory=dict)
    matrices: dict[str, str] = field(default_factory=dict)  # name -> layout of an [N, 4]
    matmul: tuple[str, str, str] | None = None  # x2's, w2's and the product's layouts
    pipelined: bool = False  # declares `group half = blocks(2)` for `send`

    def add(self, name: str, layout: str, code: str) -> None:
        self.lines.append(f"    {name} = {code}")
        self.reads[name] = set(re.findall(r"[A-Za-z_]\w*", code)) & set(self.values)
        self.values[name] = layout
        self.code[name] = code
        self.stages.append(name)
        if not re.match(r"(allreduce|reducescatter|allgather)\(", code):
            self.elementwise.add(name)

    def of(self, layouts: tuple[str, ...]) -> list[str]:
        """The floating-point [N] values of these layouts."""
        return [n for n, lay in self.values.items() if lay in layouts and n not in self.special]

    def add_special(self, pool: dict[str, str], name: str, layout: str, code: str) -> None:
        self.add(name, layout, code)
        self.special.add(name)
        pool[name] = layout


def _declarations(b: ProgramBuilder, draw) -> None:
    b.lines += ["    param a: f32 = 0.5", "    param p: f32 = 0.25"]
    dtype = draw(st.sampled_from(["f32", "f32", "f16", "bf16"]))
    b.lines.append(f"    input g: {dtype}[N] local")
    b.lines.append("    input h: f32[N] local")
    b.lines.append(f"    input r: {draw(st.sampled_from(['f32', 'f32', 'f64']))}[N] replicated")
    b.lines.append("    input s: f32[N] sliced")
    b.values.update({"g": "local", "h": "local", "r": "replicated", "s": "sliced"})
    integer = draw(st.sampled_from(["i32", "i64"]))
    b.lines.append(f"    input k: {integer}[N] local")
    b.values["k"] = "local"
    b.special.add("k")
    b.integers["k"] = "local"
    for name in ("w", "m"):
        b.lines.append(f"    state {name}: f32[N] replicated")
        b.values[name] = "replicated"
        b.states.append(name)
    if draw(st.integers(0, 3)) == 0:
        b.pipelined = True
        b.lines.append("    group half = blocks(2)")
    if draw(st.booleans()):
        b.matmul = draw(st.sampled_from(MATMULS))
        b.lines.append(f"    input x2: f32[N, 3] {b.matmul[0]}")
        b.lines.append(f"    input w2: f32[3, 4] {b.matmul[1]}")


def _matrix(b: ProgramBuilder, draw, name: str) -> bool:
    """The [N, 3] x [3, 4] matmul first (then its allreduce where it gives partial sums),
    later row-wise norms (eps a literal or computed in the step) and element-wise stages."""
    if b.matmul is None:
        return False
    if not b.matrices:
        b.add_special(b.matrices, name, b.matmul[2], "matmul(x2, w2)")
        return True
    partials = [m for m, lay in b.matrices.items() if lay == "local"]
    if partials and draw(st.booleans()):
        b.add_special(b.matrices, name, "replicated", f"allreduce(sum, {partials[-1]})")
        b.allreduces.append(name)
        return True
    source = draw(st.sampled_from(list(b.matrices)))
    layout = b.matrices[source]
    if draw(st.integers(0, 3)) == 0:
        _reduced_along_a_dim(b, draw, name, source, layout)
        return True
    rows_whole = layout != "columns"  # a norm's last dim must not be sliced
    if rows_whole and draw(st.booleans()):
        eps = draw(st.sampled_from(["0.00001", "abs(a) * 0.001 + 0.00001"]))
        norm = draw(st.sampled_from(["layernorm", "rmsnorm"]))
        code = f"{norm}({source}, {eps}) * 2 + {source}"
    else:
        code = draw(st.sampled_from(UNARY)).format(f"({source} * a + 1)")
        if draw(st.integers(0, 3)) == 0:
            code = f"dropout({code}, p)"
    b.add_special(b.matrices, name, layout, code)
    return True


def _reduced_along_a_dim(b: ProgramBuilder, draw, name: str, source: str, layout: str) -> None:
    """sum / amax along dim 0 or 1 of an [N, 4] value, or mean along a dim of its reshape to
    [N, 2, 2] (which keeps a sliced dim 0 whole); along a sliced dim each rank's partial
    result is local, and an allreduce completes it."""
    sliced_dim = {"sliced": 0, "columns": 1}.get(layout)
    kind, dim = draw(st.sampled_from([("mean", 1), ("sum", 0), ("amax", -1), ("mean", 2),
                                      ("sum", -1), ("amax", 0)]))
    if kind == "mean":
        if layout == "columns":  # [N, 4] sliced(1) cannot become [N, 2, 2]
            kind, dim = "sum", 0
        else:
            b.add(name, layout, f"mean(reshape({source}, N, 2, 2), {dim}) * 2")
            b.special.add(name)
            return
    partial = sliced_dim is not None and dim % 2 == sliced_dim
    b.add(name, "local" if partial else layout, f"{kind}({source}, {dim}) * 2")
    b.special.add(name)
    if partial:
        total = f"{name}r"
        b.add(total, "replicated", f"allreduce({'max' if kind == 'amax' else 'sum'}, {name})")
        b.special.add(total)


def _join(*layouts: str) -> str:
    if "sliced" in layouts:
        return "sliced"
    return "local" if "local" in layouts else "replicated"


def _elementwise(b: ProgramBuilder, draw, name: str) -> None:
    layout = draw(st.sampled_from(["replicated", "sliced", "local"]))
    compatible = {"replicated": ("replicated",), "sliced": ("replicated", "sliced"),
                  "local": ("replicated", "local")}[layout]
    pool = b.of(compatible)
    recent = [n for n in b.stages[-2:] if b.values[n] in compatible and n not in b.special]
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
        matrices = [m for m, lay in b.matrices.items() if lay != "local" or result == "local"]
        reduced = draw(st.sampled_from(b.of(sources) + matrices))
        code = f"({code}) / (1 + {draw(st.sampled_from(REDUCTIONS)).format(reduced)})"
    code, result = _mix_special(b, draw, code, compatible, result)
    if draw(st.integers(0, 5)) == 0:
        code = f"dropout({code}, p)"
    b.add(name, result, code)


def _mix_special(b: ProgramBuilder, draw, code: str, compatible: tuple[str, ...],
                 result: str) -> tuple[str, str]:
    """Now and then, an integer (int op float is float) or a `where` on a bool; the code
    and its layout."""
    integers = [n for n, lay in b.integers.items() if lay in compatible]
    booleans = [n for n, lay in b.booleans.items() if lay in compatible]
    choice = draw(st.integers(0, 5))
    if choice in (0, 2) and integers:
        name = draw(st.sampled_from(integers))
        mixed = f"({code}) + {name} * 0.01" if choice == 0 else f"({code}) * cast({name}, f32)"
        return mixed, _join(result, b.integers[name])
    if choice == 1 and booleans:
        name = draw(st.sampled_from(booleans))
        return f"where({name}, {code}, -({code}))", _join(result, b.booleans[name])
    return code, result


def _integer(b: ProgramBuilder, draw, name: str) -> None:
    """An integer stage: arithmetic that stays integral, or an integer collective."""
    locals_ = [n for n, lay in b.integers.items() if lay == "local"]
    kind = draw(st.sampled_from(["arith", "arith", "allreduce", "broadcast", "sum"]))
    if kind == "allreduce":
        op = draw(st.sampled_from(["sum", "max", "min", "prod"]))
        b.add_special(b.integers, name, "replicated",
                      f"allreduce({op}, {draw(st.sampled_from(locals_))})")
        if op == "sum":
            b.allreduces.append(name)
    elif kind == "broadcast":
        b.add_special(b.integers, name, "replicated",
                      f"broadcast({draw(st.sampled_from(locals_))}, 0)")
    elif kind == "sum":
        b.add_special(b.integers, name, "local",
                      f"sum({draw(st.sampled_from(locals_))}) + {draw(st.sampled_from(locals_))}")
    else:
        first = draw(st.sampled_from(list(b.integers)))
        second = draw(st.sampled_from([n for n in b.integers if _join(
            b.integers[n], b.integers[first]) in (b.integers[n], b.integers[first])]))
        layout = _join(b.integers[first], b.integers[second])
        b.add_special(b.integers, name, layout,
                      draw(st.sampled_from(INTEGER)).format(first, second))


def _compare(b: ProgramBuilder, draw, name: str) -> None:
    """A bool stage: a comparison of two floats, or of an integer with a literal."""
    if draw(st.booleans()):
        first = draw(st.sampled_from(list(b.integers)))
        layout, code = b.integers[first], f"{first} {draw(st.sampled_from(['<', '>=']))} 3"
    else:
        first = draw(st.sampled_from(b.of(("replicated", "sliced", "local"))))
        layout = b.values[first]
        compatible = {"replicated": ("replicated",), "sliced": ("replicated", "sliced"),
                      "local": ("replicated", "local")}[layout]
        second = draw(st.sampled_from(b.of(compatible) + ["a"]))
        layout = _join(layout, b.values.get(second, "replicated"))
        code = f"{first} {draw(st.sampled_from(['<', '<=', '>', '>=', '==', '!=']))} {second}"
    b.add_special(b.booleans, name, layout, code)


def _collective(b: ProgramBuilder, draw, name: str) -> None:
    kind = draw(st.sampled_from(["allreduce", "reducescatter", "allgather", "broadcast"]
                                + ["send"] * b.pipelined))
    if kind == "allgather" and b.of(("sliced",)):
        b.add(name, "replicated", f"allgather({draw(st.sampled_from(b.of(('sliced',))))})")
        b.gathers.append(name)
        return
    source = draw(st.sampled_from(b.of(("local",))))
    if kind == "broadcast":
        b.add(name, "replicated", f"broadcast({source}, {draw(st.sampled_from([0, 0, 1]))})")
        return
    if kind == "send":  # rank i of block b gets rank i of block b - 1 (two blocks)
        b.add(name, "local", f"send({source}, half, {draw(st.sampled_from([1, 3]))})")
        return
    if kind == "reducescatter":
        b.add(name, "sliced", f"reducescatter(sum, {source})")
        return
    op = draw(st.sampled_from(["sum", "sum", "max", "avg", "min", "prod"]))
    b.add(name, "replicated", f"allreduce({op}, {source})")
    b.allreduces.append(name)


def _update(b: ProgramBuilder, draw, name: str) -> bool:
    free = [s for s in b.states if s not in b.updated]
    if not free:
        return False
    state = draw(st.sampled_from(free))
    recent = [n for n in b.stages[-2:] if b.values[n] == "replicated" and n not in b.special]
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
    for index in range(draw(st.integers(2, 10))):
        name = f"t{index}"
        kind = draw(st.sampled_from(["elementwise", "elementwise", "collective", "update",
                                     "allreduce", "matrix", "integer", "compare"]))
        if kind == "allreduce" or (index == 0 and draw(st.booleans())):
            b.add(name, "replicated", f"allreduce(sum, {draw(st.sampled_from(b.of(('local',))))})")
            b.allreduces.append(name)
            continue
        if kind == "update" and _update(b, draw, name):
            continue
        if kind == "matrix" and _matrix(b, draw, name):
            continue
        generate = {"collective": _collective, "integer": _integer, "compare": _compare}
        generate.get(kind, _elementwise)(b, draw, name)
    outputs = draw(st.lists(st.sampled_from(b.stages), unique=True, max_size=3))
    body = "\n".join(b.lines + ([f"    output {', '.join(outputs)}"] if outputs else []))
    return f"program rand(N) {{\n{body}\n}}\n", b


def ranks_for(text: str, wanted: int) -> int:
    """The smallest world of at least `wanted` ranks that the program runs on: its broadcast
    roots must be ranks of it, and `blocks(2)` needs an even count."""
    ranks = max(wanted, 1 + max((int(root) for root in
                                 re.findall(r"broadcast\(\w+, (\d+)\)", text)), default=0))
    return ranks + ranks % 2 if "blocks(2)" in text else ranks


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


def _microbatch(state: ScheduleState, draw) -> str | None:
    """A run of 1 to 4 stages none of which is grouped yet (None where there is none)."""
    free = [name for name in state.stages if name not in state.grouped]
    if not free:
        return None
    start = draw(st.integers(0, len(free) - 1))
    run = free[start:start + draw(st.integers(1, 4))]
    state.grouped += run
    return f"microbatch({run[0]}, {run[-1]})"


def _tune(state: ScheduleState, draw) -> str:
    target = draw(st.sampled_from(state.grouped or state.stages))
    return f"tune({target}, chunks = {draw(st.integers(1, 5))})"


def _shardable(state: ScheduleState) -> list[str]:
    """States that no stage but their own update reads (the others are read whole)."""
    return [s for s in state.b.states
            if all(s not in read or code.startswith(f"update({s},")
                   for name, read in state.reads.items()
                   for code in [state.b.code.get(name, "")])]


DIRECTIVE_ORDER = ["split", "reorder", "shard", "fuse", "overlap", "microbatch", "tune"]
# What schedules draw unless told: micro-batches only where asked (the property test), so
# that the backends' random bundle (tests/e2e/random_bundle.py) keeps the programs that
# cover every feature in few builds; micro-batches run on the backends in their own tests.
DEFAULT_KINDS = tuple(k for k in DIRECTIVE_ORDER if k != "microbatch")


@st.composite
def schedules(draw, b: ProgramBuilder, kinds_drawn: tuple[str, ...] = DEFAULT_KINDS) -> str:
    """A schedule of 1 to 5 directives (of `kinds_drawn`) whose arguments are plausible for
    the program."""
    state = ScheduleState(b, list(b.stages), {k: set(v) for k, v in b.reads.items()},
                          list(b.gathers), list(b.allreduces))
    lines = []
    kinds = draw(st.lists(st.sampled_from(kinds_drawn), min_size=1, max_size=5))
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
        elif kind == "microbatch":
            line = _microbatch(state, draw)
            lines += [line] if line else []
        elif kind == "tune" and (state.grouped or not draw(st.integers(0, 4))):
            lines.append(_tune(state, draw))
    body = "\n".join(f"    {line}" for line in lines)
    return f"schedule random for rand {{\n{body}\n}}\n"
